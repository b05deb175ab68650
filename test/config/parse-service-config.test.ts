import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { isNormalizedServiceConfig, parseServiceConfig } from '../../src/config/parse-service-config.js';
import { isServiceConfigError, type ServiceConfigError } from '../../src/config/service-config-error.js';
import type { ServiceConfig } from '../../src/config/types.js';

type Json = Record<string, unknown>;

function retryPolicy(overrides: Json = {}): Json {
  return {
    maxAttempts: 3,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
    ...overrides,
  };
}

function hedgingPolicy(overrides: Json = {}): Json {
  return { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'], ...overrides };
}

function withRetry(overrides: Json = {}): Json {
  return { methodConfig: [{ name: [{ service: 'pkg.Svc' }], retryPolicy: retryPolicy(overrides) }] };
}

function withHedging(overrides: Json = {}): Json {
  return { methodConfig: [{ name: [{ service: 'pkg.Svc' }], hedgingPolicy: hedgingPolicy(overrides) }] };
}

function withEntry(entry: Json): Json {
  return { methodConfig: [{ name: [{ service: 'pkg.Svc' }], ...entry }] };
}

function withThrottling(throttling: unknown): Json {
  return { retryThrottling: throttling };
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

const RP = 'methodConfig[0].retryPolicy';
const HP = 'methodConfig[0].hedgingPolicy';

describe('parseServiceConfig rejections', () => {
  it.each<[string, unknown, string, string | RegExp]>([
    // root and top-level fields
    ['root is an array', [], '', 'must be a JSON object'],
    ['root is JSON null', 'null', '', 'must be a JSON object'],
    ['root is a JSON string', '"x"', '', 'must be a JSON object'],
    ['methodConfig is an object', { methodConfig: {} }, 'methodConfig', 'must be an array'],
    ['methodConfig entry is a string', { methodConfig: ['x'] }, 'methodConfig[0]', 'must be an object'],
    [
      'loadBalancingPolicy is a number',
      { loadBalancingPolicy: 5 },
      'loadBalancingPolicy',
      'must be a string',
    ],
    // names
    ['name is an object', withEntry({ name: {} }), 'methodConfig[0].name', 'must be an array'],
    [
      'name item is a string',
      withEntry({ name: ['pkg.Svc'] }),
      'methodConfig[0].name[0]',
      'must be an object',
    ],
    [
      'service is a number',
      withEntry({ name: [{ service: 5 }] }),
      'methodConfig[0].name[0].service',
      'must be a string',
    ],
    [
      'method is a boolean',
      withEntry({ name: [{ service: 'pkg.Svc', method: true }] }),
      'methodConfig[0].name[0].method',
      'must be a string',
    ],
    [
      'method without service',
      withEntry({ name: [{ method: 'Get' }] }),
      'methodConfig[0].name[0]',
      'without a service',
    ],
    [
      'method with an empty service',
      withEntry({ name: [{ service: '', method: 'Get' }] }),
      'methodConfig[0].name[0]',
      'without a service',
    ],
    [
      'method with a null service',
      withEntry({ name: [{ service: null, method: 'Get' }] }),
      'methodConfig[0].name[0]',
      'without a service',
    ],
    [
      'the same method name in two entries',
      {
        methodConfig: [
          { name: [{ service: 'pkg.Svc', method: 'Get' }] },
          { name: [{ service: 'pkg.Other' }, { service: 'pkg.Svc', method: 'Get' }] },
        ],
      },
      'methodConfig[1].name[1]',
      'duplicate name pkg.Svc/Get, already used at methodConfig[0].name[0]',
    ],
    [
      'the same service name twice in one entry',
      withEntry({ name: [{ service: 'pkg.Svc' }, { service: 'pkg.Svc' }] }),
      'methodConfig[0].name[1]',
      'duplicate name pkg.Svc/*',
    ],
    [
      '{} twice in one entry',
      { methodConfig: [{ name: [{}, {}] }] },
      'methodConfig[0].name[1]',
      'duplicate name {}',
    ],
    [
      '{} and {service: null} in different entries',
      { methodConfig: [{ name: [{}] }, { name: [{ service: null, method: '' }] }] },
      'methodConfig[1].name[0]',
      'already used at methodConfig[0].name[0]',
    ],
    [
      '{service} and {service, method: ""}',
      { methodConfig: [{ name: [{ service: 'a.S' }] }, { name: [{ service: 'a.S', method: '' }] }] },
      'methodConfig[1].name[0]',
      'duplicate name a.S/*',
    ],
    [
      'both retryPolicy and hedgingPolicy',
      withEntry({ retryPolicy: retryPolicy(), hedgingPolicy: hedgingPolicy() }),
      'methodConfig[0]',
      'both retryPolicy and hedgingPolicy',
    ],
    // other per-entry fields
    [
      'waitForReady is a string',
      withEntry({ waitForReady: 'yes' }),
      'methodConfig[0].waitForReady',
      'true or false',
    ],
    ['timeout is negative', withEntry({ timeout: '-1s' }), 'methodConfig[0].timeout', 'must not be negative'],
    ['timeout without unit', withEntry({ timeout: '1' }), 'methodConfig[0].timeout', 'duration string'],
    [
      'maxRequestMessageBytes is negative',
      withEntry({ maxRequestMessageBytes: -1 }),
      'methodConfig[0].maxRequestMessageBytes',
      'non-negative integer',
    ],
    [
      'maxRequestMessageBytes is fractional',
      withEntry({ maxRequestMessageBytes: 1.5 }),
      'methodConfig[0].maxRequestMessageBytes',
      'non-negative integer',
    ],
    [
      'maxResponseMessageBytes is a non-decimal string',
      withEntry({ maxResponseMessageBytes: '1.5' }),
      'methodConfig[0].maxResponseMessageBytes',
      'non-negative integer',
    ],
    // retryPolicy
    ['retryPolicy is an array', withEntry({ retryPolicy: [] }), RP, 'must be an object'],
    [
      'maxAttempts 1',
      withRetry({ maxAttempts: 1 }),
      `${RP}.maxAttempts`,
      'must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    ],
    [
      'maxAttempts 0',
      withRetry({ maxAttempts: 0 }),
      `${RP}.maxAttempts`,
      'greater than 1, got 0; for a single attempt, leave the retryPolicy out',
    ],
    ['maxAttempts 2.5', withRetry({ maxAttempts: 2.5 }), `${RP}.maxAttempts`, /got 2\.5$/],
    [
      'maxAttempts as a string',
      withRetry({ maxAttempts: '3' }),
      `${RP}.maxAttempts`,
      'got "3"; did you mean 3 (a number, not a string)?',
    ],
    ['maxAttempts as a word', withRetry({ maxAttempts: 'three' }), `${RP}.maxAttempts`, /got "three"$/],
    ['maxAttempts missing', withRetry({ maxAttempts: undefined }), `${RP}.maxAttempts`, 'got nothing'],
    ['initialBackoff "0s"', withRetry({ initialBackoff: '0s' }), `${RP}.initialBackoff`, 'greater than 0'],
    ['initialBackoff "-1s"', withRetry({ initialBackoff: '-1s' }), `${RP}.initialBackoff`, 'greater than 0'],
    [
      'initialBackoff as a number',
      withRetry({ initialBackoff: 0.1 }),
      `${RP}.initialBackoff`,
      'duration string such as "0.1s" or "2s" (seconds, up to 9 decimals, ending in "s"), got 0.1; write it as a string: "0.1s"',
    ],
    ['initialBackoff missing', withRetry({ initialBackoff: undefined }), `${RP}.initialBackoff`, 'duration'],
    [
      'maxBackoff "1ms"',
      withRetry({ maxBackoff: '1ms' }),
      `${RP}.maxBackoff`,
      'got "1ms"; did you mean "0.001s"?',
    ],
    ['maxBackoff missing', withRetry({ maxBackoff: undefined }), `${RP}.maxBackoff`, 'duration'],
    ['backoffMultiplier 0', withRetry({ backoffMultiplier: 0 }), `${RP}.backoffMultiplier`, 'greater than 0'],
    ['backoffMultiplier -1', withRetry({ backoffMultiplier: -1 }), `${RP}.backoffMultiplier`, 'got -1'],
    ['backoffMultiplier "2"', withRetry({ backoffMultiplier: '2' }), `${RP}.backoffMultiplier`, 'a number'],
    [
      'backoffMultiplier missing',
      withRetry({ backoffMultiplier: undefined }),
      `${RP}.backoffMultiplier`,
      'number',
    ],
    [
      'retryableStatusCodes empty',
      withRetry({ retryableStatusCodes: [] }),
      `${RP}.retryableStatusCodes`,
      'non-empty array',
    ],
    [
      'retryableStatusCodes missing',
      withRetry({ retryableStatusCodes: undefined }),
      `${RP}.retryableStatusCodes`,
      'non-empty array',
    ],
    [
      'retryableStatusCodes is a string',
      withRetry({ retryableStatusCodes: 'UNAVAILABLE' }),
      `${RP}.retryableStatusCodes`,
      'non-empty array',
    ],
    [
      'retryableStatusCodes with an unknown name',
      withRetry({ retryableStatusCodes: ['UNAVAILABLE', 'NOPE'] }),
      `${RP}.retryableStatusCodes[1]`,
      'got "NOPE"',
    ],
    [
      'retryableStatusCodes with 17',
      withRetry({ retryableStatusCodes: [17] }),
      `${RP}.retryableStatusCodes[0]`,
      'status code',
    ],
    // hedgingPolicy
    ['hedgingPolicy is a string', withEntry({ hedgingPolicy: 'fast' }), HP, 'must be an object'],
    [
      'hedging maxAttempts 1',
      withHedging({ maxAttempts: 1 }),
      `${HP}.maxAttempts`,
      'greater than 1, got 1; for a single attempt, leave the hedgingPolicy out',
    ],
    ['hedging maxAttempts missing', withHedging({ maxAttempts: undefined }), `${HP}.maxAttempts`, 'integer'],
    [
      'hedgingDelay "-1s"',
      withHedging({ hedgingDelay: '-1s' }),
      `${HP}.hedgingDelay`,
      'must not be negative',
    ],
    ['hedgingDelay "1"', withHedging({ hedgingDelay: '1' }), `${HP}.hedgingDelay`, 'duration string'],
    [
      'nonFatalStatusCodes is a string',
      withHedging({ nonFatalStatusCodes: 'UNAVAILABLE' }),
      `${HP}.nonFatalStatusCodes`,
      'must be an array',
    ],
    [
      'nonFatalStatusCodes with 99',
      withHedging({ nonFatalStatusCodes: [14, 99] }),
      `${HP}.nonFatalStatusCodes[1]`,
      'got 99',
    ],
    // retryThrottling
    ['retryThrottling is a number', withThrottling(5), 'retryThrottling', 'must be an object'],
    ['maxTokens 0', withThrottling({ maxTokens: 0, tokenRatio: 0.1 }), 'retryThrottling.maxTokens', 'got 0'],
    [
      'maxTokens 1001',
      withThrottling({ maxTokens: 1001, tokenRatio: 0.1 }),
      'retryThrottling.maxTokens',
      '1000',
    ],
    [
      'maxTokens 1.5',
      withThrottling({ maxTokens: 1.5, tokenRatio: 0.1 }),
      'retryThrottling.maxTokens',
      'integer',
    ],
    [
      'maxTokens "10"',
      withThrottling({ maxTokens: '10', tokenRatio: 0.1 }),
      'retryThrottling.maxTokens',
      'integer',
    ],
    ['maxTokens missing', withThrottling({ tokenRatio: 0.1 }), 'retryThrottling.maxTokens', 'got nothing'],
    ['tokenRatio 0', withThrottling({ maxTokens: 10, tokenRatio: 0 }), 'retryThrottling.tokenRatio', 'got 0'],
    [
      'tokenRatio -1',
      withThrottling({ maxTokens: 10, tokenRatio: -1 }),
      'retryThrottling.tokenRatio',
      'greater than 0',
    ],
    [
      'tokenRatio "0.1"',
      withThrottling({ maxTokens: 10, tokenRatio: '0.1' }),
      'retryThrottling.tokenRatio',
      'number',
    ],
    ['tokenRatio missing', withThrottling({ maxTokens: 10 }), 'retryThrottling.tokenRatio', 'number'],
    [
      'tokenRatio that truncates to 0',
      withThrottling({ maxTokens: 10, tokenRatio: 0.0009 }),
      'retryThrottling.tokenRatio',
      'at least 0.001',
    ],
  ])('rejects %s', (_label, input, path, fragment) => {
    const raw = typeof input === 'string' ? input : JSON.stringify(input);
    const error = errorOf(() => parseServiceConfig(raw));
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
    expect(error.message).toMatch(fragment);
    if (typeof input === 'object') {
      // The same verdict for an already parsed object as for JSON text.
      expect(errorOf(() => parseServiceConfig(input as object)).message).toBe(error.message);
    }
  });
});

describe('parseServiceConfig acceptances', () => {
  it.each<[string, Json, (config: ServiceConfig) => void]>([
    ['an empty config', {}, (c) => expect(c).toEqual({ methodConfig: [] })],
    [
      'an entry with an empty name list (matches nothing)',
      { methodConfig: [{ name: [], retryPolicy: retryPolicy() }] },
      (c) => expect(c.methodConfig[0]?.name).toEqual([]),
    ],
    [
      'an entry without a name field',
      { methodConfig: [{ retryPolicy: retryPolicy() }] },
      (c) => expect(c.methodConfig[0]?.name).toEqual([]),
    ],
    [
      'empty service and method as the default name',
      { methodConfig: [{ name: [{ service: '', method: '' }] }] },
      (c) => expect(c.methodConfig[0]?.name).toEqual([{}]),
    ],
    [
      'null service and method as the default name',
      { methodConfig: [{ name: [{ service: null, method: null }] }] },
      (c) => expect(c.methodConfig[0]?.name).toEqual([{}]),
    ],
    [
      'an empty method as a service-wide name',
      {
        methodConfig: [
          {
            name: [
              { service: 'a.S', method: '' },
              { service: 'a.S', method: 'M' },
            ],
          },
        ],
      },
      (c) => expect(c.methodConfig[0]?.name).toEqual([{ service: 'a.S' }, { service: 'a.S', method: 'M' }]),
    ],
    [
      'the same service with different methods in different entries',
      {
        methodConfig: [
          { name: [{ service: 'a.S', method: 'A' }] },
          { name: [{ service: 'a.S', method: 'B' }] },
        ],
      },
      (c) => expect(c.methodConfig).toHaveLength(2),
    ],
    [
      'a full retry policy, normalized',
      withRetry({ retryableStatusCodes: ['UNAVAILABLE', 'deadline_exceeded', 8, 'Unavailable'] }),
      (c) =>
        expect(c.methodConfig[0]?.retryPolicy).toEqual({
          kind: 'retry',
          maxAttempts: 3,
          initialBackoffMs: 100,
          maxBackoffMs: 1000,
          backoffMultiplier: 2,
          retryableStatusCodes: [status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.RESOURCE_EXHAUSTED],
        }),
    ],
    [
      'maxAttempts above the limit (clamping happens at lookup)',
      withRetry({ maxAttempts: 100 }),
      (c) => expect(c.methodConfig[0]?.retryPolicy?.maxAttempts).toBe(100),
    ],
    [
      'a fractional backoffMultiplier and nanosecond durations',
      withRetry({ backoffMultiplier: 1.5, initialBackoff: '0.5s', maxBackoff: '1.000000001s' }),
      (c) => {
        expect(c.methodConfig[0]?.retryPolicy?.backoffMultiplier).toBe(1.5);
        expect(c.methodConfig[0]?.retryPolicy?.initialBackoffMs).toBe(500);
        expect(c.methodConfig[0]?.retryPolicy?.maxBackoffMs).toBeCloseTo(1000.000001, 9);
      },
    ],
    [
      'a hedging policy without hedgingDelay and nonFatalStatusCodes',
      withHedging({ hedgingDelay: undefined, nonFatalStatusCodes: undefined }),
      (c) =>
        expect(c.methodConfig[0]?.hedgingPolicy).toEqual({
          kind: 'hedging',
          maxAttempts: 3,
          hedgingDelayMs: 0,
          nonFatalStatusCodes: [],
        }),
    ],
    [
      'hedgingDelay "0s" and an empty nonFatalStatusCodes',
      withHedging({ hedgingDelay: '0s', nonFatalStatusCodes: [] }),
      (c) => {
        expect(c.methodConfig[0]?.hedgingPolicy?.hedgingDelayMs).toBe(0);
        expect(c.methodConfig[0]?.hedgingPolicy?.nonFatalStatusCodes).toEqual([]);
      },
    ],
    [
      'an entry without a policy',
      withEntry({}),
      (c) => {
        expect(c.methodConfig[0]?.retryPolicy).toBeUndefined();
        expect(c.methodConfig[0]?.hedgingPolicy).toBeUndefined();
      },
    ],
    [
      'waitForReady, timeout and message size limits',
      withEntry({
        waitForReady: true,
        timeout: '1.5s',
        maxRequestMessageBytes: '1024',
        maxResponseMessageBytes: 0,
      }),
      (c) => {
        expect(c.methodConfig[0]?.waitForReady).toBe(true);
        expect(c.methodConfig[0]?.timeoutMs).toBe(1500);
      },
    ],
    ['timeout "0s"', withEntry({ timeout: '0s' }), (c) => expect(c.methodConfig[0]?.timeoutMs).toBe(0)],
    [
      'unknown fields anywhere',
      {
        healthCheckConfig: { serviceName: 'x' },
        loadBalancingPolicy: 'round_robin',
        loadBalancingConfig: [{ round_robin: {} }],
        methodConfig: [
          { name: [{ service: 'a.S', extra: 1 }], retryPolicy: retryPolicy({ futureField: true }) },
        ],
        retryThrottling: { maxTokens: 10, tokenRatio: 0.1, comment: 'x' },
      },
      (c) => expect(c.methodConfig[0]?.retryPolicy?.maxAttempts).toBe(3),
    ],
    [
      'null optional fields as absent',
      { methodConfig: null, retryThrottling: null, loadBalancingPolicy: null },
      (c) => expect(c).toEqual({ methodConfig: [] }),
    ],
    [
      'maxTokens at the bounds 1 and 1000',
      { retryThrottling: { maxTokens: 1000, tokenRatio: 1 } },
      (c) => expect(c.retryThrottling).toEqual({ maxTokens: 1000, tokenRatio: 1 }),
    ],
  ])('accepts %s', (_label, input, check) => {
    check(parseServiceConfig(input));
    check(parseServiceConfig(JSON.stringify(input)));
  });

  it.each([
    [0.5466, 0.546],
    [0.1, 0.1],
    [0.57, 0.57],
    [0.29, 0.29],
    [0.001, 0.001],
    [2.9999, 2.999],
    [1, 1],
    [123.4567, 123.456],
  ])('truncates tokenRatio %s to %s', (tokenRatio, expected) => {
    expect(
      parseServiceConfig({ retryThrottling: { maxTokens: 1, tokenRatio } }).retryThrottling?.tokenRatio,
    ).toBe(expected);
  });

  it('returns a frozen, branded config and passes a parsed config through', () => {
    const config = parseServiceConfig(withRetry());
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.methodConfig[0]?.retryPolicy)).toBe(true);
    expect(isNormalizedServiceConfig(config)).toBe(true);
    expect(isNormalizedServiceConfig(withRetry())).toBe(false);
    expect(parseServiceConfig(config)).toBe(config);
    expect(Object.keys(config)).toEqual(['methodConfig']);
  });

  it('accepts a leading byte-order mark in JSON text', () => {
    expect(parseServiceConfig('\uFEFF{"methodConfig": []}')).toEqual({ methodConfig: [] });
  });
});

describe('parseServiceConfig JSON syntax errors', () => {
  it.each<[string, string, number, number, number, string]>([
    ['a missing value', '{"a":}', 1, 6, 5, 'expected a value, found "}"'],
    [
      'an unterminated object',
      '{"a":1',
      1,
      7,
      6,
      'expected "," or "}" after a property value, found the end',
    ],
    ['empty text', '', 1, 1, 0, 'expected a value, found the end of the text'],
    ['a missing colon on line 2', '{\n  "a" 1}', 2, 7, 8, 'expected ":"'],
    [
      'a trailing comma in an array, at the comma',
      '{\n  "methodConfig": [\n    {},\n  ]\n}',
      3,
      7,
      28,
      'a trailing comma: JSON allows no "," after the last array element; remove it',
    ],
    [
      'a trailing comma in an object',
      '{"a": 1, }',
      1,
      8,
      7,
      'a trailing comma: JSON allows no "," after the last property; remove it',
    ],
    ['a comma with nothing before it', '{,}', 1, 2, 1, 'found ","'],
    ['text after the value', '{"a":1} x', 1, 9, 8, 'after the end of the JSON value'],
    ['a leading zero', '{"a":01}', 1, 7, 6, 'found "1"'],
    ['a single-quoted name', "{'a':1}", 1, 2, 1, 'found "\'a\'"'],
    ['an unterminated string', '{"a":"x', 1, 6, 5, 'missing closing quote'],
    ['a bad escape', '{"a":"\\x"}', 1, 6, 5, 'invalid escape'],
    ['a comment', '{\n// no\n}', 2, 1, 2, 'comments are not allowed'],
    ['a raw control character', '{"a":"\u0001"}', 1, 6, 5, 'must be escaped'],
  ])('names the position of %s', (_label, text, line, column, position, fragment) => {
    const error = errorOf(() => parseServiceConfig(text));
    expect(error.path).toBe('');
    expect(error.message).toContain(`line ${line}, column ${column} (position ${position})`);
    expect(error.message).toContain(fragment);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });
});

describe('parseServiceConfig JSON syntax errors about a character that looks like another', () => {
  // Text pasted from a web page or a word processor: the character shown as found must not look like a space or a
  // quote JSON allows, or the error reads as if that were the mistake.
  it.each<[string, string, string]>([
    ['a no-break space between tokens', '{"a": 1,\u00a0"b": 2}', 'a no-break space (U+00A0)'],
    ['a no-break space as indentation', '{\n\u00a0\u00a0"b": 2}', 'a no-break space (U+00A0)'],
    ['a zero-width space', '{"a": 1,\u200b"b": 2}', 'a zero-width space (U+200B)'],
    ['an ideographic space', '{"a": 1,\u3000"b": 2}', 'an ideographic space (U+3000)'],
    ['a byte-order mark inside the text', '{"a": 1,\ufeff"b": 2}', 'a byte-order mark (U+FEFF)'],
    ['a no-break space after the value', '{"a": 1}\u00a0', 'a no-break space (U+00A0)'],
  ])('names %s by its code point and says which whitespace JSON allows', (_label, text, named) => {
    const error = errorOf(() => parseServiceConfig(text));
    expect(error.message).toContain(named);
    expect(error.message).not.toContain('"\u00a0"');
    expect(error.message).toContain('JSON allows only spaces, tabs and line breaks between tokens');
  });

  it('says a curly quote is not a JSON quote', () => {
    const error = errorOf(() => parseServiceConfig('{\u201cb\u201d: 2}'));
    expect(error.message).toContain('line 1, column 2 (position 1)');
    expect(error.message).toContain(
      'found a curly quote (U+201C): JSON names and strings take straight double quotes (")',
    );
  });
});

describe('a number too large for a double (1e400 reads as Infinity)', () => {
  const policy =
    '"retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1e400, "retryableStatusCodes": [14]}';
  it.each([
    [
      'backoffMultiplier',
      `{"methodConfig": [{"name": [{}], ${policy}}]}`,
      'methodConfig[0].retryPolicy.backoffMultiplier',
    ],
    [
      'tokenRatio',
      '{"retryThrottling": {"maxTokens": 10, "tokenRatio": 1e400}}',
      'retryThrottling.tokenRatio',
    ],
  ])('in %s is refused as not finite, not as "not greater than 0"', (_field, text, path) => {
    // "must be a number greater than 0, got Infinity" contradicts itself: Infinity is greater than 0.
    expect(errorOf(() => parseServiceConfig(text)).message).toBe(
      `${path}: must be a finite number greater than 0, got Infinity`,
    );
  });
});

describe('waitForReady written as text', () => {
  it('says which boolean it likely meant', () => {
    expect(() =>
      parseServiceConfig({ methodConfig: [{ name: [{ service: 'a.B' }], waitForReady: 'true' }] }),
    ).toThrow(
      'methodConfig[0].waitForReady: must be true or false, got "true"; did you mean true (a boolean, not a string)?',
    );
  });
});
