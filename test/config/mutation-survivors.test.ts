/**
 * Behaviour of the config parsing that mutation testing (stryker, src/config, stop 47) found no test pinned down:
 * malformed method paths, which optional fields a policy match carries, the cause of a syntax error, the paths of
 * a per-call policy's errors, and what counts as a normalized config.
 */
import { describe, expect, it } from 'vitest';
import { readDuration } from '../../src/config/duration.js';
import { createMethodConfigLookup, findMethodPolicy } from '../../src/config/method-policy.js';
import { deepFreeze, isNormalizedServiceConfig } from '../../src/config/normalized-config.js';
import { parseCallPolicy, parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';

const retryPolicy = {
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const config = parseServiceConfig({
  methodConfig: [
    { name: [{ service: 'pkg.Svc' }], retryPolicy: { ...retryPolicy, maxAttempts: 2 } },
    { name: [{}], retryPolicy, timeout: '1s' },
  ],
});

describe('a method path without a service/method shape', () => {
  it.each(['/pkg.Svc/', 'pkg.Svc/', '/Method', '/', ''])('%j matches only the default entry', (path) => {
    expect(findMethodPolicy(config, path)?.matchedBy).toBe('default');
    expect(createMethodConfigLookup(config)(path)?.policy?.maxAttempts).toBe(3);
  });

  it('while a well-formed path of the service matches its entry', () => {
    expect(findMethodPolicy(config, '/pkg.Svc/Get')?.matchedBy).toBe('service');
  });
});

describe('a policy match', () => {
  it('carries timeoutMs and waitForReady only when its entry sets them', () => {
    const withBoth = parseServiceConfig({
      methodConfig: [{ name: [{}], retryPolicy, timeout: '2s', waitForReady: false }],
    });
    expect(findMethodPolicy(withBoth, '/a.B/C')).toMatchObject({ timeoutMs: 2000, waitForReady: false });
    const without = findMethodPolicy(config, '/pkg.Svc/Get');
    expect(without).toBeDefined();
    expect(Object.keys(without ?? {})).not.toContain('timeoutMs');
    expect(Object.keys(without ?? {})).not.toContain('waitForReady');
  });
});

describe('parseServiceConfig', () => {
  it("keeps JSON.parse's error as the cause of a syntax error, and none for a config that parses", () => {
    const syntax = errorOf(() => parseServiceConfig('{"methodConfig": [}'));
    expect(syntax.cause).toBeInstanceOf(SyntaxError);
    const invalid = errorOf(() => parseServiceConfig({ methodConfig: 5 }));
    expect(invalid.cause).toBeUndefined();
  });
});

describe('parseCallPolicy', () => {
  it('returns a frozen policy, and names nested problems under its prefix, or none', () => {
    const policy = parseCallPolicy({ retryPolicy });
    expect(policy.maxAttempts).toBe(3);
    expect(Object.isFrozen(policy)).toBe(true);
    const bad = { retryPolicy: { ...retryPolicy, retryableStatusCodes: ['UNAVAILABLE', 'NOPE'] } };
    expect(errorOf(() => parseCallPolicy(bad)).path).toBe('policy.retryPolicy.retryableStatusCodes[1]');
    expect(errorOf(() => parseCallPolicy(bad, 'calls.x')).path).toBe(
      'calls.x.retryPolicy.retryableStatusCodes[1]',
    );
    expect(errorOf(() => parseCallPolicy(bad, '')).path).toBe('retryPolicy.retryableStatusCodes[1]');
  });

  it('refuses input that holds no policy', () => {
    for (const input of [{}, null, 5, { timeout: '1s' }]) {
      expect(() => parseCallPolicy(input)).toThrow(ServiceConfigError);
    }
  });
});

describe('isNormalizedServiceConfig and deepFreeze', () => {
  it('is false for anything not branded, null and primitives included', () => {
    expect(isNormalizedServiceConfig(config)).toBe(true);
    for (const value of [null, undefined, 0, 'x', {}, { methodConfig: [] }]) {
      expect(isNormalizedServiceConfig(value)).toBe(false);
    }
  });

  it('recognizes the brand of another copy of the package (a global symbol)', () => {
    const other = {};
    Object.defineProperty(other, Symbol.for('grpc-retry-hedging.normalized-service-config'), { value: true });
    expect(isNormalizedServiceConfig(other)).toBe(true);
  });

  it('freezes what is reachable, and leaves primitives and null as they are', () => {
    const value = { a: { b: [1, { c: 2 }] }, n: null };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze(3)).toBe(3);
  });
});

describe('durations', () => {
  it('refuse a fraction without whole seconds, text after the s, a lone s and non-strings', () => {
    expect(readDuration('2s')).toBe(2000);
    expect(readDuration('-0.25s')).toBe(-250);
    for (const value of ['.5s', '-.25s', '1sx', 's', '-s', '1', 1, null, ['1s']]) {
      expect(readDuration(value)).toMatch(/^must be a duration string/);
    }
  });
});

describe('service-config values at their bounds', () => {
  const throttling = (tokenRatio: number) => ({ retryThrottling: { maxTokens: 10, tokenRatio } });
  it('refuse a tokenRatio of 0 (a throttle that never refills), and take the smallest step above it', () => {
    expect(errorOf(() => parseServiceConfig(throttling(0))).path).toBe('retryThrottling.tokenRatio');
    expect(parseServiceConfig(throttling(0.001)).retryThrottling?.tokenRatio).toBe(0.001);
  });

  it.each([-1, 1.5, '1.5', '-1', 'x', true])('refuse a message-size limit of %j', (value) => {
    const entry = { name: [{}], maxRequestMessageBytes: value };
    expect(errorOf(() => parseServiceConfig({ methodConfig: [entry] })).path).toBe(
      'methodConfig[0].maxRequestMessageBytes',
    );
  });

  it('take 0 and decimal strings as message-size limits', () => {
    for (const value of [0, '0', '1024']) {
      expect(() =>
        parseServiceConfig({ methodConfig: [{ name: [{}], maxRequestMessageBytes: value }] }),
      ).not.toThrow();
    }
  });
});

function errorOf(fn: () => unknown): ServiceConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ServiceConfigError) return error;
    throw error;
  }
  throw new Error('expected a ServiceConfigError');
}
