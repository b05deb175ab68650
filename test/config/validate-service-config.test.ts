import { describe, expect, it } from 'vitest';
import { parseCallPolicy, parseServiceConfig } from '../../src/config/parse-service-config.js';
import { isServiceConfigError, type ServiceConfigError } from '../../src/config/service-config-error.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';

/** 1-based column of the first `token` on 1-based `line` of `text`, counted independently of the parser. */
function columnOf(text: string, line: number, token: string): number {
  const index = (text.split('\n')[line - 1] ?? '').indexOf(token);
  if (index < 0) {
    throw new Error(`test helper: no ${token} on line ${line}`);
  }
  return index + 1;
}

function errorOf(fn: () => unknown): ServiceConfigError {
  try {
    fn();
  } catch (error) {
    if (isServiceConfigError(error)) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a ServiceConfigError, nothing was thrown');
}

/** Four wrong types in one file, on known lines. */
const FOUR_ERRORS = `{
  "methodConfig": [
    {
      "name": [{ "service": "pkg.Svc" }],
      "retryPolicy": {
        "maxAttempts": "3",
        "initialBackoff": 0.1,
        "maxBackoff": "1s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE", "NOPE"]
      }
    }
  ],
  "retryThrottling": { "tokenRatio": 0.1 }
}`;

describe('every error at once', () => {
  it('lists every problem with its path, line and column (the value; a missing field at its parent)', () => {
    const result = validateServiceConfig(FOUR_ERRORS);
    expect(result.config).toBeUndefined();
    expect(result.errors.map(({ path, line, column }) => ({ path, line, column }))).toEqual([
      { path: 'methodConfig[0].retryPolicy.maxAttempts', line: 6, column: columnOf(FOUR_ERRORS, 6, '"3"') },
      {
        path: 'methodConfig[0].retryPolicy.initialBackoff',
        line: 7,
        column: columnOf(FOUR_ERRORS, 7, '0.1'),
      },
      {
        path: 'methodConfig[0].retryPolicy.retryableStatusCodes[1]',
        line: 10,
        column: columnOf(FOUR_ERRORS, 10, '"NOPE"'),
      },
      // maxTokens is missing: located at the retryThrottling object
      { path: 'retryThrottling.maxTokens', line: 14, column: columnOf(FOUR_ERRORS, 14, '{ "tokenRatio"') },
    ]);
    expect(result.errors[0]?.message).toBe(
      'must be an integer greater than 1, got "3"; did you mean 3 (a number, not a string)?',
    );
    expect(result.errors[3]?.message).toContain('got nothing');
  });

  it.each([
    ['\\n', '\n'],
    ['\\r\\n', '\r\n'],
    ['a lone \\r (JSON whitespace; editors and jsonc-parser break the line there)', '\r'],
  ])('counts lines ended by %s', (_label, eol) => {
    const text = ['{', '  "methodConfig": [{', '    "name": [{}],', '    "timeout": "5"', '  }]', '}'].join(
      eol,
    );
    expect(validateServiceConfig(text).errors).toEqual([
      expect.objectContaining({ path: 'methodConfig[0].timeout', line: 4, column: 16 }),
    ]);
    const syntax = `{${eol}  "a": 1,${eol}  "b" 2${eol}}`;
    expect(validateServiceConfig(syntax).errors).toEqual([
      expect.objectContaining({
        line: 3,
        column: 7,
        message: expect.stringMatching(/^invalid JSON at line 3, column 7 /),
      }),
    ]);
    const twice = `{${eol}"methodConfig": [],${eol}"methodConfig": []}`;
    expect(validateServiceConfig(twice).warnings).toEqual([
      expect.objectContaining({
        line: 3,
        column: 1,
        message: expect.stringContaining('(first at line 2, column 1)'),
      }),
    ]);
  });

  it("a retryPolicy without maxAttempts (as googleapis' configs for Google's API clients write it) says why it is needed", () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'pkg.Svc' }],
          timeout: '60s',
          retryPolicy: {
            initialBackoff: '0.1s',
            maxBackoff: '60s',
            backoffMultiplier: 1.3,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const error = errorOf(() => parseServiceConfig(config));
    expect(error.errors).toHaveLength(1);
    expect(error.message).toBe(
      'methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1, got nothing; A6 requires it (grpc-js rejects such a config too). ' +
        "Service configs written for Google's generated API clients (googleapis' *_grpc_service_config.json) leave it out, as those clients bound retries by the timeout instead: " +
        'add "maxAttempts" (A6 caps it at 5)',
    );
    // a hedging policy is not such a config's: no hint there
    const hedging = { methodConfig: [{ name: [{}], hedgingPolicy: { hedgingDelay: '0.1s' } }] };
    expect(errorOf(() => parseServiceConfig(hedging)).message).toBe(
      'methodConfig[0].hedgingPolicy.maxAttempts: must be an integer greater than 1, got nothing',
    );
  });

  it('throws one ServiceConfigError holding the list; path and the first message line name the first', () => {
    const error = errorOf(() => parseServiceConfig(FOUR_ERRORS));
    expect(error.errors).toHaveLength(4);
    expect(error.path).toBe('methodConfig[0].retryPolicy.maxAttempts');
    expect(error.detail).toBe(
      'must be an integer greater than 1, got "3"; did you mean 3 (a number, not a string)?',
    );
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(
      'methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1, got "3"; did you mean 3 (a number, not a string)?',
    );
    expect(lines[1]).toBe('  and 3 more:');
    expect(lines[2]).toMatch(
      /^ {4}methodConfig\[0\]\.retryPolicy\.initialBackoff: must be a duration string/,
    );
    expect(lines).toHaveLength(5);
    expect(Object.isFrozen(error.errors)).toBe(true);
  });

  it('gives the same errors, without positions, for a parsed object', () => {
    const fromText = validateServiceConfig(FOUR_ERRORS).errors;
    const fromObject = validateServiceConfig(JSON.parse(FOUR_ERRORS) as object).errors;
    expect(fromObject).toEqual(fromText.map(({ path, message }) => ({ path, message })));
  });

  it('keeps a single-error message exactly as before', () => {
    const error = errorOf(() => parseServiceConfig({ retryThrottling: { maxTokens: 0, tokenRatio: 1 } }));
    expect(error.message).toBe(
      'retryThrottling.maxTokens: must be an integer greater than 0 and at most 1000, got 0',
    );
    expect(error.errors).toEqual([{ path: 'retryThrottling.maxTokens', message: error.detail }]);
  });

  it('validates both policies of an entry that has both, and every entry', () => {
    const result = validateServiceConfig({
      methodConfig: [
        { name: [{ service: 'a.S' }], retryPolicy: { maxAttempts: 1 }, hedgingPolicy: { maxAttempts: 1 } },
        { name: [{ service: 'a.S' }], timeout: 'soon', waitForReady: 1 },
      ],
    });
    expect(result.errors.map((e) => e.path)).toEqual([
      'methodConfig[0]',
      'methodConfig[0].retryPolicy.maxAttempts',
      'methodConfig[0].retryPolicy.initialBackoff',
      'methodConfig[0].retryPolicy.maxBackoff',
      'methodConfig[0].retryPolicy.backoffMultiplier',
      'methodConfig[0].retryPolicy.retryableStatusCodes',
      'methodConfig[0].hedgingPolicy.maxAttempts',
      'methodConfig[1].name[0]',
      'methodConfig[1].timeout',
      'methodConfig[1].waitForReady',
    ]);
  });

  it('locates a duplicate key at the occurrence JSON.parse keeps (the last)', () => {
    const text = '{"retryThrottling": {"maxTokens": 1, "tokenRatio": 1,\n "maxTokens": 0}}';
    expect(validateServiceConfig(text).errors).toEqual([
      expect.objectContaining({ path: 'retryThrottling.maxTokens', line: 2, column: columnOf(text, 2, '0') }),
    ]);
  });

  it('reports a JSON syntax error as one error with its position', () => {
    const result = validateServiceConfig('{\n  "methodConfig": [}\n');
    expect(result.errors).toEqual([
      { path: '', line: 2, column: 20, message: expect.stringContaining('line 2, column 20 (position 21)') },
    ]);
  });

  it('lists every problem of a per-call policy under its prefix', () => {
    const error = errorOf(() => parseCallPolicy({ retryPolicy: { maxAttempts: 2, initialBackoff: '1s' } }));
    expect(error.errors.map((e) => e.path)).toEqual([
      'policy.retryPolicy.maxBackoff',
      'policy.retryPolicy.backoffMultiplier',
      'policy.retryPolicy.retryableStatusCodes',
    ]);
    expect(errorOf(() => parseCallPolicy({ hedgingPolicy: 5 }, '')).path).toBe('hedgingPolicy');
  });
});

describe('perAttemptRecvTimeout', () => {
  const base = { maxAttempts: 3, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2 };
  const withPolicy = (policy: object) => ({
    methodConfig: [{ name: [{ service: 'a.S' }], retryPolicy: policy }],
  });

  it.each([
    ['"0.3s"', '0.3s', 300],
    ['"1.500s"', '1.500s', 1500],
    ['"2s"', '2s', 2000],
  ])('parses %s into perAttemptRecvTimeoutMs', (_label, value, ms) => {
    const config = parseServiceConfig(
      withPolicy({ ...base, retryableStatusCodes: ['UNAVAILABLE'], perAttemptRecvTimeout: value }),
    );
    expect(config.methodConfig[0]?.retryPolicy?.perAttemptRecvTimeoutMs).toBe(ms);
  });

  it('lets retryableStatusCodes be empty or absent when present (C-core rule)', () => {
    for (const codes of [{ retryableStatusCodes: [] }, {}, { retryableStatusCodes: null }]) {
      const policy = parseServiceConfig(withPolicy({ ...base, ...codes, perAttemptRecvTimeout: '1s' }))
        .methodConfig[0]?.retryPolicy;
      expect(policy?.retryableStatusCodes).toEqual([]);
      expect(policy?.perAttemptRecvTimeoutMs).toBe(1000);
    }
  });

  it('is absent from the normalized policy when not configured (null too)', () => {
    const policy = parseServiceConfig(
      withPolicy({ ...base, retryableStatusCodes: [14], perAttemptRecvTimeout: null }),
    ).methodConfig[0]?.retryPolicy;
    expect(policy !== undefined && 'perAttemptRecvTimeoutMs' in policy).toBe(false);
  });

  it.each<[string, unknown, string]>([
    ['zero', '0s', 'greater than 0'],
    ['negative', '-1s', 'greater than 0'],
    ['a number', 1, 'duration string'],
  ])('rejects a %s perAttemptRecvTimeout', (_label, value, fragment) => {
    const error = errorOf(() =>
      parseServiceConfig(withPolicy({ ...base, retryableStatusCodes: [14], perAttemptRecvTimeout: value })),
    );
    expect(error.path).toBe('methodConfig[0].retryPolicy.perAttemptRecvTimeout');
    expect(error.detail).toContain(fragment);
  });

  it('still rejects an empty retryableStatusCodes without it, saying when it may be empty', () => {
    const error = errorOf(() => parseServiceConfig(withPolicy({ ...base, retryableStatusCodes: [] })));
    expect(error.path).toBe('methodConfig[0].retryPolicy.retryableStatusCodes');
    expect(error.detail).toContain('only with a perAttemptRecvTimeout');
  });

  it('rejects a bad code list even with it', () => {
    const error = errorOf(() =>
      parseServiceConfig(
        withPolicy({ ...base, retryableStatusCodes: ['NOPE'], perAttemptRecvTimeout: '1s' }),
      ),
    );
    expect(error.path).toBe('methodConfig[0].retryPolicy.retryableStatusCodes[0]');
  });
});

describe('unknown fields', () => {
  it('are warnings at every level, located at the key, with "did you mean" for near misses', () => {
    const text = `{
  "$schema": "./schema.json",
  "methodconfig": [],
  "methodConfig": [
    {
      "name": [{ "service": "a.S", "methd": "M" }],
      "retry_policy": {},
      "timout": "1s",
      "hedgingPolicy": { "maxAttempts": 2, "hedgingDelay": "0s", "nonFatalCodes": [] }
    }
  ],
  "retryThrottling": { "maxTokens": 1, "tokenRatio": 1, "colour": "red" },
  "healthCheckConfig": { "serviceName": "", "servicename": "" },
  "loadBalancingConfig": [{ "round_robin": { "anything": 1 } }],
  "connectionScaling": { "maxConnectionsPerSubchannel": 2 }
}`;
    const result = validateServiceConfig(text);
    expect(result.errors).toEqual([]);
    expect(result.config?.methodConfig).toHaveLength(1);
    expect(result.warnings).toEqual([
      {
        path: 'methodconfig',
        line: 3,
        column: columnOf(text, 3, '"methodconfig"'),
        message: 'unknown field "methodconfig" is ignored; did you mean "methodConfig"?',
      },
      {
        path: 'methodConfig[0].name[0].methd',
        line: 6,
        column: columnOf(text, 6, '"methd"'),
        message: 'unknown field "methd" is ignored; did you mean "method"?',
      },
      {
        path: 'methodConfig[0].retry_policy',
        line: 7,
        column: columnOf(text, 7, '"retry_policy"'),
        message: 'unknown field "retry_policy" is ignored; did you mean "retryPolicy"?',
      },
      {
        path: 'methodConfig[0].timout',
        line: 8,
        column: columnOf(text, 8, '"timout"'),
        message: 'unknown field "timout" is ignored; did you mean "timeout"?',
      },
      {
        path: 'methodConfig[0].hedgingPolicy.nonFatalCodes',
        line: 9,
        column: columnOf(text, 9, '"nonFatalCodes"'),
        message: 'unknown field "nonFatalCodes" is ignored; did you mean "nonFatalStatusCodes"?',
      },
      {
        path: 'retryThrottling.colour',
        line: 12,
        column: columnOf(text, 12, '"colour"'),
        message: 'unknown field "colour" is ignored',
      },
      {
        path: 'healthCheckConfig.servicename',
        line: 13,
        column: columnOf(text, 13, '"servicename"'),
        message: 'unknown field "servicename" is ignored; did you mean "serviceName"?',
      },
    ]);
  });

  it("do not include grpc-js's spelling of the message size limits, which are read and validated", () => {
    // createChannelOptions turns maxRequestBytes/maxResponseBytes into channel options, and a bad value is an error:
    // a warning that they are "ignored" (with a "did you mean", which the interceptor repeats at run time) is untrue.
    const config = { methodConfig: [{ name: [{}], maxRequestBytes: 1000, maxResponseBytes: '2000' }] };
    expect(validateServiceConfig(config).warnings).toEqual([]);
    expect(
      validateServiceConfig({ methodConfig: [{ name: [{}], maxRequestBytes: -1 }] }).errors.map(
        (e) => e.path,
      ),
    ).toEqual(['methodConfig[0].maxRequestBytes']);
  });

  it('are still ignored by parseServiceConfig', () => {
    expect(parseServiceConfig('{"methodconfig": [{"name": [{}]}]}')).toEqual({ methodConfig: [] });
  });

  it('are reported next to errors, and quoted in the path when not identifiers', () => {
    const result = validateServiceConfig({ 'retry policy': 1, retryThrottling: 3 });
    expect(result.errors.map((e) => e.path)).toEqual(['retryThrottling']);
    expect(result.warnings.map((w) => w.path)).toEqual(['["retry policy"]']);
  });
});

describe('a missing field written under a near name', () => {
  it('the error names what was written, in parseServiceConfig and validateServiceConfig alike', () => {
    const config = {
      methodConfig: [
        {
          name: [{}],
          retryPolicy: {
            maxAttempts: 2,
            initialBackoff: '1s',
            maxBackoff: '1s',
            backoffMultiplier: 2,
            retryableStatusCode: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const hint = '(the config has "retryableStatusCode": a misspelling?)';
    expect(validateServiceConfig(config).errors).toEqual([
      expect.objectContaining({
        path: 'methodConfig[0].retryPolicy.retryableStatusCodes',
        message: expect.stringContaining(hint),
      }),
    ]);
    expect(() => parseServiceConfig(config)).toThrow(hint);
    // A field present and wrong gets no such hint.
    const wrong = structuredClone(config) as unknown as {
      methodConfig: { retryPolicy: Record<string, unknown> }[];
    };
    wrong.methodConfig[0]!.retryPolicy.retryableStatusCodes = [];
    expect(validateServiceConfig(wrong).errors.map((e) => e.message)).toEqual([
      expect.not.stringContaining('misspelling'),
    ]);
  });
});
