/**
 * What the hedging schedule promises that the other suites leave unchecked (src/retry/hedge-scheduler.ts): the
 * request-changed warning for a hedge (and only for that), what a hedge timer does when it fires on time or one
 * millisecond late, a replay-buffer commit at a hedge's due time, a held hedge released past the deadline, which
 * gate is asked and what it is told for a replacement and for a latency hedge, what the hedge budget pays for a
 * replacement, a clock only asked to clear timers it set, and what adaptive hedging learns when a hedge wins.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import type { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import type { Clock, TimerHandle } from '../../src/shared/clock.js';
import type { GatedAttemptKind, RetryGate } from '../../src/shared/retry-gate.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  depositsOnlyHedging,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  METHOD,
  Status,
  T0,
} from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const REQUEST_CHANGED = 'GRPC_RETRY_HEDGING_REQUEST_CHANGED';

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown): void {
  call.sendMessageWithContext({ callback: () => {} }, message);
}

/** A gate that records the kinds it is asked about, and allows while `allow` says so. */
function recordingGate(allow: (kind: GatedAttemptKind, asked: number) => boolean = () => true) {
  const asked: GatedAttemptKind[] = [];
  const gate: RetryGate = {
    allowAttempt: (kind) => {
      asked.push(kind);
      return allow(kind, asked.length);
    },
    recordFailure() {},
    recordSuccess() {},
  };
  return { gate, asked };
}

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

describe('engine: a hedge not sent because the request changed', () => {
  it('is reported once (GRPC_RETRY_HEDGING_REQUEST_CHANGED), and no later hedge goes', () => {
    const warnings = captureWarnings();
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    buffer.write('1'); // its callback came: the writer may reuse it
    h.call.halfClose();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
    expect(warnings.map((w) => w.code)).toEqual([REQUEST_CHANGED]);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('is the only hedge reported so: a hedge the gate refuses gives no such warning', () => {
    const warnings = captureWarnings();
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure(); // 1 of 2: hedges are refused
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      type: 'client-stream',
      interceptor: { gate: throttle },
    });
    write(h.call, Buffer.from('0'));
    h.call.halfClose();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
    h.attempt(0).status(Status.UNAVAILABLE, 'only');
    expect(h.status.details).toBe('only');
    expect(warnings).toEqual([]);
  });
});

describe('engine: a hedge timer', () => {
  /** A clock whose timers fire only when the test fires them, one at a time, the clock then reading their due time. */
  function steppedClock() {
    let now = T0;
    let nextId = 0;
    const timers = new Map<TimerHandle, { callback: () => void; dueAt: number }>();
    const clock: Clock = {
      now: () => now,
      setTimer: (callback, delayMs) => {
        nextId += 1;
        timers.set(nextId, { callback, dueAt: now + Math.max(0, delayMs) });
        return nextId;
      },
      clearTimer: (handle) => {
        timers.delete(handle);
      },
    };
    const dueTimes = () => [...timers.values()].map((t) => t.dueAt - T0);
    const fireOne = () => {
      const [handle, timer] = [...timers.entries()].sort((a, b) => a[1].dueAt - b[1].dueAt)[0] ?? [];
      if (handle === undefined || timer === undefined) throw new Error('no timer set');
      timers.delete(handle);
      now = Math.max(now, timer.dueAt);
      timer.callback();
    };
    return { clock, dueTimes, fireOne };
  }

  it('that fires on time sends its hedge from its own callback, and sets only the next hedge timer', () => {
    const { clock, dueTimes, fireOne } = steppedClock();
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), { interceptor: { clock } });
    expect(dueTimes()).toEqual([100]);
    fireOne();
    // Another timer first (of 0 ms) would be a later turn of the event loop, after an I/O poll: the hedge late.
    expect(h.attempts).toHaveLength(2);
    expect(dueTimes()).toEqual([200]);
    fireOne();
    expect(h.attempts).toHaveLength(3);
    expect(dueTimes()).toEqual([]);
  });

  it('that fires 1 ms late (Node timers often do) still sends its hedge at once, not after the I/O poll', async () => {
    const fake = new FakeClock(T0);
    const { clock, lag } = laggingClock(fake);
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), { clock: fake, interceptor: { clock } });
    lag(1);
    fake.advance(100);
    expect(h.attempts).toHaveLength(2);
    // The first attempt's answer, read in the next poll, comes after the hedge: it wins, and the hedge is cancelled.
    h.attempt(0).succeed('first');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(1).cancelled).toBeDefined();
    expect(eventsOfType(h.events, 'hedge-sent')).toHaveLength(1);
  });
});

describe('engine: a hedged request the replay buffer cannot hold', () => {
  it('commits the attempt in flight as it is written, and no hedge is sent', () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      request: Buffer.alloc(500),
      interceptor: { perRpcBufferBytes: 100 },
    });
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.clock.pendingTimers).toBe(0);
  });
});

describe('engine: a held hedge released after the clock passed the deadline', () => {
  it('is not sent: the call ends at its deadline', async () => {
    const fake = new FakeClock(T0);
    const { clock, lag } = laggingClock(fake);
    const adaptive = new AdaptiveHedging({ clock: fake, budget: false });
    const config = hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 });
    const call = (deadlineMs?: number) =>
      engineCall(config, { clock: fake, deadlineMs, interceptor: { clock, adaptiveHedging: adaptive } });
    const a = call();
    fake.advance(10);
    const b = call(300);
    fake.advance(90);
    expect(a.attempts).toHaveLength(2); // the first hedge due since an answer goes
    fake.advance(10);
    expect(eventsOfType(b.events, 'hedge-held')).toEqual([expect.objectContaining({ attempt: 2 })]);
    // The event loop is held (a GC pause) past b's deadline; then another call's answer ends the stall.
    lag(1000);
    call().attempt(0).succeed();
    await b.settle();
    expect(b.attempts).toHaveLength(1);
    expect(b.received.statuses).toEqual([]); // grpc-js's deadline status of the attempt out is due
    b.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.300s');
    await b.settle();
    expect(b.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(eventsOfType(b.events, 'hedge-sent')).toEqual([]);
  });
});

describe('engine: the gates asked for a hedge, with adaptive hedging', () => {
  it("a replacement for a failed attempt: the interceptor's gate is asked for a hedge, and its refusal reported as one", () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const { gate, asked } = recordingGate(() => false);
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      clock,
      interceptor: { adaptiveHedging: adaptive, gate },
    });
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(asked).toEqual(['hedge']);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ attempt: 2, kind: 'hedge' }),
    ]);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
  });

  it("a latency hedge the budget pays for: the interceptor's gate is asked for a hedge", () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const config = hedgingPolicy({ maxAttempts: 2 });
    const other = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } }); // its deposit
    other.attempt(0).succeed();
    const { gate, asked } = recordingGate(() => false);
    const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive, gate } });
    clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(asked).toEqual(['hedge']);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ attempt: 2, kind: 'hedge' }),
    ]);
  });
});

describe('engine: a replacement sent with nothing in flight, and the hedge budget', () => {
  /** Two calls deposit one hedge's worth; the first call's only attempt fails non-fatally. */
  function twoCalls(allowReplacement: boolean) {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock);
    const config = hedgingPolicy({ maxAttempts: 3 });
    const { gate } = recordingGate((_kind, n) => n > 1 || allowReplacement); // the first ask: the replacement
    const a = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive, gate } });
    const b = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive, gate } });
    a.attempt(0).fail(Status.UNAVAILABLE);
    return { clock, a, b };
  }

  it('pays for it when the budget can: the next latency hedge of another call is refused', () => {
    const { clock, a, b } = twoCalls(true);
    expect(a.attempts).toHaveLength(2);
    clock.advance(100);
    expect(b.attempts).toHaveLength(1);
    expect(eventsOfType(b.events, 'throttled')).toEqual([
      expect.objectContaining({ attempt: 2, kind: 'hedge', gate: 'hedge-budget' }),
    ]);
  });

  it('counts no refusal when the budget holds none: the replacement goes, and the budget says it refused nothing', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock); // one call deposits half a hedge: none whole
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      clock,
      interceptor: { adaptiveHedging: adaptive },
    });
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(2);
    expect((adaptive.budget as HedgeBudget).denied).toBe(0);
    expect(eventsOfType(h.events, 'throttled')).toEqual([]);
  });

  it('pays nothing for one the gate refused: the next latency hedge of another call goes', () => {
    const { clock, a, b } = twoCalls(false);
    expect(a.attempts).toHaveLength(1);
    expect(a.status.code).toBe(Status.UNAVAILABLE);
    clock.advance(100);
    expect(b.attempts).toHaveLength(2);
    expect(eventsOfType(b.events, 'throttled')).toEqual([]);
  });
});

describe('engine: the clock is asked to clear only hedge timers it set', () => {
  it('through a hedge sent at its delay, the last one, and the commit', () => {
    const fake = new FakeClock(T0);
    const given = new Set<TimerHandle>();
    const cleared: TimerHandle[] = [];
    const clock: Clock = {
      now: () => fake.now(),
      setTimer: (callback, delayMs) => {
        const handle = fake.setTimer(callback, delayMs);
        given.add(handle);
        return handle;
      },
      clearTimer: (handle) => {
        cleared.push(handle);
        fake.clearTimer(handle);
      },
    };
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), { clock: fake, interceptor: { clock } });
    fake.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(cleared.filter((handle) => !given.has(handle))).toEqual([]);
  });
});

describe('engine: what adaptive hedging learns when a hedge wins', () => {
  it('that the first attempt outlived the delay, not that it answered: hedges that always win leave the delay alone', () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false, maxExtraLoad: 0.5 });
    const config = hedgingPolicy({ hedgingDelay: '0.5s', maxAttempts: 2 });
    for (let i = 0; i < 4; i++) {
      const h = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
      clock.advance(501);
      h.attempt(1).succeed();
      expect(h.status.code).toBe(Status.OK);
    }
    expect(adaptive.delayOf(METHOD)).toBe(500);
  });
});

describe('engine: a hedge-scheduled listener that cancels the call', () => {
  it('ends it with no hedge timer left behind', async () => {
    let cancel = () => {};
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      start: false,
      interceptor: { onEvent: (e) => e.type === 'hedge-scheduled' && cancel() },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'by the application');
    h.start();
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'by the application' });
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });
});
