/**
 * A per-call policy in the interceptor's own form (`{ kind: 'retry', ... }`, what findMethodPolicy returns) is
 * checked as the service-config form is: a plain-JS caller's missing or misspelled field is an error at
 * withRetryOptions, not a TypeError out of a grpc-js callback at the first failure.
 */

import { describe, expect, it } from 'vitest';
import { findMethodPolicy, parseServiceConfig } from '../../src/config/index.js';
import { readCallRetryOptions, withRetryOptions } from '../../src/retry/call-options.js';
import { HEDGING, policyOf, RETRY, withPolicy } from '../helpers/call-policies.js';

describe('withRetryOptions: a policy in the interceptor form', () => {
  it('takes a complete policy of either kind, as a frozen copy', () => {
    const retry = policyOf({ ...RETRY });
    expect(retry).toEqual(RETRY);
    expect(Object.isFrozen(retry)).toBe(true);
    expect(policyOf({ ...HEDGING })).toEqual(HEDGING);
    expect(policyOf({ ...RETRY, perAttemptRecvTimeoutMs: 50, retryableStatusCodes: [] })).toMatchObject({
      perAttemptRecvTimeoutMs: 50,
      retryableStatusCodes: [],
    });
  });

  it('takes what findMethodPolicy returns, under any attempt limit and with any codes the parser takes', () => {
    const config = parseServiceConfig({
      methodConfig: [
        {
          name: [{ service: 'pkg.H' }],
          hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.1s', nonFatalStatusCodes: ['OK', 'UNAVAILABLE'] },
        },
      ],
    });
    const hedged = findMethodPolicy(config, '/pkg.H/M')?.policy;
    expect(policyOf(hedged)).toEqual(hedged);
    const single = findMethodPolicy(config, '/pkg.H/M', 1)?.policy;
    expect(policyOf(single)?.maxAttempts).toBe(1);
    // null stands for a field left out, as in service-config form
    expect(policyOf({ ...HEDGING, hedgingDelayMs: null, nonFatalStatusCodes: null })).toMatchObject({
      hedgingDelayMs: 0,
      nonFatalStatusCodes: [],
    });
  });

  it('a policy it returned is taken as it is: made once and passed with every call, it is checked once', () => {
    const checked = policyOf({ ...RETRY });
    expect(policyOf(checked)).toBe(checked);
  });

  it('takes what findMethodPolicy returns', () => {
    const config = parseServiceConfig({
      methodConfig: [
        {
          name: [{ service: 'pkg.S' }],
          retryPolicy: {
            maxAttempts: 4,
            initialBackoff: '0.1s',
            maxBackoff: '1s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    });
    const found = findMethodPolicy(config, '/pkg.S/M');
    expect(found).toBeDefined();
    expect(policyOf(found?.policy)).toEqual(found?.policy);
  });

  it('a missing field is named (it used to crash the process at the first failure)', () => {
    expect(withPolicy({ kind: 'retry', maxAttempts: 3 })).toThrow(
      'withRetryOptions: options.policy.initialBackoffMs is required in a policy of kind "retry"',
    );
    // As in service-config form, a hedging policy's delay and non-fatal codes may be left out.
    expect(policyOf({ kind: 'hedging', maxAttempts: 3 })).toEqual({
      kind: 'hedging',
      maxAttempts: 3,
      hedgingDelayMs: 0,
      nonFatalStatusCodes: [],
    });
    expect(withPolicy({ kind: 'hedging', hedgingDelayMs: 0, nonFatalStatusCodes: [] })).toThrow(
      'options.policy.maxAttempts is required in a policy of kind "hedging"',
    );
  });

  it('a field in service-config spelling names the form’s own', () => {
    const { initialBackoffMs: _i, maxBackoffMs: _m, ...rest } = RETRY;
    expect(withPolicy({ ...rest, initialBackoff: '0.1s', maxBackoff: '1s' })).toThrow(
      'options.policy.initialBackoff was renamed to "initialBackoffMs" (a number of ms in this form)',
    );
    expect(withPolicy({ ...RETRY, jitter: 0.2 })).toThrow('options.policy.jitter is not an option');
  });

  it('NaN, negative, fractional and out-of-range values are refused, naming the field', () => {
    expect(withPolicy({ ...HEDGING, maxAttempts: Number.NaN })).toThrow(/options\.policy\.maxAttempts/);
    expect(withPolicy({ ...HEDGING, maxAttempts: 0 })).toThrow(
      /options\.policy\.maxAttempts must be an integer >= 1/,
    );
    expect(policyOf({ ...HEDGING, maxAttempts: 1 })?.maxAttempts).toBe(1); // a single attempt, as the limit 1 gives
    expect(withPolicy({ ...HEDGING, maxAttempts: 2.5 })).toThrow(/maxAttempts must be an integer/);
    expect(withPolicy({ ...HEDGING, hedgingDelayMs: -5 })).toThrow(/options\.policy\.hedgingDelayMs/);
    expect(withPolicy({ ...RETRY, initialBackoffMs: Number.NaN })).toThrow(
      /options\.policy\.initialBackoffMs/,
    );
    expect(withPolicy({ ...RETRY, maxBackoffMs: 0 })).toThrow(
      /options\.policy\.maxBackoffMs must be a number in \(0, 315576000000000\] \(ms\), got 0/,
    );
    expect(withPolicy({ ...RETRY, backoffMultiplier: Number.POSITIVE_INFINITY })).toThrow(
      /backoffMultiplier/,
    );
    expect(withPolicy({ ...RETRY, retryableStatusCodes: [] })).toThrow(
      /retryableStatusCodes must not be empty \(it may be empty only with a perAttemptRecvTimeoutMs\)/,
    );
    expect(withPolicy({ ...RETRY, retryableStatusCodes: ['UNAVAILABLE'] })).toThrow(
      'options.policy.retryableStatusCodes[0] must be a status code, an integer 0..16 (names are for service-config form), got "UNAVAILABLE"',
    );
    expect(withPolicy({ ...RETRY, retryableStatusCodes: [17] })).toThrow(/retryableStatusCodes\[0\]/);
    expect(withPolicy({ ...RETRY, initialBackoffMs: 1e300 })).toThrow(
      /initialBackoffMs must be a number in \(0, 315576000000000\]/,
    );
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
    expect(withPolicy({ ...HEDGING, nonFatalStatusCodes: [14, , 2] })).toThrow(/nonFatalStatusCodes\[1\]/);
  });

  it('a later change to the caller’s object changes nothing', () => {
    const mine = { ...RETRY, retryableStatusCodes: [14] };
    const taken = policyOf(mine);
    mine.retryableStatusCodes.push(13);
    (mine as { maxAttempts: number }).maxAttempts = 5;
    expect(taken).toEqual(RETRY);
  });
});

describe('withRetryOptions: the call options it extends', () => {
  it('must be an object (or null, taken as none)', () => {
    expect(() => withRetryOptions({}, 'x' as never)).toThrow(
      'withRetryOptions: callOptions must be grpc-js call options (an object such as { deadline }), got "x"',
    );
    expect(() => withRetryOptions({}, [] as never)).toThrow(/callOptions must be grpc-js call options/);
    expect(readCallRetryOptions(withRetryOptions({ enabled: false }, null as never))?.enabled).toBe(false);
  });
});
