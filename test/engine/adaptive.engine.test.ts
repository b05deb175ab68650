import { describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  engineCall,
  eventsOfType,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

describe('engine: adaptive hedging delay', () => {
  it('uses the configured delay for the first call, then the delay its first attempt moved', () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false });
    const config = hedgingPolicy({ hedgingDelay: '0.5s', maxAttempts: 2 });
    const first = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    expect(eventsOfType(first.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 500,
      reason: 'hedging-delay',
    });
    first.clock.advance(20);
    first.attempt(0).succeed();
    // The first attempt answered in 20 ms, under the 500 ms it was sent with: one step down.
    const down = 500 * Math.exp(-0.05 * 0.05);
    expect(adaptive.delayOf(METHOD)).toBeCloseTo(down, 10);
    const later = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    const scheduled = eventsOfType(later.events, 'hedge-scheduled')[0];
    expect(scheduled?.reason).toBe('adaptive-delay');
    expect(scheduled?.delayMs).toBe(Math.round(down)); // events carry whole ms
    clock.advance(Math.ceil(down));
    expect(later.attempts).toHaveLength(2);
    // The hedge wins while the first attempt is still running: it outlived the delay (superseded), one step up.
    later.attempt(1).succeed();
    expect(later.status.code).toBe(Status.OK);
    expect(adaptive.delayOf(METHOD)).toBeCloseTo(down * Math.exp(0.05 * 0.95), 10);
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
    const adaptive = new AdaptiveHedging({ clock, budget: { minPerSecond: 0 }, maxExtraLoad: 0.5 });
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
