/**
 * Bad input to the config functions gets a clear error naming what is wrong and where (or a warning), never a
 * crash, a silent fallback or a slow error path.
 */
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { parseJsonSource } from '../../src/config/json-source.js';
import { loadServiceConfig, loadServiceConfigAsync } from '../../src/config/load-service-config.js';
import { findMethodPolicy } from '../../src/config/method-policy.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import { LONGEST_CONFIG_TIMEOUT_MS } from '../../src/config/timer-limit.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;

function syntaxError(text: string): string {
  try {
    parseServiceConfig(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed');
}

describe('invalid JSON is reported in linear time', () => {
  it('ten million spaces: fast, at the end of the text', () => {
    const started = performance.now();
    const message = syntaxError(' '.repeat(1e7));
    expect(performance.now() - started).toBeLessThan(1500); // was 4.7 s and 422 MB
    expect(message).toBe(
      'invalid JSON at line 1, column 10000001 (position 10000000): expected a value, found the end of the text',
    );
  });

  it('long whitespace runs keep every position as written', () => {
    const gap = ' '.repeat(5000);
    const text = `{\n  "a":${gap}1,\t${gap}"b": [1,${gap}2,${gap}]\n}`;
    const result = parseJsonSource(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      const comma = text.lastIndexOf(',');
      expect(result.position).toEqual({ line: 2, column: comma - 2 + 1, offset: comma });
      expect(result.problem).toMatch(/trailing comma/);
    }
    const valid = parseJsonSource(`{\n${gap}"a":${gap}{"b  ${gap}c": 1}}`);
    expect(valid.ok && valid.locate(['a', `b  ${gap}c`], 'key')).toEqual({
      line: 2,
      column: 2 * gap.length + 6,
      offset: 2 * gap.length + 7,
    });
  });

  it('a syntax error after many lines names its line', () => {
    const message = syntaxError(`${'\n'.repeat(1e6)}x`);
    expect(message).toMatch(/^invalid JSON at line 1000001, column 1 \(position 1000000\)/);
  });
});

describe('a timeout longer than a grpc-js server can time', () => {
  it('is a warning naming the path, the limit and what happens', () => {
    expect(LONGEST_CONFIG_TIMEOUT_MS).toBe(2147482647);
    const text = JSON.stringify({ methodConfig: [{ name: [{ service: 's.S' }], timeout: '3000000s' }] });
    const { config, errors, warnings } = validateServiceConfig(text);
    expect(errors).toEqual([]);
    expect(config?.methodConfig[0]?.timeoutMs).toBe(3_000_000_000);
    expect(warnings).toEqual([
      {
        path: 'methodConfig[0].timeout',
        message:
          'is longer than a grpc-js server can time (2147482647 ms, about 24.8 days) and is held at that: calls under this entry time out after 2147482647 ms, not 3000000000 ms',
        line: 1,
        column: 56,
      },
    ]);
  });

  it('not at the limit itself, one millisecond over it is', () => {
    const at = { methodConfig: [{ name: [{}], timeout: '2147482.647s' }] };
    expect(validateServiceConfig(at).warnings).toEqual([]);
    const over = { methodConfig: [{ name: [{}], timeout: '2147482.648s' }] };
    expect(validateServiceConfig(over).warnings.map((w) => w.path)).toEqual(['methodConfig[0].timeout']);
  });
});

describe('what createChannelOptions rejects, the validator rejects too', () => {
  it.each([
    [
      { loadBalancingConfig: 'round_robin' },
      'loadBalancingConfig',
      'must be an array of {"policy_name": {...}} objects, got "round_robin"; write [{"round_robin": {}}]',
    ],
    [
      { loadBalancingConfig: [{ round_robin: {}, pick_first: {} }] },
      'loadBalancingConfig[0]',
      'must name exactly one load-balancing policy, got round_robin, pick_first (write one {"policy_name": {...}} object per policy, in order of preference)',
    ],
    [{ loadBalancingConfig: [5] }, 'loadBalancingConfig[0]', 'must be an object naming one policy, got 5'],
    [
      { methodConfig: [{ name: [{}], maxRequestMessageBytes: '99999999999999999999999' }] },
      'methodConfig[0].maxRequestMessageBytes',
      'must be a non-negative integer (a number or a decimal string), got "99999999999999999999999" (larger than 9007199254740991, which no message is)',
    ],
    [
      { methodConfig: [{ name: [{}], maxResponseBytes: -1 }] },
      'methodConfig[0].maxResponseBytes',
      'must be a non-negative integer (a number or a decimal string), got -1',
    ],
    [
      { methodConfig: [{ name: [{}], maxRequestMessageBytes: 10, maxRequestBytes: 20 }] },
      'methodConfig[0].maxRequestBytes',
      'is 20 but maxRequestMessageBytes says 10; give one limit',
    ],
  ])('%j', (config, path, message) => {
    expect(validateServiceConfig(config).errors).toEqual([{ path, message }]);
    expect(() => parseServiceConfig(config)).toThrow(`${path}: ${message}`);
    expect(() => createChannelOptions(config as object, { onWarning: () => {} })).toThrow(
      `${path}: ${message}`,
    );
  });

  it('located in JSON text; null is as absent', () => {
    const text = '{\n  "loadBalancingConfig": "round_robin"\n}';
    expect(validateServiceConfig(text).errors[0]).toMatchObject({ line: 2, column: 26 });
    expect(validateServiceConfig({ loadBalancingConfig: null }).errors).toEqual([]);
  });
});

describe('findMethodPolicy refuses what it cannot use', () => {
  const parsed = parseServiceConfig({ methodConfig: [{ name: [{}], retryPolicy }] });

  it('a copy of a parsed config, or a hand-made one', () => {
    expect(() => findMethodPolicy(structuredClone(parsed), '/a.B/C')).toThrow(ServiceConfigError);
    expect(() => findMethodPolicy(structuredClone(parsed), '/a.B/C')).toThrow(/a copy of one they returned/);
    const handMade = { methodConfig: [{ name: [{}], retryPolicy: { kind: 'retry', maxAttempts: 'lots' } }] };
    expect(() => findMethodPolicy(handMade as never, '/a.B/C')).toThrow(
      /methodConfig\[0\]\.retryPolicy\.maxAttempts: must be an integer greater than 1, got "lots"/,
    );
  });

  it('a config written as JSON is validated first, as createRetryInterceptor does', () => {
    const json = { methodConfig: [{ name: [{}], retryPolicy }] };
    expect(findMethodPolicy(json as never, '/a.B/C')?.policy.maxAttempts).toBe(3);
    expect(findMethodPolicy(parsed, '/a.B/C')?.matchedBy).toBe('default');
  });

  it('arguments of the wrong type, by name', () => {
    expect(() => findMethodPolicy(parsed, undefined as never)).toThrow(
      new TypeError(
        'findMethodPolicy: methodPath must be a method path such as "/pkg.Service/Method", got nothing',
      ),
    );
    expect(() => findMethodPolicy(null as never, '/a.B/C')).toThrow(
      new TypeError(
        'findMethodPolicy: config must be a config from parseServiceConfig or loadServiceConfig, got null',
      ),
    );
    expect(() => findMethodPolicy('{}' as never, '/a.B/C')).toThrow(
      /^findMethodPolicy: config must be .*, got "\{\}": parse the JSON text once with parseServiceConfig/,
    );
  });
});

describe('loadServiceConfig checks its argument', () => {
  it.each([undefined, 5, null])('%s', async (file) => {
    expect(() => loadServiceConfig(file as never)).toThrow(
      new TypeError(
        `loadServiceConfig: file must be the path of a JSON service config file, got ${file === undefined ? 'nothing' : String(file)}`,
      ),
    );
    await expect(loadServiceConfigAsync(file as never)).rejects.toThrow(
      /^loadServiceConfigAsync: file must be/,
    );
  });

  it('an object says what to call instead', () => {
    expect(() => loadServiceConfig({} as never)).toThrow(
      /got \{\}: for a config already in memory, call parseServiceConfig/,
    );
  });

  it('a file URL or a Buffer path says to pass the path as a string, not to call parseServiceConfig', async () => {
    // `new URL('./service-config.json', import.meta.url)` is how an ES module names a file beside it.
    const url = new URL('file:///etc/service-config.json');
    expect(() => loadServiceConfig(url as never)).toThrow(
      new TypeError(
        'loadServiceConfig: file must be the path of a JSON service config file, got a URL (file:///etc/service-config.json): pass fileURLToPath(url) from node:url',
      ),
    );
    await expect(loadServiceConfigAsync(url as never)).rejects.toThrow(
      /^loadServiceConfigAsync: file must be .*, got a URL \(file:\/\/\/etc\/service-config\.json\): pass fileURLToPath\(url\)/,
    );
    expect(() => loadServiceConfig(Buffer.from('service-config.json') as never)).toThrow(
      new TypeError(
        'loadServiceConfig: file must be the path of a JSON service config file, got a Buffer: pass the path as a string (buffer.toString())',
      ),
    );
  });
});

describe('ServiceConfigError constructed with nothing', () => {
  it('has a sensible message', () => {
    const error = new (ServiceConfigError as unknown as new () => ServiceConfigError)();
    expect(error.message).toBe('invalid service config');
    expect(error.path).toBe('');
    expect(error.detail).toBe('invalid service config');
    expect(error.errors).toEqual([{ path: '', message: 'invalid service config' }]);
  });
});

describe('a deeply nested value in a message', () => {
  it('shows its start, as a shallow one', () => {
    const deep = `{"methodConfig":${'['.repeat(100000)}${']'.repeat(100000)}}`;
    expect(() => parseServiceConfig(deep)).toThrow(
      `methodConfig[0]: must be an object, got ${'['.repeat(57)}...`,
    );
    expect(() => parseServiceConfig('{"methodConfig":[[[[[1]]]]]}')).toThrow(
      'methodConfig[0]: must be an object, got [[[[1]]]]',
    );
  });
});

describe('validateServiceConfig warns of an entry without a name, as check does', () => {
  it('missing or empty', () => {
    const { warnings } = validateServiceConfig({
      methodConfig: [{ retryPolicy }, { name: [], retryPolicy }, { name: [{}], retryPolicy }],
    });
    expect(warnings).toEqual([
      {
        path: 'methodConfig[0].name',
        message:
          'is missing, so the entry matches no call: this entry applies to nothing (name a service, or write [{}] for every method)',
      },
      {
        path: 'methodConfig[1].name',
        message:
          'is an empty list, which matches no call: this entry applies to nothing (name a service, or write [{}] for every method)',
      },
    ]);
  });
});

describe('duplicate keys', () => {
  it('are warned of at the one that counts, naming the line of the first', () => {
    const text = [
      '{',
      '  "methodConfig": [{',
      '    "name": [{}],',
      '    "timeout": "1s",',
      '    "timeout": "2s"',
      '  }],',
      '  "loadBalancingConfig": [],',
      '  "loadBalancingConfig": [{"round_robin": {}}]',
      '}',
    ].join('\n');
    const { config, warnings } = validateServiceConfig(text);
    expect(config?.methodConfig[0]?.timeoutMs).toBe(2000); // the last one wins, as in JSON.parse
    expect(warnings).toEqual([
      {
        path: 'methodConfig[0].timeout',
        message:
          'is written more than once in its object (first at line 4, column 5): JSON keeps only the last one, so the one at line 4 is ignored',
        line: 5,
        column: 5,
      },
      {
        path: 'loadBalancingConfig',
        message:
          'is written more than once in its object (first at line 7, column 3): JSON keeps only the last one, so the one at line 7 is ignored',
        line: 8,
        column: 3,
      },
    ]);
  });

  it('a key written three times is one warning; other objects may reuse a key', () => {
    const text =
      '{"methodConfig":[{"name":[{"service":"a.S"}],"timeout":"1s"},{"name":[{"service":"b.S"}],"timeout":"1s","timeout":"2s","timeout":"3s"}]}';
    const { warnings } = validateServiceConfig(text);
    const timeouts = [...text.matchAll(/"timeout"/g)].map((match) => (match.index ?? 0) + 1).slice(1);
    expect(warnings).toEqual([
      {
        path: 'methodConfig[1].timeout',
        // All three on line 1: the ignored copies are told apart by their columns.
        message: `is written 3 times in its object (first at line 1, column ${timeouts[0]}): JSON keeps only the last one, so the 2 before it, at line 1, column ${timeouts[0]} and line 1, column ${timeouts[1]}, are ignored`,
        line: 1,
        column: timeouts[2],
      },
    ]);
  });

  it('a key written four times on lines of its own names the three lines JSON ignores', () => {
    const text = [
      '{ "methodConfig": [{',
      '  "name": [{}],',
      '  "timeout": "1s",',
      '  "timeout": "2s",',
      '',
      '  "timeout": "3s",',
      '  "timeout": "4s"',
      '}] }',
    ].join('\n');
    const { config, warnings } = validateServiceConfig(text);
    expect(config?.methodConfig[0]?.timeoutMs).toBe(4000);
    expect(warnings).toEqual([
      {
        path: 'methodConfig[0].timeout',
        message:
          'is written 4 times in its object (first at line 3, column 3): JSON keeps only the last one, so the 3 before it, at lines 3, 4 and 6, are ignored',
        line: 7,
        column: 3,
      },
    ]);
  });

  it('nesting too deep to walk gives no warning, and no crash', () => {
    const text = `{"a":${'['.repeat(100000)}${']'.repeat(100000)},"a":1}`;
    expect(() => validateServiceConfig(text)).not.toThrow();
  });
});
