import { describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { engineCall, eventsOfType, hedgingPolicy, Status, T0 } from '../helpers/engine.js';

const UNAVAILABLE = Status.UNAVAILABLE;

describe('engine: hedging under fake time', () => {
  it('sends attempt k at (k-1) x hedgingDelay, up to maxAttempts', () => {
    const h = engineCall(hedgingPolicy());
    const starts: number[] = [];
    const record = () => {
      while (starts.length < h.attempts.length) starts.push(h.clock.now() - T0);
    };
    record();
    h.clock.advance(99);
    record();
    expect(h.attempts).toHaveLength(1);
    h.clock.advance(1);
    record();
    h.clock.advance(100);
    record();
    h.clock.advance(1000);
    expect(starts).toEqual([0, 100, 200]);
    expect(h.attempts.map((a) => a.header('grpc-previous-rpc-attempts'))).toEqual([undefined, '1', '2']);
    expect(eventsOfType(h.events, 'attempt-start').map((e) => e.kind)).toEqual([
      'original',
      'hedge',
      'hedge',
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('the first attempt to commit wins; the others are cancelled and say why', async () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(200);
    h.attempt(1).succeed('from 2');
    await h.settle();
    expect(h.received.messages).toEqual(['from 2']);
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.attempt(2).cancelled).toBeDefined();
    const ends = eventsOfType(h.events, 'attempt-end');
    expect(
      ends
        .filter((e) => e.cancelReason === 'other-attempt-committed')
        .map((e) => e.attempt)
        .sort(),
    ).toEqual([1, 3]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a non-fatal status sends the next hedge at once, and the schedule goes on from there', () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 4 }));
    h.clock.advance(30);
    h.attempt(0).fail();
    expect(h.attempts).toHaveLength(2);
    h.clock.advance(99);
    expect(h.attempts).toHaveLength(2);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(3);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => [e.attempt, e.delayMs, e.reason])).toEqual([
      [2, 100, 'hedging-delay'],
      [2, 0, 'non-fatal-status'],
      [3, 100, 'hedging-delay'],
      [4, 100, 'hedging-delay'],
    ]);
  });

  it('hedge-sent counts the hedges that went; hedge-scheduled also fires for those that never do', async () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }));
    h.clock.advance(100); // hedge 2 goes
    h.clock.advance(30);
    h.attempt(0).succeed(); // before hedge 3's time: it never goes
    await h.settle();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => e.attempt)).toEqual([2, 3]);
    expect(eventsOfType(h.events, 'hedge-sent').map((e) => [e.attempt, e.sinceCallStartMs])).toEqual([
      [2, 100],
    ]);
    const types = h.events.map((e) => e.type);
    expect(types.indexOf('hedge-sent')).toBe(types.lastIndexOf('attempt-start') + 1);

    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    throttle.recordFailure(); // 1 of 2 left: hedges are refused
    const refused = engineCall(hedgingPolicy(), { interceptor: { gate: throttle } });
    refused.clock.advance(1000);
    expect(eventsOfType(refused.events, 'hedge-scheduled')).not.toHaveLength(0);
    expect(eventsOfType(refused.events, 'throttled')).not.toHaveLength(0);
    expect(eventsOfType(refused.events, 'hedge-sent')).toHaveLength(0);
  });

  it('a pushback delays the next hedge by exactly its value; with nothing in flight the call waits', () => {
    const h = engineCall(hedgingPolicy());
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '250' });
    h.clock.advance(249);
    expect(h.attempts).toHaveLength(1);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'call-end')).toHaveLength(0);
  });

  it('deadlineAwareBackoff: a pushback past the deadline with nothing in flight ends the call at once with the real status', () => {
    const h = engineCall(hedgingPolicy(), { deadlineMs: 200, interceptor: { deadlineAwareBackoff: true } });
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '500' });
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'attempt 1 failed' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: UNAVAILABLE, reason: 'deadline-aware', attempts: 1 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
    // Within the deadline the server's delay is waited out, as without the option; with an attempt in flight the
    // delayed hedge is only a timer beside it, and the attempt may still answer.
    const within = engineCall(hedgingPolicy(), {
      deadlineMs: 600,
      interceptor: { deadlineAwareBackoff: true },
    });
    within.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '500' });
    within.clock.advance(500);
    expect(within.attempts).toHaveLength(2);
    const inFlight = engineCall(hedgingPolicy(), {
      deadlineMs: 300,
      interceptor: { deadlineAwareBackoff: true },
    });
    inFlight.clock.advance(100);
    inFlight.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '500' });
    expect(inFlight.received.statuses).toEqual([]);
    inFlight.attempt(1).succeed();
    expect(inFlight.status.code).toBe(Status.OK);
  });

  it('a hedge after a pushback with nothing in flight is charged to a RetryBudget when the wait begins, as a retry (docs/overload.md)', async () => {
    const clock = new FakeClock(T0);
    const budget = new RetryBudget({ clock, maxExtraLoad: 1 });
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), {
      clock,
      deadlineMs: 200,
      interceptor: { gate: budget },
    });
    expect(budget.tokens).toBe(1); // the call's deposit
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '500' });
    expect(budget.tokens).toBe(0);
    clock.advance(200); // the deadline ends the wait: the hedge never goes, and stays withdrawn
    await h.settle();
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(1);
    expect(budget.tokens).toBe(0);
    // deadlineAwareBackoff begins no wait that the deadline would end: nothing is withdrawn.
    const aware = new RetryBudget({ clock, maxExtraLoad: 1 });
    const a = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), {
      clock,
      deadlineMs: 200,
      interceptor: { gate: aware, deadlineAwareBackoff: true },
    });
    a.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '500' });
    expect(a.status.code).toBe(UNAVAILABLE);
    expect(aware.tokens).toBe(1);
  });

  it('a do-not-retry pushback stops new hedges; the call ends with the last failure when none is left', () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(100);
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '-1' });
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).fail(UNAVAILABLE);
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a fatal status cancels everything and is the result', async () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(100);
    h.attempt(1).fail(Status.INVALID_ARGUMENT);
    await h.settle();
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);
    expect(h.attempt(0).cancelled).toBeDefined();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
  });

  it('when every attempt fails, the last status is the result', () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(200);
    h.attempt(2).status(UNAVAILABLE, 'third');
    h.attempt(0).status(UNAVAILABLE, 'first');
    h.attempt(1).status(UNAVAILABLE, 'second');
    expect(h.status.details).toBe('second');
  });

  it("a server's DEADLINE_EXCEEDED is non-fatal while the call's deadline is ahead", () => {
    const h = engineCall(hedgingPolicy({ nonFatalStatusCodes: ['DEADLINE_EXCEEDED'] }), {
      deadlineMs: 10_000,
    });
    h.attempt(0).fail(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it("the deadline passing while a hedge waits: grpc-js's deadline status of the attempt out is the call's, as without the interceptor", async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), { deadlineMs: 300 });
    h.clock.advance(300);
    await h.settle();
    expect(h.received.statuses).toEqual([]);
    h.attempt(0).status(
      Status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.300s,remote_addr=127.0.0.1:5000',
    );
    await h.settle();
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded after 0.300s,remote_addr=127.0.0.1:5000',
    });
    expect(h.received.statuses).toHaveLength(1);
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
    expect(h.clock.pendingTimers).toBe(0); // the fallback timer went with the call
  });

  it('the deadline passing with hedges out: the status of the one grpc-js ends first, counted as a hedge', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s' }), { deadlineMs: 300 });
    h.clock.advance(300);
    expect(h.attempts).toHaveLength(3);
    h.attempt(2).status(
      Status.DEADLINE_EXCEEDED,
      'Deadline exceeded after 0.100s,remote_addr=127.0.0.1:5000',
    );
    await h.settle();
    expect(h.status.details).toBe(
      'Deadline exceeded,previous attempts: 2,current attempt: 0.100s,remote_addr=127.0.0.1:5000',
    );
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('throttling stops further hedges', () => {
    const config = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 });
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    const first = engineCall(config, { interceptor: { gate: throttle } });
    expect(first.attempts).toHaveLength(3);
    first.attempt(0).fail(); // 2 -> 1: no longer above half
    const second = engineCall(config, { clock: first.clock, interceptor: { gate: throttle } });
    expect(second.attempts).toHaveLength(1);
    expect(eventsOfType(second.events, 'throttled')[0]).toMatchObject({ kind: 'hedge', attempt: 2 });
  });

  it('hedgingDelay "0s" sends every attempt at once; messages and the half-close go to each (bidi)', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s' }), { type: 'bidi' });
    h.call.sendMessage('a');
    h.call.halfClose();
    expect(h.attempts.map((a) => [a.messages, a.halfClosed])).toEqual([
      [['a'], true],
      [['a'], true],
      [['a'], true],
    ]);
  });
});

describe('engine: a cancel from inside a listener wins (hedging)', () => {
  const cases: [string, (e: RetryEvent) => boolean][] = [
    ['attempt-end', (e) => e.type === 'attempt-end'],
    [
      'hedge-scheduled after a failure',
      (e) => e.type === 'hedge-scheduled' && e.reason === 'non-fatal-status',
    ],
    ['attempt-start of the hedge', (e) => e.type === 'attempt-start' && e.attempt === 2],
  ];
  it.each(cases)('cancelled in the %s listener: CANCELLED, once, nothing left', async (_name, when) => {
    let cancel: () => void = () => {};
    let fired = false;
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }), {
      start: false,
      interceptor: {
        onEvent: (e) => {
          if (!fired && when(e)) {
            fired = true;
            cancel();
          }
        },
      },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'cancelled by the listener');
    h.start();
    h.attempt(0).fail();
    await h.settle();
    expect(fired).toBe(true);
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.clock.pendingTimers).toBe(0);
    for (const a of h.attempts) expect(a.ended || !a.started).toBe(true);
    // Every attempt that started has its end, the one cancelled before grpc-js started it included.
    const started = eventsOfType(h.events, 'attempt-start').map((e) => e.attempt);
    expect(
      eventsOfType(h.events, 'attempt-end')
        .map((e) => e.attempt)
        .sort(),
    ).toEqual(started);
  });
});
