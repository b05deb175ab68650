/**
 * A policy handed to a function (a per-call override, a level of serviceConfigFromProtos) is code, not a config
 * file: a field the policy does not have is refused with a "did you mean", where the lenient reading a service
 * config gets would let it take its default silently (a misspelled hedgingDelay: every hedge at once).
 */
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it } from 'vitest';
import { parseCallPolicy } from '../../src/config/parse-service-config.js';
import { isServiceConfigError, type ServiceConfigError } from '../../src/config/service-config-error.js';
import type { HedgingPolicyJson, RetryPolicyJson } from '../../src/config/service-config-json.js';
import { serviceConfigFromProtos } from '../../src/idempotency/service-config-from-protos.js';
import { withRetryOptions } from '../../src/retry/call-options.js';

const retryPolicy: RetryPolicyJson = {
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

function errorOf(action: () => unknown): ServiceConfigError {
  try {
    action();
  } catch (error) {
    if (isServiceConfigError(error)) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a ServiceConfigError');
}

describe('a per-call policy with a field it does not have', () => {
  it('is refused, naming the field and the one meant', () => {
    const hedgingPolicy = { maxAttempts: 2, hedgeDelay: '0.1s' } as HedgingPolicyJson;
    const error = errorOf(() => withRetryOptions({ policy: { hedgingPolicy } }));
    expect(error.path).toBe('policy.hedgingPolicy.hedgeDelay');
    expect(error.detail).toBe('is not a field of a hedgingPolicy (did you mean "hedgingDelay"?)');
  });

  it('lists every such field, after the problems of the fields it has, and without a hint when none is near', () => {
    const policy = { ...retryPolicy, maxAttempts: 1, retryableStatusCode: ['UNAVAILABLE'], colour: 'blue' };
    const error = errorOf(() => parseCallPolicy({ retryPolicy: policy }));
    expect(error.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'policy.retryPolicy.maxAttempts: must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
      'policy.retryPolicy.retryableStatusCode: is not a field of a retryPolicy (did you mean "retryableStatusCodes"?)',
      'policy.retryPolicy.colour: is not a field of a retryPolicy',
    ]);
  });

  it('takes every field a policy has, perAttemptRecvTimeout among them', () => {
    expect(parseCallPolicy({ retryPolicy: { ...retryPolicy, perAttemptRecvTimeout: '0.5s' } })).toMatchObject(
      {
        kind: 'retry',
        perAttemptRecvTimeoutMs: 500,
      },
    );
    expect(
      parseCallPolicy({ hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.1s', nonFatalStatusCodes: [14] } }),
    ).toMatchObject({ kind: 'hedging', hedgingDelayMs: 100 });
  });
});

describe('serviceConfigFromProtos with a level policy holding a field it does not have', () => {
  it('is refused at the path the caller wrote', () => {
    const error = errorOf(() =>
      serviceConfigFromProtos(loadSync('protos/catalog_demo.proto'), {
        idempotent: { retryPolicy: { ...retryPolicy, initalBackoff: '0.2s' } as RetryPolicyJson },
      }),
    );
    expect(error.path).toBe('policies.idempotent.retryPolicy.initalBackoff');
    expect(error.detail).toBe('is not a field of a retryPolicy (did you mean "initialBackoff"?)');
  });
});

describe('a field beside retryPolicy or hedgingPolicy', () => {
  it('per call: a misspelled policy name gets its did-you-mean first, call options say where they go', () => {
    const misspelled = errorOf(() => withRetryOptions({ policy: { retryPolcy: retryPolicy } as never }));
    expect(misspelled.path).toBe('policy.retryPolcy');
    expect(misspelled.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'policy.retryPolcy: is not a field of a per-call policy (did you mean "retryPolicy"?)',
      'policy: must have exactly one of retryPolicy and hedgingPolicy',
    ]);
    const besides = (extra: object) =>
      errorOf(() => withRetryOptions({ policy: { retryPolicy, ...extra } as never })).message;
    expect(besides({ timeout: '1s' })).toBe(
      'policy.timeout: is not a field of a per-call policy; give the call a deadline (the call option deadline) instead',
    );
    // grpc-js's call options have no waitForReady (it is ignored there): it goes on the call's metadata.
    expect(besides({ waitForReady: true })).toBe(
      "policy.waitForReady: is not a field of a per-call policy; set it on the call's metadata instead: metadata.setOptions({ waitForReady: true })",
    );
    expect(besides({ name: [{}] })).toBe(
      'policy.name: is not a field of a per-call policy; the policy applies to the call it is passed with',
    );
    expect(besides({ timout: '1s' })).toBe(
      'policy.timout: is not a field of a per-call policy (did you mean "timeout"? that is not one either: give the call a deadline (the call option deadline) instead)',
    );
    expect(besides({ zzz: 1 })).toBe('policy.zzz: is not a field of a per-call policy');
  });

  it("a retry or hedging policy's fields written flat, without retryPolicy or hedgingPolicy around them, are told to go inside it", () => {
    const flat = errorOf(() => withRetryOptions({ policy: { ...retryPolicy } as never }));
    expect(flat.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'policy.maxAttempts: is not a field of a per-call policy, but of the retryPolicy or hedgingPolicy in it: write { retryPolicy: { maxAttempts, ... } } or { hedgingPolicy: { maxAttempts, ... } }',
      'policy.initialBackoff: is not a field of a per-call policy, but of the retryPolicy in it: write { retryPolicy: { initialBackoff, ... } }',
      'policy.maxBackoff: is not a field of a per-call policy, but of the retryPolicy in it: write { retryPolicy: { maxBackoff, ... } }',
      'policy.backoffMultiplier: is not a field of a per-call policy, but of the retryPolicy in it: write { retryPolicy: { backoffMultiplier, ... } }',
      'policy.retryableStatusCodes: is not a field of a per-call policy, but of the retryPolicy in it: write { retryPolicy: { retryableStatusCodes, ... } }',
      'policy: must have exactly one of retryPolicy and hedgingPolicy',
    ]);
    expect(
      errorOf(() => withRetryOptions({ policy: { maxAttempts: 2, hedgingDelay: '0.1s' } as never })).errors[1]
        ?.message,
    ).toBe(
      'is not a field of a per-call policy, but of the hedgingPolicy in it: write { hedgingPolicy: { hedgingDelay, ... } }',
    );
    expect(
      errorOf(() =>
        serviceConfigFromProtos(loadSync('protos/catalog_demo.proto'), {
          idempotent: { ...retryPolicy, timeout: '2s' } as never,
        }),
      ).message,
    ).toMatch(
      /^policies\.idempotent\.maxAttempts: is not a field of this policy \(retryPolicy, hedgingPolicy, timeout, waitForReady\), but of the retryPolicy or hedgingPolicy in it: write/,
    );
  });

  it('in serviceConfigFromProtos, timeout and waitForReady are fields, and a misspelling names them', () => {
    const definition = loadSync('protos/catalog_demo.proto');
    expect(() =>
      serviceConfigFromProtos(definition, { idempotent: { retryPolicy, timeout: '2s', waitForReady: true } }),
    ).not.toThrow();
    expect(
      errorOf(() =>
        serviceConfigFromProtos(definition, { idempotent: { retryPolicy, timout: '2s' } as never }),
      ).message,
    ).toBe(
      'policies.idempotent.timout: is not a field of this policy (retryPolicy, hedgingPolicy, timeout, waitForReady) (did you mean "timeout"?)',
    );
  });
});
