/**
 * Hedging under interceptors below the retry interceptor, as an outside audit of hedging in interceptor stacks ran
 * it. A losing hedge whose start an interceptor still holds when another attempt commits: the cancel reaches
 * grpc-js's call before its listener does, so grpc-js never reports the attempt's end; the loser got no
 * `attempt-end`, and the tracing adapter kept its attempt span open. An interceptor that refuses an attempt
 * inside its `start` (a client-side circuit breaker): the next hedge was scheduled twice.
 */
import { describe, expect, it } from 'vitest';
import { engineCall, eventsOfType, hedgingPolicy, Status } from '../helpers/engine.js';

describe('a losing hedge that never reports its cancel', () => {
  it('gets its attempt-end when the winner commits, before the call-end', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.02s', maxAttempts: 3 }));
    h.clock.advance(40);
    expect(h.attempts).toHaveLength(3);
    const held = h.attempt(2);
    // As under an interceptor still awaiting a token: the cancel is taken, no status ever comes back.
    held.cancelWithStatus = (code, details) => {
      held.cancelled = { code, details };
    };
    h.attempt(0).succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(held.cancelled).toBeDefined();
    const ends = eventsOfType(h.events, 'attempt-end');
    expect(ends.map((e) => [e.attempt, e.cancelReason])).toEqual([
      [2, 'other-attempt-committed'],
      [3, 'other-attempt-committed'],
      [1, undefined],
    ]);
    const types = h.eventTypes();
    expect(types.lastIndexOf('attempt-end')).toBeLessThan(types.indexOf('call-end'));
    expect(eventsOfType(h.events, 'attempt-start')).toHaveLength(ends.length);
  });
});

describe('a first attempt refused inside its start', () => {
  it('sends the next hedge at once and schedules the one after it once', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.05s', maxAttempts: 3 }), { start: false });
    const first = h.attempt(0);
    const start = first.start.bind(first);
    first.start = (metadata, listener) => {
      start(metadata, listener);
      first.fail(); // UNAVAILABLE before start returns: non-fatal
    };
    h.start();
    await h.settle();
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => [e.attempt, e.delayMs, e.reason])).toEqual([
      [2, 0, 'non-fatal-status'],
      [3, 50, 'hedging-delay'],
    ]);
    expect(h.clock.pendingTimers).toBe(1);
    h.clock.advance(50);
    expect(h.attempts).toHaveLength(3);
  });
});
