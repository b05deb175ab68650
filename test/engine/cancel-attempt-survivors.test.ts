/**
 * The cancel-rate limit applies to losing hedges and timed-out attempts only: the application's cancel and the end
 * of the call go at once however spent the limit is, a call with the limit off cancels every loser at once, and a
 * loser left running on a call with a deadline is not cut short by the limiter's cap.
 */
import { describe, expect, it } from 'vitest';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { engineCall, eventsOfType, hedgingPolicy, Status, T0 } from '../helpers/engine.js';

const twoHedges = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });

/** A limiter whose burst is spent: the next loser it is asked about is refused. */
function spentLimiter(clock: FakeClock, loserCapMs = 5000): CancelRateLimiter {
  const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 0.001, loserCapMs });
  expect(limiter.tryCancel()).toBe(true);
  return limiter;
}

describe('engine: cancels the limit does not refuse', () => {
  it("the application's cancel reaches every attempt at once when the limit is spent, and is counted", async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock);
    const h = engineCall(twoHedges, { clock, interceptor: { cancelRateLimit: limiter } });
    expect(h.attempts.every((a) => a.halfClosed)).toBe(true); // requests fully sent
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await h.settle();
    expect(h.attempts.map((a) => a.cancelled)).toEqual([
      { code: Status.CANCELLED, details: 'stop' },
      { code: Status.CANCELLED, details: 'stop' },
    ]);
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([]);
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(limiter.tokens).toBe(-2); // each was a reset on the connection
  });

  it('the end of the call (a fatal status) cancels the other attempt at once when the limit is spent', async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock);
    const h = engineCall(twoHedges, { clock, interceptor: { cancelRateLimit: limiter } });
    h.attempt(1).fail(Status.INVALID_ARGUMENT);
    await h.settle();
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'call ended' });
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([]);
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);
    expect(limiter.tokens).toBe(-1);
  });

  it('with cancelRateLimit: false, a losing hedge is cancelled at once', async () => {
    const h = engineCall(twoHedges, { interceptor: { cancelRateLimit: false } });
    h.attempt(1).succeed('winner');
    await h.settle();
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'another attempt committed' });
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([]);
    expect(h.received.messages).toEqual(['winner']);
    expect(h.status.code).toBe(Status.OK);
  });

  it('with cancelRateLimit: false, the application cancel reaches every attempt', async () => {
    const h = engineCall(twoHedges, { interceptor: { cancelRateLimit: false } });
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await h.settle();
    expect(h.attempts.map((a) => a.cancelled?.details)).toEqual(['stop', 'stop']);
    expect(h.status.code).toBe(Status.CANCELLED);
  });
});

describe('engine: a loser left running under the limit', () => {
  it('on a call with a deadline runs past the cap (grpc-js ends it at the deadline), and ends in its own time', async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock, 5000);
    const h = engineCall(twoHedges, { clock, deadlineMs: 60_000, interceptor: { cancelRateLimit: limiter } });
    h.attempt(1).succeed('winner');
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([
      expect.objectContaining({ attempt: 1, cancelReason: 'other-attempt-committed', loserCapMs: undefined }),
    ]);
    clock.advance(20_000); // four times the cap
    await h.settle();
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.status.code).toBe(Status.OK);
    expect(eventsOfType(h.events, 'attempt-end').find((e) => e.attempt === 1)).toMatchObject({
      leftRunning: true,
    });
  });

  it('on a call without a deadline that ends before its cap is not cancelled at the cap, nor counted again', async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock, 5000);
    const h = engineCall(twoHedges, { clock, interceptor: { cancelRateLimit: limiter } });
    h.attempt(1).succeed('winner');
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.attempt(0).status(Status.OK, 'OK');
    const tokens = limiter.tokens;
    clock.advance(5000);
    await h.settle();
    expect(h.attempt(0).cancelled).toBeUndefined();
    expect(limiter.tokens).toBeCloseTo(tokens + 0.005, 6); // only the refill
  });
});

describe('engine: what each cancel spends from the limit', () => {
  it('a loser cancelled within the burst spends one token, not two', async () => {
    const clock = new FakeClock(T0);
    const limiter = new CancelRateLimiter({ clock, burst: 5, ratePerSecond: 0.001 });
    const h = engineCall(twoHedges, { clock, interceptor: { cancelRateLimit: limiter } });
    h.attempt(1).succeed();
    await h.settle();
    expect(h.attempt(0).cancelled?.details).toBe('another attempt committed');
    expect(limiter.tokens).toBeCloseTo(4, 6);
  });

  it('an attempt an attempt-start listener cancels before it started spends nothing (no reset was sent)', async () => {
    const clock = new FakeClock(T0);
    const limiter = new CancelRateLimiter({ clock, burst: 5, ratePerSecond: 0.001 });
    const h = engineCall(twoHedges, {
      clock,
      interceptor: {
        cancelRateLimit: limiter,
        onEvent: (e) => {
          if (e.type === 'attempt-start') h.call.cancelWithStatus(Status.CANCELLED, 'stop');
        },
      },
      start: false,
    });
    h.start();
    await h.settle();
    expect(h.received.statuses.map((s) => s.code)).toEqual([Status.CANCELLED]);
    expect(limiter.tokens).toBeCloseTo(5, 6);
  });
});

describe('engine: a shared limiter of its own (only tryCancel and loserCapMs)', () => {
  function minimal(allow: boolean) {
    return {
      loserCapMs: 5000,
      asked: 0,
      tryCancel(): boolean {
        this.asked += 1;
        return allow;
      },
    };
  }

  it("takes the application's cancel without noteCancel", async () => {
    const limiter = minimal(false);
    const h = engineCall(twoHedges, { interceptor: { cancelRateLimit: limiter as never } });
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await h.settle();
    expect(h.attempts.map((a) => a.cancelled?.details)).toEqual(['stop', 'stop']);
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('leaves a refused loser running without whenAllowed, and cancels it at the cap without noteCancel', async () => {
    const clock = new FakeClock(T0);
    const limiter = minimal(false);
    const h = engineCall(twoHedges, { clock, interceptor: { cancelRateLimit: limiter as never } });
    h.attempt(1).succeed('winner');
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(0).cancelled).toBeUndefined();
    clock.advance(5000);
    expect(h.attempt(0).cancelled?.details).toBe('another attempt committed');
    await h.settle();
    expect(clock.pendingTimers).toBe(0);
  });
});
