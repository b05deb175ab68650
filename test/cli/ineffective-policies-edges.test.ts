/**
 * The ineffective-policy and load-amplifying findings of `check` at the edges their rules leave open: a hedging
 * delay of 0 with a timeout of 0, and a first backoff under 10 ms when initialBackoff is exactly 10 ms.
 */
import { describe, expect, it } from 'vitest';
import { findIneffectivePolicies } from '../../src/cli/ineffective-policies.js';
import { findLoadAmplifyingPolicies } from '../../src/cli/load-amplifying-policies.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;

function config(entry: object) {
  return parseServiceConfig({ methodConfig: [{ name: [{}], ...entry }] });
}

describe('findIneffectivePolicies: a timeout against hedgingDelay', () => {
  it('says nothing of a timeout of 0 when hedges have no delay (they all leave at once)', () => {
    const hedgingPolicy = { maxAttempts: 2, hedgingDelay: '0s' };
    expect(findIneffectivePolicies(config({ hedgingPolicy, timeout: '0s' }), 'a6')).toEqual([]);
  });

  it('finds a timeout of 0 with a delay of 1 ms: no hedge leaves on its delay', () => {
    const hedgingPolicy = { maxAttempts: 2, hedgingDelay: '0.001s' };
    expect(findIneffectivePolicies(config({ hedgingPolicy, timeout: '0s' }), 'a6')).toEqual([
      {
        path: ['methodConfig', 0, 'timeout'],
        message:
          '0 ms is not longer than hedgingDelay (1 ms): no hedge is sent on its delay before the deadline, only after a non-fatal failure',
      },
    ]);
  });
});

describe('findLoadAmplifyingPolicies: which field makes the first retry come at once', () => {
  it('blames maxBackoff when initialBackoff is exactly 10 ms and the cap is under it', () => {
    const found = findLoadAmplifyingPolicies(
      config({ retryPolicy: { ...retryPolicy, initialBackoff: '0.01s', maxBackoff: '0.005s' } }),
      5,
    );
    expect(found.map((f) => f.path)).toEqual([['methodConfig', 0, 'retryPolicy', 'maxBackoff']]);
    expect(found[0]?.message).toMatch(/^makes the first retry come 5 ms after a failure/);
  });
});
