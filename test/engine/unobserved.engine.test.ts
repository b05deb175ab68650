/**
 * A call nobody listens to builds no events at all (the engine holds no CallEvents then): every path that would
 * emit one must still run, end the call once and leave nothing behind.
 */
import { describe, expect, it } from 'vitest';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { engineChecks } from '../../src/retry/engine-checks.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  depositsOnlyHedging,
  engineCall,
  hedgingPolicy,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

describe('engine: a call nobody listens to', () => {
  it('retries, waits, commits and ends', async () => {
    const h = engineCall(retryPolicy(), { unobserved: true });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.events).toEqual([]);
    const cancelled = engineCall(retryPolicy(), { unobserved: true });
    cancelled.attempt(0).fail();
    cancelled.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await cancelled.settle();
    expect(cancelled.status.code).toBe(Status.CANCELLED);
    expect(cancelled.clock.pendingTimers).toBe(0);
  });

  it('a request too large for a retry ends the call (replay-buffer commit)', () => {
    const h = engineCall(retryPolicy(), { unobserved: true, interceptor: { perRpcBufferBytes: 10 } });
    h.attempt(0).fail();
    expect(h.status.code).toBe(Status.UNAVAILABLE);
  });

  it('hedges, a throttled retry and a refused hedge', () => {
    const h = engineCall(hedgingPolicy(), { unobserved: true });
    h.clock.advance(100);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure();
    const refused = engineCall(hedgingPolicy(), { unobserved: true, interceptor: { gate: throttle } });
    refused.clock.advance(100);
    expect(refused.attempts).toHaveLength(1);
    const retried = engineCall(retryPolicy(), { unobserved: true, interceptor: { gate: throttle } });
    retried.attempt(0).fail();
    expect(retried.status.code).toBe(Status.UNAVAILABLE);
  });

  it('a hedge the budget refuses, and a loser left running', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), {
      clock,
      unobserved: true,
      interceptor: { adaptiveHedging: adaptive },
    });
    clock.advance(350);
    expect(h.attempts).toHaveLength(1);
    h.attempt(0).succeed();
    const limiter = new CancelRateLimiter({ burst: 1, ratePerSecond: 0.001, clock });
    limiter.tryCancel();
    const left = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      clock,
      unobserved: true,
      interceptor: { cancelRateLimit: limiter },
    });
    left.attempt(1).succeed();
    expect(left.status.code).toBe(Status.OK);
    expect(left.attempt(0).cancelled).toBeUndefined();
  });

  it('in production, a broken invariant ends the call with INTERNAL even with no listener', async () => {
    const strict = engineChecks.strict;
    engineChecks.strict = false;
    try {
      const h = engineCall(retryPolicy(), { unobserved: true });
      const call = h.call as unknown as { transition(next: { tag: 'not-started' }): boolean };
      expect(call.transition({ tag: 'not-started' })).toBe(false);
      await h.settle();
      expect(h.status).toMatchObject({
        code: Status.INTERNAL,
        details: 'grpc-retry-hedging internal error: no transition from in-flight to not-started',
      });
      expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'call ended' });
    } finally {
      engineChecks.strict = strict;
    }
  });
});
