/**
 * The hedging schedule under fake time (src/retry/hedge-scheduler.ts and the call around it): hedges stop at
 * maxAttempts, a refusal or a do-not-retry hint closes the schedule without ending the call while an attempt is
 * still out, waits with nothing in flight are waits, and the deadline's status names the last failure.
 */
import { describe, expect, it, vi } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import {
  depositsOnlyHedging,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

const UNAVAILABLE = Status.UNAVAILABLE;

describe('engine: the hedging schedule', () => {
  it('schedules no hedge past maxAttempts', () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }));
    h.clock.advance(1000);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => e.attempt)).toEqual([2, 3]);
    expect(h.attempts).toHaveLength(3);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a do-not-retry hint with another attempt out: the call waits for it, and its status is the result', () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(100);
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '-1' });
    expect(h.received.statuses).toHaveLength(0);
    h.attempt(1).status(UNAVAILABLE, 'second');
    expect(h.status.details).toBe('second');
  });

  it('the gate refusing every hedge: the call ends with the failure once nothing is out', () => {
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure(); // 1 of 2: hedges are refused
    const h = engineCall(hedgingPolicy(), { interceptor: { gate: throttle } });
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toHaveLength(0);
    h.attempt(0).status(UNAVAILABLE, 'only');
    expect(h.status.details).toBe('only');
    expect(eventsOfType(h.events, 'committed')).toEqual([]); // a refusal is no overflow: nothing commits
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a refusal with the next hedge due at once schedules it once', () => {
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure();
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s' }), { interceptor: { gate: throttle } });
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => [e.attempt, e.delayMs])).toEqual([[2, 0]]);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
  });

  it('the hedge budget refusing a hedge due at once: asked again one delay later, scheduled once', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      clock,
      interceptor: { adaptiveHedging: adaptive },
    });
    // Hedge 2 is due at once, with attempt 1 out and half a hedge in the budget: asked again later.
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => [e.attempt, e.delayMs])).toEqual([[2, 0]]);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ attempt: 2, gate: 'hedge-budget' }),
    ]);
    expect(clock.pendingTimers).toBe(1);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a hedge the budget holds back is not asked of the gate: a retry budget is not charged for it', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const gate = new RetryBudget({ clock });
    let asked = 0;
    const allow = gate.allowAttempt.bind(gate);
    gate.allowAttempt = (kind) => {
      asked += 1;
      return allow(kind);
    };
    const h = engineCall(hedgingPolicy({ maxAttempts: 2, hedgingDelay: '0.1s' }), {
      clock,
      interceptor: { adaptiveHedging: adaptive, gate },
    });
    clock.advance(1000); // the budget refuses, and the call asks it again every delay
    expect(h.attempts).toHaveLength(1);
    expect(asked).toBe(0); // nothing withdrawn: only the call's deposit went in
    expect(eventsOfType(h.events, 'throttled').map((e) => e.gate)).toEqual(['hedge-budget']);
  });

  it("once the budget allows, the gate's refusal is the one reported, and hedging stops", () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, maxExtraLoad: 0.5 }); // its floor pays for a first hedge
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure();
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      clock,
      interceptor: { adaptiveHedging: adaptive, gate: throttle },
    });
    clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled').map((e) => e.gate)).toEqual(['retry-throttle']);
  });

  it('a wait with nothing in flight is counted as waiting; the hedge after it goes out as a hedge', () => {
    const h = engineCall(hedgingPolicy());
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '250' });
    h.clock.advance(250);
    h.attempt(1).succeed();
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ retryDelayMs: 250 });
  });

  it('a hedge due after a wait with nothing in flight is asked of the gate when decided, once, as a retry is', () => {
    // A gate that counts what it is asked, and allows only while told to.
    let allow = true;
    const asked: string[] = [];
    const gate = {
      allowAttempt: (kind: string) => {
        asked.push(kind);
        return allow;
      },
      recordFailure: () => {},
      recordSuccess: () => {},
    };
    const h = engineCall(hedgingPolicy(), { interceptor: { gate } });
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '250' });
    expect(asked).toEqual(['hedge']); // at the failure, before the wait
    allow = false; // refusing now changes nothing: the leave was given for this hedge
    h.clock.advance(250);
    expect(h.attempts).toHaveLength(2);
    expect(asked).toEqual(['hedge']);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);

    // Refused when decided: no wait, the failure is the call's at once.
    const refused = engineCall(hedgingPolicy(), { interceptor: { gate } });
    refused.attempt(0).status(UNAVAILABLE, 'pushed', { 'grpc-retry-pushback-ms': '250' });
    expect(refused.status.details).toBe('pushed');
    expect(eventsOfType(refused.events, 'call-end')[0]).toMatchObject({
      reason: 'throttled',
      retryDelayMs: 0,
    });
    expect(refused.clock.pendingTimers).toBe(0);
  });

  it('a hedge allowed before its wait still checks the request when the wait is over', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(hedgingPolicy(), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    h.call.sendMessage(buffer);
    h.call.halfClose();
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '250' });
    buffer.write('1'); // during the wait: a resend would carry other data
    h.clock.advance(250);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'request-changed' });
    warn.mockRestore();
  });

  it("the deadline's status names the last failure when no attempt is out, or when grpc-js gives the one out none", () => {
    const atOnce = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), { deadlineMs: 300 });
    atOnce.attempt(0).status(UNAVAILABLE, 'first');
    expect(atOnce.attempts).toHaveLength(2);
    atOnce.clock.advance(400);
    expect(atOnce.status.details).toBe('Deadline exceeded while hedging (last attempt: UNAVAILABLE first)');
    const waiting = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), { deadlineMs: 300 });
    waiting.attempt(0).status(UNAVAILABLE, 'pushed', { 'grpc-retry-pushback-ms': '500' });
    waiting.clock.advance(300);
    expect(waiting.attempts).toHaveLength(1);
    expect(waiting.status.details).toBe('Deadline exceeded while hedging (last attempt: UNAVAILABLE pushed)');
  });

  it('a listener that cancels on the first hedge-scheduled leaves no hedge timer', async () => {
    let cancel = () => {};
    const h = engineCall(hedgingPolicy(), {
      start: false,
      interceptor: { onEvent: (e) => e.type === 'hedge-scheduled' && cancel() },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    h.start();
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });

  it('adaptive hedging learns nothing from a commit forced by the replay buffer', () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false });
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), {
      clock,
      type: 'client-stream',
      interceptor: { adaptiveHedging: adaptive, perRpcBufferBytes: 100 },
    });
    clock.advance(20);
    h.call.sendMessage(Buffer.alloc(500));
    expect(eventsOfType(h.events, 'committed')[0]?.reason).toBe('replay-buffer');
    h.attempt(0).succeed();
    expect(adaptive.delayOf('/test.Svc/Do')).toBeUndefined();
  });
});

describe('engine: a hedge timer that fires late', () => {
  /** A fake clock whose reading runs `lag` ms ahead of its timers: a timer fires that late. */
  function laggingClock(fake: FakeClock): { clock: Clock; lag: (ms: number) => void } {
    let lag = 0;
    return {
      clock: {
        now: () => fake.now() + lag,
        setTimer: (callback, delayMs) => fake.setTimer(callback, delayMs),
        clearTimer: (handle) => fake.clearTimer(handle),
      },
      lag: (ms) => {
        lag = ms;
      },
    };
  }

  function lateHedge(policy: Record<string, unknown> = {}, adaptiveHedging?: AdaptiveHedging) {
    const fake = new FakeClock(T0);
    const { clock, lag } = laggingClock(fake);
    const h = engineCall(hedgingPolicy({ maxAttempts: 2, ...policy }), {
      clock: fake,
      interceptor: { clock, ...(adaptiveHedging ? { adaptiveHedging } : {}) },
    });
    lag(20); // the loop was held: the timer fires 20 ms after it was due
    fake.advance(100);
    return h;
  }

  it('lets an answer that came in meanwhile commit the call first: no hedge goes', async () => {
    const h = lateHedge();
    expect(h.attempts).toHaveLength(1); // the hedge waits for the poll
    h.attempt(0).succeed('first');
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['first']);
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
  });

  it('sends the hedge after the poll when no answer came', async () => {
    const h = lateHedge();
    await h.settle();
    expect(h.attempts).toHaveLength(2);
    expect(h.attempt(1).header('grpc-previous-rpc-attempts')).toBe('1');
    h.attempt(1).succeed('hedge');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(0).cancelled).toBeDefined();
  });

  it('sends no hedge for a call cancelled before the poll', async () => {
    const h = lateHedge();
    h.call.cancelWithStatus(Status.CANCELLED, 'by the application');
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('sends one hedge when the first attempt fails (non-fatal) before the poll', async () => {
    const h = lateHedge({ maxAttempts: 3 });
    h.attempt(0).fail(UNAVAILABLE);
    await h.settle();
    // The failure sends the next hedge at once; the late timer's hedge does not go as well.
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'hedge-sent')).toHaveLength(1);
  });

  it('ends the call with the last failure when the only attempt fails with a fatal status before the poll', async () => {
    const h = lateHedge();
    h.attempt(0).fail(Status.INTERNAL);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.INTERNAL);
  });

  describe('or early instead: before the clock says the hedge is due', () => {
    // Node arms a timer from the event loop's cached time, and `Date.now()` ticks apart from it: a timer may fire
    // while the clock still reads less than its due time.
    function earlyHedge(maxAttempts = 2) {
      const fake = new FakeClock(T0);
      const { clock, lag } = laggingClock(fake);
      const h = engineCall(hedgingPolicy({ maxAttempts }), { clock: fake, interceptor: { clock } });
      lag(-2); // from now on the clock reads 2 ms behind the timers
      fake.advance(100);
      return { h, fake, lag };
    }

    it('waits the rest of the delay as the clock reads it, then sends the hedge', () => {
      const { h, fake } = earlyHedge();
      expect(h.attempts).toHaveLength(1);
      fake.advance(1);
      expect(h.attempts).toHaveLength(1);
      fake.advance(1);
      expect(h.attempts).toHaveLength(2);
      expect(h.attempt(1).header('grpc-previous-rpc-attempts')).toBe('1');
    });

    it('sends no hedge for a call whose first attempt answers in the meantime', async () => {
      const { h, fake } = earlyHedge();
      fake.advance(1);
      h.attempt(0).succeed('first');
      await h.settle();
      fake.advance(10);
      expect(h.attempts).toHaveLength(1);
      expect(h.status.code).toBe(Status.OK);
      expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
    });

    it('waits once per hedge: a clock that falls further behind does not hold the hedge back again', () => {
      const { h, fake, lag } = earlyHedge(3);
      lag(-10);
      fake.advance(2);
      expect(h.attempts).toHaveLength(2);
      // The next hedge's timer is set from the clock as it reads now: it is on time, and the hedge goes.
      fake.advance(99);
      expect(h.attempts).toHaveLength(2);
      fake.advance(1);
      expect(h.attempts).toHaveLength(3);
    });
  });

  describe('what adaptive hedging learns', () => {
    /** Adaptive hedging with no budget, and the outcomes the engine reports to it. */
    function recording() {
      const adaptive = new AdaptiveHedging({ budget: false });
      const outcomes: { delayUsedMs: number; latencyMs: number; superseded: boolean }[] = [];
      const record = adaptive.recordOutcome.bind(adaptive);
      adaptive.recordOutcome = (method, delayUsedMs, latencyMs, superseded = false) => {
        outcomes.push({ delayUsedMs, latencyMs, superseded });
        record(method, delayUsedMs, latencyMs, superseded);
      };
      return { adaptive, outcomes };
    }

    it('nothing from a first attempt that answered while its hedge waited for the poll', async () => {
      const { adaptive, outcomes } = recording();
      const h = lateHedge({}, adaptive);
      h.attempt(0).succeed('first');
      await h.settle();
      expect(h.status.code).toBe(Status.OK);
      expect(outcomes).toEqual([]);
    });

    it('the first attempt that answered after the late hedge went: it outlived the delay', async () => {
      const { adaptive, outcomes } = recording();
      const h = lateHedge({}, adaptive);
      await h.settle();
      expect(h.attempts).toHaveLength(2);
      h.attempt(0).succeed('first');
      await h.settle();
      // The clock reads 20 ms ahead of the timers: 100 ms of fake time is 120 ms on the call's clock.
      expect(outcomes).toEqual([{ delayUsedMs: 100, latencyMs: 120, superseded: false }]);
    });

    it('the first attempt that answered while a later hedge waited for the poll: an earlier hedge went on time', async () => {
      const { adaptive, outcomes } = recording();
      const fake = new FakeClock(T0);
      const { clock, lag } = laggingClock(fake);
      const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
        clock: fake,
        interceptor: { clock, adaptiveHedging: adaptive },
      });
      fake.advance(100);
      expect(h.attempts).toHaveLength(2); // on time: sent at once
      lag(20);
      fake.advance(100);
      expect(h.attempts).toHaveLength(2); // late: waits for the poll
      h.attempt(0).succeed('first');
      await h.settle();
      expect(h.attempts).toHaveLength(2);
      expect(outcomes).toEqual([{ delayUsedMs: 100, latencyMs: 220, superseded: false }]);
    });

    it('a timer on time: the first attempt that answered after its hedge went is learned from', async () => {
      const { adaptive, outcomes } = recording();
      const clock = new FakeClock(T0);
      const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), {
        clock,
        interceptor: { adaptiveHedging: adaptive },
      });
      clock.advance(100);
      expect(h.attempts).toHaveLength(2);
      clock.advance(5);
      h.attempt(0).succeed('first');
      await h.settle();
      expect(outcomes).toEqual([{ delayUsedMs: 100, latencyMs: 105, superseded: false }]);
    });
  });
});
