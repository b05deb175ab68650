/**
 * A losing hedge whose start an interceptor below still holds when another attempt commits: the cancel reaches
 * grpc-js's call before its listener does, so grpc-js never reports the attempt's end. Found by an outside audit
 * of hedging under interceptor stacks: the loser got no `attempt-end`, and the tracing adapter kept its attempt
 * span open. A loser's end is now reported when it is cancelled, before the call's end.
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
