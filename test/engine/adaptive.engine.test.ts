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

  it('an empty budget does not fail a call whose only attempt failed non-fatally: the replacement goes, as with fixed hedging', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock); // one call's half a hedge: the budget cannot pay for one
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 });
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    clock.advance(10);
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'throttled')).toEqual([]);
    // With the replacement in flight, a latency hedge is the budget's again: refused, and asked for later.
    clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', gate: 'hedge-budget', attempt: 3 }),
    ]);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it("the interceptor's own gate still bounds a replacement: a throttle that refuses ends the call with its failure", () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 });
    const refuse = { allowAttempt: () => false, recordCall() {}, recordFailure() {}, recordSuccess() {} };
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive, gate: refuse } });
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
  });

  it("a hedge the interceptor's gate refuses after the budget allowed it is not charged to the budget", () => {
    const clock = new FakeClock(T0);
    // A reserve of 2 hedges; each call deposits half of one.
    const adaptive = new AdaptiveHedging({
      clock,
      budget: { minPerSecond: 0.2, chanceSd: 0 },
      maxExtraLoad: 0.5,
    });
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 });
    const refuse = { allowAttempt: () => false, recordCall() {}, recordFailure() {}, recordSuccess() {} };
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive, gate: refuse } });
    clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', attempt: 2, gate: 'gate' }),
    ]);
    // 2 + 0.5 deposited, nothing sent: two whole hedges, none refused by the budget.
    expect(adaptive.budget?.tokens).toBe(2);
    expect(adaptive.budget?.denied).toBe(0);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
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

describe('engine: hedges held while the calls stall', () => {
  /** Two calls 10 ms apart whose first attempts hang: the first one's hedge goes at 100 ms, the second's is due 10 ms later. */
  function twoHanging(options: { holdInStalls?: boolean; maxAttempts?: number; unobserved?: boolean } = {}) {
    const { maxAttempts = 2, unobserved = false, ...adaptiveOptions } = options;
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false, ...adaptiveOptions });
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts });
    const call = () => engineCall(config, { clock, unobserved, interceptor: { adaptiveHedging: adaptive } });
    const a = call();
    clock.advance(10);
    const b = call();
    clock.advance(90);
    expect(a.attempts).toHaveLength(2); // the first hedge due since an answer goes
    clock.advance(10);
    return { clock, adaptive, a, b, call };
  }

  it('holds a second hedge due with no answer since the first, and sends it at the next answer', async () => {
    const { clock, adaptive, a, b, call } = twoHanging();
    expect(b.attempts).toHaveLength(1);
    expect(eventsOfType(b.events, 'hedge-held')).toEqual([expect.objectContaining({ attempt: 2 })]);
    expect(adaptive.heldHedges(METHOD)).toBe(1);
    expect(clock.pendingTimers).toBe(0); // no timer: it waits for an answer only
    // Another call answers: the stall is over, and the held hedge goes once the I/O polled with it is read.
    call().attempt(0).succeed();
    expect(b.attempts).toHaveLength(1);
    await b.settle();
    expect(b.attempts).toHaveLength(2);
    expect(eventsOfType(b.events, 'hedge-sent')).toEqual([expect.objectContaining({ attempt: 2 })]);
    a.attempt(1).succeed();
    b.attempt(1).succeed();
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
  });

  it("another call's server answering with a status only (Trailers-Only) ends the stall too", async () => {
    const { adaptive, a, b, call } = twoHanging();
    expect(adaptive.heldHedges(METHOD)).toBe(1);
    // The server answers another call of the method at once, with a fatal status and no response: it is not paused.
    const other = call();
    other.attempt(0).fail(Status.NOT_FOUND, { 'content-type': 'application/grpc' });
    expect(other.status.code).toBe(Status.NOT_FOUND);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
    await b.settle();
    expect(b.attempts).toHaveLength(2);
    a.attempt(1).succeed();
    b.attempt(1).succeed();
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
  });

  it('a status no server sent (the client gave up, a local rejection) does not end the stall', async () => {
    const { adaptive, b, call } = twoHanging();
    call().attempt(0).fail(Status.NOT_FOUND);
    expect(adaptive.heldHedges(METHOD)).toBe(1);
    await b.settle();
    expect(b.attempts).toHaveLength(1);
  });

  it("sends no hedge when the held call's answer is read with the one that ends the stall", async () => {
    const { adaptive, a, b, call } = twoHanging();
    // The stall ends: the calls it held answer together, in one poll of the socket.
    call().attempt(0).succeed();
    b.attempt(0).succeed();
    a.attempt(0).succeed();
    await b.settle();
    expect(b.attempts).toHaveLength(1);
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
  });

  it('sends no hedge when the held call answers itself, and ends it once', async () => {
    const { clock, adaptive, a, b } = twoHanging();
    b.attempt(0).succeed(); // the pause is over: the held call's own first attempt answers
    await b.settle();
    expect(b.attempts).toHaveLength(1);
    expect(b.status.code).toBe(Status.OK);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
    a.attempt(0).succeed();
    expect(a.status.code).toBe(Status.OK);
    expect(clock.pendingTimers).toBe(0);
  });

  it("a failure of the held call's first attempt sends its hedge at once, and the release sends no other", async () => {
    const { adaptive, a, b, call } = twoHanging();
    // A non-fatal code, from the server (which also ends the stall for a's calls): the hedge goes now, once.
    b.attempt(0).fail(Status.UNAVAILABLE, { 'content-type': 'application/grpc' });
    expect(b.attempts).toHaveLength(2);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
    call().attempt(0).succeed();
    await b.settle();
    expect(b.attempts).toHaveLength(2);
    b.attempt(1).succeed();
    a.attempt(0).succeed();
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
  });

  it('a hedge sent another way after the release, before it goes, leaves the next one to its delay', async () => {
    const { clock, a, b, call } = twoHanging({ maxAttempts: 3 }); // a's hedge went, b's is held
    expect([a.attempts.length, b.attempts.length]).toEqual([2, 1]);
    // In one poll: another call answers (b's hedge is released), and b's first attempt fails with a non-fatal
    // code, which sends its hedge at once and schedules the third attempt one delay later.
    call().attempt(0).succeed();
    b.attempt(0).fail(Status.UNAVAILABLE);
    expect(b.attempts).toHaveLength(2);
    await b.settle();
    expect(b.attempts).toHaveLength(2); // the release sent no third attempt
    a.attempt(0).succeed();
    clock.advance(100); // the third is due (the first since a answered): it goes
    expect(b.attempts).toHaveLength(3);
    b.attempt(2).succeed();
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
  });

  it('a cancel while held ends the call once, and the next answer sends nothing for it', async () => {
    const { adaptive, a, b, call } = twoHanging();
    b.call.cancelWithStatus(Status.CANCELLED, 'user cancelled');
    expect(adaptive.heldHedges(METHOD)).toBe(0);
    call().attempt(0).succeed();
    await b.settle();
    expect(b.attempts).toHaveLength(1);
    expect(b.status.code).toBe(Status.CANCELLED);
    a.attempt(0).succeed();
  });

  it('holds and releases a hedge with no event listener', async () => {
    const { adaptive, a, b } = twoHanging({ unobserved: true });
    expect([a.attempts.length, b.attempts.length, adaptive.heldHedges(METHOD)]).toEqual([2, 1, 1]);
    a.attempt(1).succeed();
    await b.settle();
    expect(b.attempts).toHaveLength(2);
    b.attempt(1).succeed();
    expect([a.status.code, b.status.code]).toEqual([Status.OK, Status.OK]);
  });

  it('with holdInStalls: false, every hedge goes at its delay', () => {
    const { adaptive, a, b } = twoHanging({ holdInStalls: false });
    expect(b.attempts).toHaveLength(2);
    expect(eventsOfType(b.events, 'hedge-held')).toEqual([]);
    expect(adaptive.heldHedges(METHOD)).toBe(0);
    a.attempt(0).succeed();
    b.attempt(0).succeed();
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
      expect.objectContaining({ attempt: 1, cancelReason: 'other-attempt-committed', loserCapMs: 5000 }),
    ]);
    b.attempt(0).message('dropped');
    expect(b.received.messages).toEqual(['winner']);
    clock.advance(5000);
    expect(b.attempt(0).cancelled).toBeDefined();
    await b.settle();
    // Its end says why the call was done with it: a loser, not a failure of its own.
    expect(eventsOfType(b.events, 'attempt-end').find((e) => e.attempt === 1)).toMatchObject({
      leftRunning: true,
      cancelReason: 'other-attempt-committed',
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('a loser left running is cancelled as soon as the rate allows, long before its cap', async () => {
    const clock = new FakeClock(T0);
    const { CancelRateLimiter } = await import('../../src/hedging/cancel-rate-limiter.js');
    const limiter = new CancelRateLimiter({ burst: 1, ratePerSecond: 10, loserCapMs: 30_000, clock });
    limiter.tryCancel(); // the burst is spent
    const config = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });
    const h = engineCall(config, { clock, interceptor: { cancelRateLimit: limiter } });
    h.attempt(1).succeed();
    expect(h.attempt(0).cancelled).toBeUndefined();
    clock.advance(100); // one token at 10/s
    expect(h.attempt(0).cancelled).toMatchObject({
      code: Status.CANCELLED,
      details: 'another attempt committed',
    });
    h.attempt(0).status(Status.CANCELLED, 'another attempt committed');
    await h.settle();
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
      expect.objectContaining({ attempt: 2, cancelReason: 'per-attempt-timeout', loserCapMs: undefined }),
    ]);
    expect(h.attempts).toHaveLength(2);
    clock.advance(200);
    expect(h.attempts).toHaveLength(3); // the retry went anyway
  });
});
