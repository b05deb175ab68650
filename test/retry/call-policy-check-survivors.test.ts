/**
 * Behaviour of the per-call policy check (interceptor form, `{ kind: 'retry', ... }`) that mutation testing
 * (stryker, src/retry/call-policy-check.ts) found no test pinned down: the exact field and kind each message names,
 * the bounds of perAttemptRecvTimeoutMs and backoffMultiplier, status codes at the edges of 0..16, what a
 * non-array list of codes says, and which values are not taken as the interceptor form at all.
 */

import { describe, expect, it } from 'vitest';
import { isCallPolicyForm } from '../../src/retry/call-policy-check.js';
import { HEDGING, policyOf, RETRY, withPolicy } from '../helpers/call-policies.js';

function without<T extends object>(policy: T, key: keyof T): Partial<T> {
  const copy: Partial<T> = { ...policy };
  delete copy[key];
  return copy;
}

describe('a field in service-config spelling', () => {
  it('hedgingDelay names hedgingDelayMs, perAttemptRecvTimeout names perAttemptRecvTimeoutMs', () => {
    expect(withPolicy({ ...without(HEDGING, 'hedgingDelayMs'), hedgingDelay: '0.1s' })).toThrow(
      'withRetryOptions: options.policy.hedgingDelay was renamed to "hedgingDelayMs" (a number of ms in this form)',
    );
    expect(withPolicy({ ...RETRY, perAttemptRecvTimeout: '1s' })).toThrow(
      'withRetryOptions: options.policy.perAttemptRecvTimeout was renamed to "perAttemptRecvTimeoutMs" (a number of ms in this form)',
    );
  });
});

describe('a missing required field names the field and the policy kind', () => {
  it.each([['maxAttempts'], ['maxBackoffMs'], ['backoffMultiplier']] as const)(
    'retry policy without %s',
    (field) => {
      expect(withPolicy(without(RETRY, field))).toThrow(
        `withRetryOptions: options.policy.${field} is required in a policy of kind "retry"`,
      );
    },
  );

  it('a bad maxAttempts of a retry policy is named', () => {
    expect(withPolicy({ ...RETRY, maxAttempts: 0 })).toThrow(
      'withRetryOptions: options.policy.maxAttempts must be an integer >= 1, got 0',
    );
  });
});

describe('perAttemptRecvTimeoutMs', () => {
  it('must be a positive number of ms, named in the message', () => {
    expect(withPolicy({ ...RETRY, perAttemptRecvTimeoutMs: 0 })).toThrow(
      `withRetryOptions: options.policy.perAttemptRecvTimeoutMs must be a number in (0, ${Number.MAX_SAFE_INTEGER}] (ms), got 0`,
    );
    expect(withPolicy({ ...RETRY, perAttemptRecvTimeoutMs: -5 })).toThrow(
      /options\.policy\.perAttemptRecvTimeoutMs must be a number in \(0, /,
    );
    expect(withPolicy({ ...RETRY, perAttemptRecvTimeoutMs: 'soon' })).toThrow(
      /options\.policy\.perAttemptRecvTimeoutMs must be a number in .*, got "soon"/,
    );
    expect(policyOf({ ...RETRY, perAttemptRecvTimeoutMs: 0.5 })).toMatchObject({
      perAttemptRecvTimeoutMs: 0.5,
    });
  });

  it('left out, it is not a key of the policy at all', () => {
    const policy = policyOf({ ...RETRY });
    expect(policy).toStrictEqual(RETRY);
    expect(Object.keys(policy ?? {})).not.toContain('perAttemptRecvTimeoutMs');
  });
});

describe('backoffMultiplier', () => {
  it('must be greater than 0', () => {
    expect(withPolicy({ ...RETRY, backoffMultiplier: 0 })).toThrow(
      'withRetryOptions: options.policy.backoffMultiplier must be a number > 0, got 0',
    );
    expect(withPolicy({ ...RETRY, backoffMultiplier: -1 })).toThrow(
      'withRetryOptions: options.policy.backoffMultiplier must be a number > 0, got -1',
    );
    expect(policyOf({ ...RETRY, backoffMultiplier: 0.5 })?.kind).toBe('retry');
  });
});

describe('hedgingDelayMs', () => {
  it('the message says the unit', () => {
    expect(withPolicy({ ...HEDGING, hedgingDelayMs: -5 })).toThrow(
      'withRetryOptions: options.policy.hedgingDelayMs must be a number in [0, 315576000000000] (ms), got -5',
    );
  });
});

describe('status codes', () => {
  it('0 and 16 are codes; -1, 17 and fractions are not', () => {
    expect(policyOf({ ...RETRY, retryableStatusCodes: [16, 0] })).toMatchObject({
      retryableStatusCodes: [16, 0],
    });
    expect(policyOf({ ...HEDGING, nonFatalStatusCodes: [16] })).toMatchObject({ nonFatalStatusCodes: [16] });
    expect(withPolicy({ ...RETRY, retryableStatusCodes: [14, -1] })).toThrow(
      'withRetryOptions: options.policy.retryableStatusCodes[1] must be a status code, an integer 0..16 (names are for service-config form), got -1',
    );
    expect(withPolicy({ ...HEDGING, nonFatalStatusCodes: [2.5] })).toThrow(
      'withRetryOptions: options.policy.nonFatalStatusCodes[0] must be a status code, an integer 0..16 (names are for service-config form), got 2.5',
    );
  });

  it('a list that is not an array, or a missing retry list, is named as such', () => {
    expect(withPolicy({ ...RETRY, retryableStatusCodes: 14 })).toThrow(
      'withRetryOptions: options.policy.retryableStatusCodes must be an array of status codes (integers 0..16), got 14',
    );
    expect(withPolicy(without(RETRY, 'retryableStatusCodes'))).toThrow(
      'withRetryOptions: options.policy.retryableStatusCodes must be an array of status codes (integers 0..16), got nothing',
    );
    expect(withPolicy({ ...HEDGING, nonFatalStatusCodes: { 0: 14, length: 1 } })).toThrow(
      'withRetryOptions: options.policy.nonFatalStatusCodes must be an array of status codes (integers 0..16), got {"0":14,"length":1}',
    );
  });
});

describe('what is not taken as the interceptor form', () => {
  it('null, a string, a number or an array (even with a kind) is not a call policy of the interceptor form', () => {
    expect(isCallPolicyForm(null)).toBe(false);
    expect(isCallPolicyForm('retry')).toBe(false);
    expect(isCallPolicyForm(5)).toBe(false);
    expect(isCallPolicyForm(Object.assign([], { kind: 'retry' }))).toBe(false);
    expect(isCallPolicyForm({ kind: 'retry' })).toBe(true);
    expect(isCallPolicyForm({ kind: 'hedging' })).toBe(true);
  });

  it('withRetryOptions reads such a policy as service-config form, and says what it must be', () => {
    for (const [policy, shown] of [
      [null, 'null'],
      ['x', '"x"'],
      [Object.assign([], { kind: 'retry' }), '[]'],
    ] as const) {
      expect(withPolicy(policy)).toThrow(
        `policy: must be an object with retryPolicy or hedgingPolicy, got ${shown}`,
      );
    }
  });
});
