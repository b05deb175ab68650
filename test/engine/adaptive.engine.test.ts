import { describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  depositsOnlyHedging,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

describe('engine: adaptive hedging delay', () => {
  it('uses the configured delay until calls have answered, then the delay their first attempts set', () => {
    const clock = new FakeClock(T0);
    // maxExtraLoad 0.5: the delay moves once 2 calls have answered.
    const adaptive = new AdaptiveHedging({ clock, budget: false, maxExtraLoad: 0.5 });
    const config = hedgingPolicy({ hedgingDelay: '0.5s', maxAttempts: 2 });
    const first = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    expect(eventsOfType(first.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 500,
      reason: 'hedging-delay',
    });
    first.clock.advance(20);
    first.attempt(0).succeed(); // answered in 20 ms: recorded exactly
    expect(adaptive.delayOf(METHOD)).toBe(500);
    const second = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    expect(eventsOfType(second.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 500,
      reason: 'adaptive-delay',
    });
    clock.advance(500);
    expect(second.attempts).toHaveLength(2);
    clock.advance(1);
    // The hedge wins while the first attempt is still running: it outlived its delay (superseded, slower than
    // any delay). Of 20 ms and "slower than anything", the delay is the 20 ms below the gap.
    second.attempt(1).succeed();
    expect(second.status.code).toBe(Status.OK);
    expect(adaptive.delayOf(METHOD)).toBe(20);
    const third = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    expect(eventsOfType(third.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 20,
      reason: 'adaptive-delay',
    });
  });

  it('records nothing when the first attempt failed before a hedge won', () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false });
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 });
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    clock.advance(10);
    h.attempt(0).fail(Status.UNAVAILABLE); // a non-fatal code: the hedge goes at once
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(adaptive.delayOf(METHOD)).toBeUndefined();
  });

  it('a hedge the budget refuses is asked for again one delay later, and reported once', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 });
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    // One call deposited half a hedge: not enough for one.
    clock.advance(350);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', gate: 'hedge-budget', attempt: 2 }),
    ]);
    // Another call deposits the other half: the waiting call's next ask succeeds.
    const other = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    other.attempt(0).succeed();
    clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('engine: cancel-rate limit', () => {
  it('a shared limiter refuses: the loser is left running, then cancelled at the cap when the call has no deadline', async () => {
    const clock = new FakeClock(T0);
    const { CancelRateLimiter } = await import('../../src/hedging/cancel-rate-limiter.js');
    const limiter = new CancelRateLimiter({ burst: 1, ratePerSecond: 0.001, loserCapMs: 5000, clock });
    const config = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });
    const a = engineCall(config, { clock, interceptor: { cancelRateLimit: limiter } });
    a.attempt(1).succeed();
    expect(a.attempt(0).cancelled).toBeDefined();
    const b = engineCall(config, { clock, interceptor: { cancelRateLimit: limiter } });
    b.attempt(1).succeed('winner');
    expect(b.status.code).toBe(Status.OK);
    expect(b.attempt(0).cancelled).toBeUndefined();
    expect(eventsOfType(b.events, 'attempt-left-running')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'other-attempt-committed', capMs: 5000 }),
    ]);
    b.attempt(0).message('dropped');
    expect(b.received.messages).toEqual(['winner']);
    clock.advance(5000);
    expect(b.attempt(0).cancelled).toBeDefined();
    await b.settle();
    expect(eventsOfType(b.events, 'attempt-end').find((e) => e.attempt === 1)).toMatchObject({
      leftRunning: true,
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('with a deadline, a loser left running sets no cap timer (grpc-js ends it at the deadline)', () => {
    const clock = new FakeClock(T0);
    const interceptor = { cancelRateLimit: { burst: 1, ratePerSecond: 0.001, clock } };
    const config = retryPolicy({ perAttemptRecvTimeout: '0.05s', maxAttempts: 3 });
    const h = engineCall(config, { clock, deadlineMs: 10_000, interceptor });
    clock.advance(50); // first timeout: the burst allows the cancel
    expect(h.attempt(0).cancelled).toBeDefined();
    clock.advance(100);
    clock.advance(50); // second timeout: refused, left running
    expect(h.attempt(1).cancelled).toBeUndefined();
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'per-attempt-timeout', capMs: undefined }),
    ]);
    expect(h.attempts).toHaveLength(2);
    clock.advance(200);
    expect(h.attempts).toHaveLength(3); // the retry went anyway
  });
});
