/**
 * A copy of a parsed config (a spread, structuredClone or JSON round trip loses the brand parseServiceConfig sets)
 * is named for what it is, not rejected for "missing" durations with hints that name the package's internal fields.
 */
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { findNormalizedPolicy } from '../../src/config/copied-normalized-config.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import { validateServiceConfig } from '../../src/config/validate-service-config.js';
import { listMethodIdempotency } from '../../src/idempotency/idempotency-level.js';
import { serviceConfigFromProtos } from '../../src/idempotency/service-config-from-protos.js';
import { readCallRetryOptions, withRetryOptions } from '../../src/retry/call-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const json = {
  methodConfig: [
    { name: [{ service: 'a.Reads' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s' } },
    {
      name: [{ service: 'a.Writes' }],
      ...RETRY_UNAVAILABLE_POLICY,
    },
  ],
};
const parsed = parseServiceConfig(json);

const copies: [string, object][] = [
  ['a spread', { ...parsed }],
  ['structuredClone', structuredClone(parsed)],
  ['a JSON round trip', JSON.parse(JSON.stringify(parsed)) as object],
];

function errorOf(action: () => unknown): ServiceConfigError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceConfigError);
    return error as ServiceConfigError;
  }
  throw new Error('expected a ServiceConfigError');
}

describe.each(copies)('%s of a parsed config', (_, copy) => {
  it('is refused by createRetryInterceptor as a copy, at the first policy, with no hint naming internal fields', () => {
    const error = errorOf(() => createRetryInterceptor(copy));
    expect(error.path).toBe('methodConfig[0].hedgingPolicy');
    expect(error.detail).toMatch(/^is in the form parseServiceConfig and loadServiceConfig return/);
    expect(error.detail).toContain('Pass the returned config itself');
    expect(error.errors).toHaveLength(1);
    expect(error.message).not.toContain('misspelling');
    expect(error.message).not.toContain('hedgingDelayMs');
  });

  it('is refused the same way by createChannelOptions and validateServiceConfig', () => {
    expect(errorOf(() => createChannelOptions(copy)).path).toBe('methodConfig[0].hedgingPolicy');
    const result = validateServiceConfig(copy);
    expect(result.config).toBeUndefined();
    expect(result.errors.map((e) => e.path)).toEqual(['methodConfig[0].hedgingPolicy']);
  });
});

describe('findNormalizedPolicy', () => {
  it('finds a retry policy in normalized form behind entries that are not', () => {
    const retryOnly = JSON.parse(JSON.stringify(parsed)) as { methodConfig: unknown[] };
    retryOnly.methodConfig[0] = json.methodConfig[0];
    expect(findNormalizedPolicy(retryOnly)).toEqual(['methodConfig', 1, 'retryPolicy']);
  });

  it('leaves service-config JSON alone, even with a stray "kind" field or a number where a duration goes', () => {
    expect(findNormalizedPolicy(json)).toBeUndefined();
    expect(
      findNormalizedPolicy({ methodConfig: [{ retryPolicy: { kind: 'retry', initialBackoff: '1s' } }] }),
    ).toBe(undefined);
    expect(
      findNormalizedPolicy({ methodConfig: [{ retryPolicy: { initialBackoffMs: 100 } }] }),
    ).toBeUndefined();
    expect(
      findNormalizedPolicy({ methodConfig: [{ hedgingPolicy: { kind: 'retry', hedgingDelayMs: 5 } }] }),
    ).toBe(undefined);
    expect(findNormalizedPolicy({ methodConfig: [null, 'x'] })).toBeUndefined();
    expect(findNormalizedPolicy({ methodConfig: {} })).toBeUndefined();
    expect(findNormalizedPolicy('text')).toBeUndefined();
  });

  it('lets a JSON config with a stray "kind" be validated as JSON (an unknown field, ignored)', () => {
    const withKind = {
      methodConfig: [
        { ...json.methodConfig[1], retryPolicy: { ...RETRY_UNAVAILABLE_POLICY.retryPolicy, kind: 'retry' } },
      ],
    };
    const result = validateServiceConfig(withKind);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual(['methodConfig[0].retryPolicy.kind']);
  });

  it('locates the copy in JSON text', () => {
    const text = JSON.stringify(JSON.parse(JSON.stringify(parsed)), null, 2);
    const [error] = validateServiceConfig(text).errors;
    expect(error?.path).toBe('methodConfig[0].hedgingPolicy');
    expect(error?.line).toBe(text.split('\n').findIndex((line) => line.includes('"hedgingPolicy"')) + 1);
  });
});

describe('a parsed policy wrapped as JSON where a policy is expected', () => {
  const retryPolicy = parsed.methodConfig[1]?.retryPolicy;
  const hedgingPolicy = parsed.methodConfig[0]?.hedgingPolicy;

  it('withRetryOptions names it once and says to pass it unwrapped, which it takes (checked, as a copy)', () => {
    const error = errorOf(() => withRetryOptions({ policy: { retryPolicy } as never }));
    expect(error.errors).toHaveLength(1);
    expect(error.message).toBe(
      'policy.retryPolicy: is a policy in the form parseServiceConfig and loadServiceConfig return (a "kind" field, durations in ms), not service-config JSON: pass it as the policy itself (policy: config.methodConfig[i].retryPolicy), not wrapped in { retryPolicy }',
    );
    expect(errorOf(() => withRetryOptions({ policy: { hedgingPolicy } as never })).path).toBe(
      'policy.hedgingPolicy',
    );
    expect(retryPolicy).toBeDefined();
    const options = withRetryOptions({ policy: retryPolicy as NonNullable<typeof retryPolicy> });
    expect(readCallRetryOptions(options)?.policy).toEqual(retryPolicy);
  });

  it('serviceConfigFromProtos names it at its level and asks for JSON', () => {
    const source = {
      'a.Writes': {
        Put: {
          path: '/a.Writes/Put',
          requestStream: false,
          responseStream: false,
          options: { idempotency_level: 'IDEMPOTENT' },
        },
      },
    };
    expect(listMethodIdempotency(source)).toHaveLength(1);
    const error = errorOf(() => serviceConfigFromProtos(source, { idempotent: { retryPolicy } as never }));
    expect(error.path).toBe('policies.idempotent.retryPolicy');
    expect(error.message).toMatch(/not service-config JSON: write the policy as service-config JSON/);
  });
});
