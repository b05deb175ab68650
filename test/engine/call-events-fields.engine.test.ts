/**
 * Fields of the events that mutation testing found unasserted (stop 65): attempt-start's previousRpcAttempts, a
 * successful call-end's missing reason after a refused hedge, call-end's durationMs, and the throttled event's gate
 * name for a gate without one.
 */
import { describe, expect, it } from 'vitest';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

const refuseAll = (name?: string): RetryGate => ({
  ...(name === undefined ? {} : { name }),
  allowAttempt: () => false,
  recordSuccess() {},
  recordFailure() {},
});

describe('event fields', () => {
  it('attempt-start counts the attempts before it, as grpc-previous-rpc-attempts does', () => {
    const h = engineCall(retryPolicy());
    for (let i = 0; i < 2; i++) {
      h.attempt(i).fail();
      h.clock.runNext();
    }
    h.attempt(2).succeed();
    expect(eventsOfType(h.events, 'attempt-start').map((e) => [e.attempt, e.previousRpcAttempts])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
    ]);
    expect(h.attempt(2).header('grpc-previous-rpc-attempts')).toBe('2');
  });

  it('a call that succeeds has no end reason, even after a hedge was refused', () => {
    const h = engineCall(hedgingPolicy(), { interceptor: { gate: refuseAll('no') } });
    h.clock.advance(100);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
    h.attempt(0).succeed();
    const end = eventsOfType(h.events, 'call-end')[0];
    expect(end).toMatchObject({ code: Status.OK, attempts: 1 });
    expect(end).not.toHaveProperty('reason');
  });

  it('call-end gives the time since the call started, and the throttled event names a gate without a name "gate"', () => {
    const h = engineCall(retryPolicy(), { interceptor: { gate: refuseAll() } });
    h.clock.advance(37);
    h.attempt(0).fail();
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ gate: 'gate', kind: 'retry', attempt: 2 }),
    ]);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.UNAVAILABLE, reason: 'throttled', durationMs: 37, attempts: 1 }),
    ]);
  });

  it("committed comes before the losers' attempt-end, and a committed listener may end the call", async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }));
    h.attempt(1).headers();
    const order = h.events
      .filter((e) => e.type === 'committed' || e.type === 'attempt-end')
      .map((e) => `${e.type} ${e.attempt}`);
    expect(order).toEqual(['committed 2', 'attempt-end 1']);

    const cancelling = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'committed') cancelling.call.cancelWithStatus(Status.CANCELLED, 'seen enough');
        },
      },
    });
    cancelling.attempt(1).headers();
    await cancelling.settle();
    expect(cancelling.status.code).toBe(Status.CANCELLED);
    expect(cancelling.attempts.every((a) => a.cancelled !== undefined)).toBe(true);
    expect(cancelling.eventTypes().filter((t) => t === 'call-end')).toHaveLength(1);
    expect(cancelling.received.headers).toEqual([]);
  });
});
