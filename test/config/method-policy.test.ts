import { describe, expect, it } from 'vitest';
import { clampPolicy, createMethodConfigLookup, findMethodPolicy } from '../../src/config/method-policy.js';

import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import type { ServiceConfig } from '../../src/config/types.js';

function retry(maxAttempts: number, code = 'UNAVAILABLE'): Record<string, unknown> {
  return {
    maxAttempts,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: [code],
  };
}

/** Entry 0: default; 1: service pkg.Svc; 2: method pkg.Svc/Get (hedging); 3: pkg.Svc/NoPolicy without a policy. */
/** The interceptor's lookup, reduced to the policy. */
function createPolicyLookup(serviceConfig: ServiceConfig, limit?: number) {
  const lookup = createMethodConfigLookup(serviceConfig, limit);
  return (path: string) => lookup(path)?.policy;
}

const RETRY = {
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

const config: ServiceConfig = parseServiceConfig({
  methodConfig: [
    { name: [{}], retryPolicy: retry(2, 'INTERNAL') },
    { name: [{ service: 'pkg.Svc' }], retryPolicy: retry(3) },
    {
      name: [{ service: 'pkg.Svc', method: 'Get' }],
      hedgingPolicy: { maxAttempts: 4, hedgingDelay: '0.01s' },
    },
    { name: [{ service: 'pkg.Svc', method: 'NoPolicy' }, { service: 'pkg.Quiet' }], waitForReady: true },
    { name: [{ service: 'pkg.Big' }], retryPolicy: retry(9) },
    { name: [], retryPolicy: retry(3, 'ABORTED') },
  ],
});

describe('findMethodPolicy precedence', () => {
  it.each<
    [string, string, number | undefined, 'method' | 'service' | 'default' | undefined, string | undefined]
  >([
    ['exact method over service and default', '/pkg.Svc/Get', 2, 'method', 'hedging'],
    ['service over default', '/pkg.Svc/List', 1, 'service', 'retry'],
    ['default for an unknown service', '/other.Svc/Get', 0, 'default', 'retry'],
    ['default for a service that only shares a prefix', '/pkg.Svc2/Get', 0, 'default', 'retry'],
    ['shadowing method entry without a policy', '/pkg.Svc/NoPolicy', undefined, undefined, undefined],
    ['shadowing service entry without a policy', '/pkg.Quiet/Anything', undefined, undefined, undefined],
    ['a path without a leading slash', 'pkg.Svc/List', 1, 'service', 'retry'],
    ['a malformed path (default only)', 'garbage', 0, 'default', 'retry'],
  ])('%s', (_label, path, index, matchedBy, kind) => {
    const match = findMethodPolicy(config, path);
    expect(match?.methodConfigIndex).toBe(index);
    expect(match?.matchedBy).toBe(matchedBy);
    expect(match?.policy.kind).toBe(kind);
  });

  it('uses the whole matched entry without merging', () => {
    const match = findMethodPolicy(config, '/pkg.Svc/Get');
    expect(match?.policy).toEqual({
      kind: 'hedging',
      maxAttempts: 4,
      hedgingDelayMs: 10,
      nonFatalStatusCodes: [],
    });
    const service = findMethodPolicy(config, '/pkg.Svc/List');
    expect(service?.policy.kind === 'retry' && service.policy.retryableStatusCodes).toEqual([14]);
  });

  it('never matches an entry with an empty name list', () => {
    const onlyEmpty = parseServiceConfig({ methodConfig: [{ name: [], retryPolicy: retry(3) }] });
    expect(findMethodPolicy(onlyEmpty, '/pkg.Svc/Get')).toBeUndefined();
  });

  it('returns undefined for an empty config', () => {
    expect(findMethodPolicy(parseServiceConfig({}), '/a.B/C')).toBeUndefined();
  });
});

describe('maxAttempts clamping', () => {
  it('clamps to 5 by default and keeps the config untouched', () => {
    expect(findMethodPolicy(config, '/pkg.Big/Do')?.policy.maxAttempts).toBe(5);
    expect(config.methodConfig[4]?.retryPolicy?.maxAttempts).toBe(9);
  });

  it('clamps to a custom limit', () => {
    expect(findMethodPolicy(config, '/pkg.Big/Do', 3)?.policy.maxAttempts).toBe(3);
    expect(findMethodPolicy(config, '/pkg.Svc/Get', 2)?.policy.maxAttempts).toBe(2);
    expect(findMethodPolicy(config, '/pkg.Big/Do', 1)?.policy.maxAttempts).toBe(1);
  });

  it('does not raise values below the limit', () => {
    expect(findMethodPolicy(config, '/pkg.Svc/List', 10)?.policy.maxAttempts).toBe(3);
    expect(findMethodPolicy(config, '/pkg.Big/Do', 10)?.policy.maxAttempts).toBe(9);
  });

  it.each([0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'rejects the limit %s with a RangeError',
    (limit) => {
      expect(() => findMethodPolicy(config, '/pkg.Svc/Get', limit)).toThrow(RangeError);
      expect(() => createPolicyLookup(config, limit)).toThrow(RangeError);
    },
  );

  it('names findMethodPolicy and the value given when the limit is wrong', () => {
    expect(() => findMethodPolicy(config, '/pkg.Svc/Get', 0)).toThrow(
      new RangeError('findMethodPolicy: maxAttemptsLimit must be an integer >= 1, got 0'),
    );
    // A string read as it is (it was shown as the number it spells, `got 3`, with a RangeError).
    expect(() => findMethodPolicy(config, '/pkg.Svc/Get', '3' as unknown as number)).toThrow(
      new TypeError(
        'findMethodPolicy: maxAttemptsLimit must be an integer >= 1, got "3"; did you mean 3 (a number, not a string)?',
      ),
    );
    expect(() => findMethodPolicy(config, '/pkg.Svc/Get', null as unknown as number)).toThrow(
      new TypeError('findMethodPolicy: maxAttemptsLimit must be an integer >= 1, got null'),
    );
  });

  it('clampPolicy returns the same object when nothing changes', () => {
    const policy = config.methodConfig[1]!.retryPolicy!;
    expect(clampPolicy(policy, 5)).toBe(policy);
    expect(clampPolicy(policy, 2)).toEqual({ ...policy, maxAttempts: 2 });
  });
});

describe('createMethodConfigLookup', () => {
  it('agrees with findMethodPolicy', () => {
    const lookup = createPolicyLookup(config, 4);
    for (const path of [
      '/pkg.Svc/Get',
      '/pkg.Svc/List',
      '/other.X/Y',
      '/pkg.Svc/NoPolicy',
      '/pkg.Quiet/Z',
      '/pkg.Big/A',
    ]) {
      expect(lookup(path)).toEqual(findMethodPolicy(config, path, 4)?.policy);
    }
  });

  it('carries the entry timeout and waitForReady, with or without a policy', () => {
    const withTimeouts = parseServiceConfig({
      methodConfig: [
        { name: [{ service: 'a.S' }], timeout: '0.3s', waitForReady: true },
        { name: [{ service: 'a.S', method: 'R' }], timeout: '1.5s', retryPolicy: RETRY },
      ],
    });
    const lookup = createMethodConfigLookup(withTimeouts);
    expect(lookup('/a.S/X')).toMatchObject({ policy: undefined, timeoutMs: 300, waitForReady: true });
    expect(lookup('/a.S/R')).toMatchObject({ timeoutMs: 1500, waitForReady: undefined });
    expect(findMethodPolicy(withTimeouts, '/a.S/R')).toMatchObject({ timeoutMs: 1500 });
    expect(lookup('/b.S/X')).toBeUndefined();
  });

  it('returns the same object for repeated lookups, hits and misses alike', () => {
    const lookup = createPolicyLookup(config);
    expect(lookup('/pkg.Svc/Get')).toBe(lookup('/pkg.Svc/Get'));
    expect(lookup('/pkg.Big/A')).toBe(lookup('/pkg.Big/B'));
    expect(lookup('/pkg.Svc/NoPolicy')).toBeUndefined();
    expect(lookup('/pkg.Svc/NoPolicy')).toBeUndefined();
  });

  it('works for a hand-built config', () => {
    const handBuilt: ServiceConfig = {
      methodConfig: [
        {
          name: [{ service: 'a.S', method: 'M' }],
          retryPolicy: {
            kind: 'retry',
            maxAttempts: 7,
            initialBackoffMs: 10,
            maxBackoffMs: 100,
            backoffMultiplier: 2,
            retryableStatusCodes: [14],
          },
        },
      ],
    };
    expect(createPolicyLookup(handBuilt)('/a.S/M')?.maxAttempts).toBe(5);
    expect(createPolicyLookup(handBuilt)('/a.S/N')).toBeUndefined();
    // findMethodPolicy is public API: like every public function taking a config, it refuses one it did not parse.
    expect(() => findMethodPolicy(handBuilt, '/a.S/M', 6)).toThrow(/a copy of one they returned/);
  });
});
