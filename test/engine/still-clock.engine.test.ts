/**
 * A clock that stands still while timers run: a test that freezes `Date` (`vi.setSystemTime`, mockdate,
 * `useFakeTimers({ toFake: ['Date'] })`) with the real timers (runners-and-fake-timers audit). grpc-js's own
 * retries time a call's deadline once, from its start; before, each retry here got a whole deadline of its own
 * (4 attempts and 4 × the deadline where grpc-js made 1), and every hedge went at twice its delay.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';

/** A clock whose timers run on `timers` (advance it) and whose `now()` reads `now`. */
function timedBy(timers: FakeClock, now: () => number): Clock {
  return {
    now,
    setTimer: (callback, delayMs) => timers.setTimer(callback, delayMs),
    clearTimer: (handle) => timers.clearTimer(handle),
  };
}

/** Timers on `timers` (advance it), and a `now()` that never moves from T0. */
function stillClock(): { clock: Clock; timers: FakeClock } {
  const timers = new FakeClock(T0);
  return { timers, clock: timedBy(timers, () => T0) };
}

const RETRY_DEADLINE = retryPolicy({
  maxAttempts: 4,
  initialBackoff: '0.01s',
  maxBackoff: '0.01s',
  retryableStatusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'],
});

describe('engine: a deadline under a clock that stands still', () => {
  it("an attempt's deadline status after the deadline timer fired ends the call: no retry", () => {
    const { clock, timers } = stillClock();
    const h = engineCall(RETRY_DEADLINE, { interceptor: { clock }, callOptions: { deadline: T0 + 300 } });
    timers.advance(300); // the call's deadline timer; grpc-js's timer of the attempt is due too
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.300s');
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
  });

  it("the deadline timer ends a retry's wait the attempt's deadline status started", () => {
    const { clock, timers } = stillClock();
    const h = engineCall(RETRY_DEADLINE, { interceptor: { clock }, callOptions: { deadline: T0 + 300 } });
    timers.advance(299);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.299s');
    expect(eventsOfType(h.events, 'retry-scheduled')).toHaveLength(1); // the clock says 300 ms are left
    timers.advance(1);
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(timers.pendingTimers).toBe(0);
  });

  it('retries that fail fast stop at the deadline, as the timers count it', () => {
    const { clock, timers } = stillClock();
    const h = engineCall(retryPolicy({ maxAttempts: 5, initialBackoff: '0.1s', maxBackoff: '0.1s' }), {
      interceptor: { clock },
      callOptions: { deadline: T0 + 250 },
    });
    h.attempt(0).fail(); // UNAVAILABLE at once; backoff 100 ms (× jitter 1 with random 0.5)
    timers.advance(100);
    h.attempt(1).fail();
    timers.advance(100);
    h.attempt(2).fail();
    timers.advance(50); // 250 ms: the deadline, during the third backoff
    expect(h.attempts).toHaveLength(3);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while waiting to retry/);
  });

  it('an attempt out at the deadline is cancelled then: its own grpc-js timer, read off the clock, is not due', () => {
    const { clock, timers } = stillClock();
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      interceptor: { clock },
      callOptions: { deadline: T0 + 200 },
    });
    timers.advance(140);
    h.attempt(0).fail(); // the retry goes 10 ms later, with a whole 200 ms deadline for grpc-js
    timers.advance(10);
    expect(h.attempts).toHaveLength(2);
    timers.advance(49);
    expect(h.received.statuses).toEqual([]);
    timers.advance(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while retrying \(last failed attempt: UNAVAILABLE/);
    expect(h.attempt(1).cancelled).toBeDefined();
  });

  it('once the deadline timer fired, a clock a little behind it still reads the deadline as passed', () => {
    // The clock stops at 290 ms: 10 ms behind the timers when the 300 ms deadline timer fires, within the slack
    // Node's timers run ahead of the clock by, so the attempt out gets the grace for its own deadline status.
    const timers = new FakeClock(T0);
    const clock = timedBy(timers, () => Math.min(timers.now(), T0 + 290));
    const h = engineCall(retryPolicy({ maxAttempts: 3, initialBackoff: '0.001s', maxBackoff: '0.001s' }), {
      interceptor: { clock },
      callOptions: { deadline: T0 + 300 },
    });
    timers.advance(300);
    expect(h.received.statuses).toEqual([]);
    timers.advance(1);
    h.attempt(0).fail(); // read as 10 ms before the deadline, a 1 ms backoff would fit
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([]);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
  });

  it('a clock that stepped back does not hold a hedge back', () => {
    const timers = new FakeClock(T0);
    let offset = 0;
    const clock = timedBy(timers, () => timers.now() + offset);
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.05s', maxAttempts: 3 }), {
      interceptor: { clock },
    });
    timers.advance(20);
    offset = -10_000; // NTP, or a VM resumed
    timers.advance(30);
    expect(h.attempts).toHaveLength(2);
  });

  it('a committed call is left to its attempt: the deadline timer is gone', () => {
    const { clock, timers } = stillClock();
    const h = engineCall(retryPolicy(), { interceptor: { clock }, callOptions: { deadline: T0 + 300 } });
    h.attempt(0).headers();
    expect(timers.pendingTimers).toBe(0);
  });

  it('the slack is 20 ms: a clock 20 ms behind at the deadline gives the attempt its grace, 21 ms behind does not', () => {
    for (const [behind, cancelledAtOnce] of [
      [20, false],
      [21, true],
    ] as const) {
      const timers = new FakeClock(T0);
      const clock = timedBy(timers, () => Math.min(timers.now(), T0 + 300 - behind));
      const h = engineCall(retryPolicy(), { interceptor: { clock }, callOptions: { deadline: T0 + 300 } });
      timers.advance(300);
      expect(h.attempt(0).cancelled !== undefined).toBe(cancelledAtOnce);
    }
  });

  it('a deadline timer that fired the grace (100 ms) late or more ends the call at once: the grace is used up', () => {
    for (const [late, endedAtOnce] of [
      [99, false],
      [100, true],
    ] as const) {
      const timers = new FakeClock(T0);
      // the event loop was held: the clock reads `late` ms past the deadline when the timer runs
      const clock = timedBy(timers, () => (timers.now() >= T0 + 300 ? timers.now() + late : timers.now()));
      const h = engineCall(retryPolicy(), { interceptor: { clock }, callOptions: { deadline: T0 + 300 } });
      timers.advance(300);
      expect(h.received.statuses.length > 0).toBe(endedAtOnce);
      timers.advance(1);
      expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    }
  });

  it('a hedge under 20 ms goes at up to twice its delay under a still clock; one of 20 ms at its delay', () => {
    const short = stillClock();
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.01s', maxAttempts: 2 }), {
      interceptor: { clock: short.clock },
    });
    short.timers.advance(10); // taken for a timer a little ahead of the clock: the delay is waited out again
    expect(h.attempts).toHaveLength(1);
    short.timers.advance(10);
    expect(h.attempts).toHaveLength(2);
    const edge = stillClock();
    const e = engineCall(hedgingPolicy({ hedgingDelay: '0.02s', maxAttempts: 2 }), {
      interceptor: { clock: edge.clock },
    });
    edge.timers.advance(20);
    expect(e.attempts).toHaveLength(2);
  });

  it('a hedge timer that fires a millisecond before the clock says it is due waits that millisecond', () => {
    const timers = new FakeClock(T0);
    const clock = timedBy(timers, () => (timers.now() >= T0 + 50 ? timers.now() - 1 : timers.now()));
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.05s', maxAttempts: 2 }), {
      interceptor: { clock },
    });
    timers.advance(50);
    expect(h.attempts).toHaveLength(1);
    timers.advance(1);
    expect(h.attempts).toHaveLength(2);
  });

  it('a hedge goes at its delay, not at twice it', () => {
    const { clock, timers } = stillClock();
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 }), { interceptor: { clock } });
    timers.advance(100);
    expect(h.attempts).toHaveLength(2);
    timers.advance(100);
    expect(h.attempts).toHaveLength(3);
  });
});
