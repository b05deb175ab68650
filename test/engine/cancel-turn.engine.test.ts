/**
 * An attempt cancelled in the event-loop turn it was made in is cancelled on the next turn: grpc-js makes the call
 * under a started one a few microtasks later, and a cancel before that does not reach it (its stream would stay
 * open on the server). src/retry/event-loop-turn.ts. So is one cancelled while another attempt's status is handled
 * (src/retry/status-callback.ts). Everything else about the cancel happens at once.
 */
import { describe, expect, it } from 'vitest';
import { inTurn, markTurn } from '../../src/retry/event-loop-turn.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('event-loop turns', () => {
  it('a mark is in its turn until the next one, and a later mark is in the later turn', async () => {
    const first = markTurn();
    expect(inTurn(first)).toBe(true);
    await Promise.resolve(); // microtasks are the same turn
    expect(inTurn(first)).toBe(true);
    await nextTurn();
    expect(inTurn(first)).toBe(false);
    const second = markTurn();
    expect(second).not.toBe(first);
    expect(inTurn(second)).toBe(true);
  });
});

describe('engine: an attempt cancelled in the turn it was made in', () => {
  it('hedges made with an oversized request are cancelled on the next turn, and ended at once', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      interceptor: { perRpcBufferBytes: 400 },
      turnGuard: true,
      request: Buffer.alloc(1000),
    });
    // The engine is done with the hedges at once (committed to the first attempt)...
    expect(eventsOfType(h.events, 'committed')).toEqual([expect.objectContaining({ attempt: 1 })]);
    // ...but grpc-js is told on the next turn, once it has made the calls under them.
    expect(h.attempts.map((a) => a.cancelled !== undefined)).toEqual([false, false, false]);
    await nextTurn();
    expect(h.attempts.map((a) => a.cancelled?.code)).toEqual([undefined, Status.CANCELLED, Status.CANCELLED]);
    await h.settle();
    expect(eventsOfType(h.events, 'attempt-end').map((e) => [e.attempt, e.cancelReason])).toEqual([
      [2, 'other-attempt-committed'],
      [3, 'other-attempt-committed'],
    ]);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it("the application's cancel in the turn the call was made: the status at once, grpc-js's cancel a turn later", async () => {
    const h = engineCall(retryPolicy(), { turnGuard: true });
    h.call.cancelWithStatus(Status.CANCELLED, 'by the app');
    expect(h.attempt(0).cancelled).toBeUndefined();
    await Promise.resolve();
    expect(h.attempt(0).cancelled).toBeUndefined();
    await nextTurn();
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('an attempt cancelled in a later turn is cancelled at once', async () => {
    const h = engineCall(retryPolicy(), { turnGuard: true });
    await nextTurn();
    h.call.cancelWithStatus(Status.CANCELLED, 'by the app');
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
  });
});

describe("engine: attempts cancelled while another attempt's status is handled", () => {
  it('a fatal status: the call ends at once, the hedges still out are cancelled on the next turn', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 }), { turnGuard: true });
    h.clock.advance(200);
    await nextTurn(); // the hedges' own turn is over: only the status defers their cancel
    expect(h.attempts).toHaveLength(3);
    h.attempt(0).status(Status.INTERNAL, 'connection torn down');
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(h.attempts.map((a) => a.cancelled)).toEqual([undefined, undefined, undefined]);
    await nextTurn();
    expect(h.attempts.map((a) => a.cancelled?.code)).toEqual([undefined, Status.CANCELLED, Status.CANCELLED]);
  });

  it('an OK status commits: the others are cancelled on the next turn; a cancel in a later turn goes at once', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }), { turnGuard: true });
    h.clock.advance(100);
    await nextTurn();
    h.attempt(1).status(Status.OK, 'OK');
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(0).cancelled).toBeUndefined();
    await nextTurn();
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);

    const later = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }), { turnGuard: true });
    later.clock.advance(100);
    await nextTurn();
    later.attempt(1).headers(); // a commit on headers is not a status: at once
    expect(later.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
  });
});
