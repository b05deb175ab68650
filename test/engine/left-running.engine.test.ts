/**
 * An attempt the call is done with but the cancel-rate limit lets run (src/retry/cancel-attempt.ts) still says why
 * the call was done with it: its `attempt-end` carries the reason with `leftRunning`, as a cancelled one does, and
 * a per-attempt timeout's status still explains that no attempt was left.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  engineCall,
  eventsOfType,
  hedgingPolicy,
  retryPolicy,
  Status,
  spentLimiter,
  T0,
} from '../helpers/engine.js';

describe('engine: an attempt left running under the cancel-rate limit', () => {
  it('after its per-attempt timeout: the status still says no attempt was left, and its end why it was dropped', async () => {
    const clock = new FakeClock(T0);
    const h = engineCall(retryPolicy({ maxAttempts: 2, perAttemptRecvTimeout: '0.05s' }), {
      clock,
      interceptor: { cancelRateLimit: spentLimiter(clock) },
    });
    clock.advance(50); // attempt 1 times out; backoff 100
    clock.advance(100);
    clock.advance(50); // attempt 2 times out: none left
    expect(h.attempts.map((a) => a.cancelled)).toEqual([undefined, undefined]);
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([
      expect.objectContaining({ attempt: 1, cancelReason: 'per-attempt-timeout' }),
      expect.objectContaining({ attempt: 2, cancelReason: 'per-attempt-timeout' }),
    ]);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(
      /per-attempt receive timeout \(50 ms\) hit on attempt 2; no attempt left/,
    );
    h.attempt(1).succeed('too late');
    await h.settle();
    expect(h.received.messages).toEqual([null]); // grpc-js's marker of a unary status without a response; no more
    expect(eventsOfType(h.events, 'attempt-end').find((e) => e.attempt === 2)).toMatchObject({
      leftRunning: true,
      cancelReason: 'per-attempt-timeout',
      code: Status.OK,
    });
  });

  it("a shutdown: the limiter's cancelWaiting cancels the losers left running at once, and no cap timer is left", async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock);
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      clock,
      interceptor: { cancelRateLimit: limiter },
    });
    h.attempt(2).succeed('winner');
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempts.map((a) => a.cancelled)).toEqual([undefined, undefined, undefined]);
    expect(limiter.queued).toBe(2);
    expect(limiter.cancelWaiting()).toBe(2);
    expect(h.attempts.map((a) => a.cancelled?.details)).toEqual([
      'another attempt committed',
      'another attempt committed',
      undefined,
    ]);
    h.attempt(0).status(Status.CANCELLED, 'another attempt committed');
    h.attempt(1).status(Status.CANCELLED, 'another attempt committed');
    await h.settle();
    expect(clock.pendingTimers).toBe(0);
    expect(eventsOfType(h.events, 'attempt-end').filter((e) => e.leftRunning)).toHaveLength(2);
  });
});
