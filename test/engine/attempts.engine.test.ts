/**
 * The attempts of a call under fake time (src/retry/attempt-set.ts and the call around it): how each one starts,
 * reports its end once, is cancelled with the right reason, or is left running and read to its end; and which one
 * a replay-buffer overflow commits to.
 */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { retryOutcomeOf } from '../../src/retry/retry-outcome.js';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';

describe('engine: starting attempts', () => {
  it('a channel that refuses a retry ends the call with UNAVAILABLE, naming the attempt and the error', () => {
    const h = engineCall(retryPolicy(), {
      beforeAttempt: (i) => {
        if (i === 1) throw new Error('channel closed');
      },
    });
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.status).toMatchObject({
      code: Status.UNAVAILABLE,
      details: 'could not start attempt 2: channel closed',
    });
    expect(h.attempts).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a channel that refuses a retry: the call-end event and retryOutcomeOf say start-failed', () => {
    const h = engineCall(retryPolicy(), {
      beforeAttempt: (i) => {
        if (i === 1) throw new Error('channel closed');
      },
    });
    h.attempt(0).fail();
    h.clock.runNext();
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.UNAVAILABLE, attempts: 1, reason: 'start-failed' }),
    ]);
    expect(retryOutcomeOf(h.status)).toEqual({ attempts: 1, reason: 'start-failed' });
  });

  it('a channel that refuses a hedge after a pushback with nothing in flight: reason start-failed', async () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 3 }), {
      beforeAttempt: (i) => {
        if (i === 1) throw new Error('channel closed');
      },
    });
    h.attempt(0).status(Status.UNAVAILABLE, 'wait', { 'grpc-retry-pushback-ms': '20' });
    h.clock.advance(20);
    await h.settle();
    expect(h.status).toMatchObject({
      code: Status.UNAVAILABLE,
      details: 'could not start attempt 2: channel closed',
    });
    expect(retryOutcomeOf(h.status)).toEqual({ attempts: 1, reason: 'start-failed' });
  });

  it('a channel that refuses a hedge (the client was closed): the attempt out still answers the call, no hedge follows', async () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 4 }), {
      beforeAttempt: (i) => {
        if (i === 1) throw new Error('channel closed');
      },
    });
    h.clock.advance(100);
    await h.settle();
    expect(h.received.statuses).toEqual([]);
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.clock.advance(10_000);
    expect(h.attempts).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
    h.attempt(0).succeed('late but fine');
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['late but fine']);
  });

  it('a refused hedge, then the attempt out fails: the call ends with that failure', async () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 4 }), {
      beforeAttempt: (i) => {
        if (i === 1) throw new Error('channel closed');
      },
    });
    h.clock.advance(100);
    h.attempt(0).status(Status.UNAVAILABLE, 'the original');
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.UNAVAILABLE, details: 'the original' });
    expect(h.attempts).toHaveLength(1);
  });

  it('an attempt-start listener that cancels the call: the attempt never starts, and still ends once', async () => {
    let cancel = () => {};
    const h = engineCall(retryPolicy(), {
      start: false,
      interceptor: { onEvent: (e) => e.type === 'attempt-start' && cancel() },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'no');
    h.start();
    await h.settle();
    expect(h.attempt(0).started).toBe(false);
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(eventsOfType(h.events, 'attempt-end')).toEqual([
      expect.objectContaining({ attempt: 1, code: Status.CANCELLED, committed: false }),
    ]);
  });

  it('retries are attempts of kind "retry", hedges (even after a wait) of kind "hedge"', () => {
    const retry = engineCall(retryPolicy());
    retry.attempt(0).fail();
    retry.clock.runNext();
    const hedge = engineCall(hedgingPolicy());
    hedge.attempt(0).fail(Status.UNAVAILABLE, { 'grpc-retry-pushback-ms': '50' });
    hedge.clock.advance(50);
    hedge.clock.advance(100);
    const kinds = (events: RetryEvent[]) => eventsOfType(events, 'attempt-start').map((e) => e.kind);
    expect(kinds(retry.events)).toEqual(['original', 'retry']);
    expect(kinds(hedge.events)).toEqual(['original', 'hedge', 'hedge']);
  });

  it('attempt-end says how long the attempt ran; call-end how long the call waited with nothing in flight', async () => {
    const h = engineCall(retryPolicy());
    h.clock.advance(30);
    h.attempt(0).fail();
    h.clock.advance(100); // the backoff
    h.clock.advance(20);
    h.attempt(1).fail();
    h.clock.advance(40); // cancelled 40 ms into a 200 ms backoff
    h.call.cancelWithStatus(Status.CANCELLED, 'enough');
    await h.settle();
    expect(eventsOfType(h.events, 'attempt-end').map((e) => e.durationMs)).toEqual([30, 20]);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ attempts: 2, retryDelayMs: 140 });
  });

  it('no per-attempt timeout configured: no timer runs beside the attempt', () => {
    const h = engineCall(retryPolicy());
    expect(h.clock.pendingTimers).toBe(0);
    const timed = engineCall(retryPolicy({ perAttemptRecvTimeout: '0.5s' }));
    expect(timed.clock.pendingTimers).toBe(1);
  });
});

describe('engine: each attempt ends once', () => {
  it('a second status for the same attempt is ignored', () => {
    const h = engineCall(retryPolicy());
    const listener = h.attempt(0).listener;
    listener?.onReceiveStatus?.({ code: Status.INVALID_ARGUMENT, details: 'x', metadata: new Metadata() });
    listener?.onReceiveStatus?.({ code: Status.OK, details: 'y', metadata: new Metadata() });
    expect(eventsOfType(h.events, 'attempt-end')).toHaveLength(1);
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);
  });

  it("attempt-end says which status was the call's: failures no, the committed one yes", () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).headers();
    h.attempt(1).fail();
    expect(eventsOfType(h.events, 'attempt-end').map((e) => e.committed)).toEqual([false, true]);
  });

  it('a cancelled attempt whose status comes late (after the next one started) changes nothing', () => {
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '0.05s' }));
    // The timeout cancels attempt 1 and the backoff starts attempt 2, before attempt 1's status arrives.
    h.clock.advance(50);
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'late');
    expect(h.received.statuses).toHaveLength(0);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempt(0).cancelled).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'per-attempt receive timeout (50 ms) hit on attempt 1',
    });
  });
});

describe('engine: cancelling attempts', () => {
  it('a cancel reaches every live attempt', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }));
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await h.settle();
    expect(h.attempts.map((a) => a.cancelled)).toEqual([
      { code: Status.CANCELLED, details: 'stop' },
      { code: Status.CANCELLED, details: 'stop' },
      { code: Status.CANCELLED, details: 'stop' },
    ]);
  });

  it('the commit cancels every loser, saying why', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }));
    h.attempt(2).succeed();
    await h.settle();
    expect(h.attempts.map((a) => a.cancelled)).toEqual([
      { code: Status.CANCELLED, details: 'another attempt committed' },
      { code: Status.CANCELLED, details: 'another attempt committed' },
      undefined,
    ]);
  });

  it('a fatal status ends the call: the other attempts are cancelled as "call ended"', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }));
    h.attempt(1).fail(Status.INVALID_ARGUMENT);
    await h.settle();
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'call ended' });
    expect(eventsOfType(h.events, 'attempt-end').find((e) => e.attempt === 1)).toMatchObject({
      cancelReason: 'call-ended',
    });
  });

  it('the deadline passing with a hedge pending and no status from grpc-js: 100 ms on, the call ends and cancels the live attempt as "call ended"', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s' }), { deadlineMs: 300 });
    h.clock.advance(300);
    await h.settle();
    expect(h.received.statuses).toEqual([]); // grpc-js's deadline timer of the attempt is due too
    h.clock.advance(99);
    await h.settle();
    expect(h.received.statuses).toEqual([]);
    h.clock.advance(1);
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'call ended' });
  });

  it('cancelled before it started (an interceptor above held the start): at its start, call-start, call-end, one status', async () => {
    const h = engineCall(retryPolicy(), { start: false });
    h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    await h.settle();
    expect(h.events).toEqual([]);
    expect(h.received.statuses).toEqual([]);
    h.call.start(new Metadata(), {
      onReceiveStatus: (status) => h.received.statuses.push(status),
    });
    await h.settle();
    expect(h.eventTypes()).toEqual(['call-start', 'call-end']);
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'Cancelled on client' });
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'Cancelled on client' });
    expect(h.attempt(0).started).toBe(false);
  });

  it("the attempts the call's end cancels report their end before the call's, once", async () => {
    // A fatal status from one hedge ends the call with the other still out.
    const fatal = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }));
    fatal.clock.advance(100);
    fatal.attempt(1).fail(Status.INVALID_ARGUMENT);
    expect(fatal.eventTypes().slice(-3)).toEqual(['attempt-end', 'attempt-end', 'call-end']);
    expect(eventsOfType(fatal.events, 'attempt-end').map((e) => [e.attempt, e.code, e.cancelReason])).toEqual(
      [
        [2, Status.INVALID_ARGUMENT, undefined],
        [1, Status.CANCELLED, 'call-ended'],
      ],
    );
    // The application cancels: the attempt ends with the application's status, then the call.
    const cancelled = engineCall(retryPolicy());
    cancelled.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    cancelled.attempt(0).status(Status.CANCELLED, 'Cancelled on client'); // grpc-js's own report comes later
    await cancelled.settle();
    expect(cancelled.eventTypes().slice(-2)).toEqual(['attempt-end', 'call-end']);
    expect(eventsOfType(cancelled.events, 'attempt-end')).toEqual([
      expect.objectContaining({
        code: Status.CANCELLED,
        details: 'Cancelled on client',
        cancelReason: 'call-cancelled',
      }),
    ]);
  });

  it("the application's cancel is not refused, but spends from the cancel limit: the next loser is left running", async () => {
    const clock = new FakeClock(T0);
    const limiter = new CancelRateLimiter({ clock, burst: 2, ratePerSecond: 0.001 });
    const config = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });
    const cancelled = engineCall(config, { clock, interceptor: { cancelRateLimit: limiter } });
    cancelled.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    await cancelled.settle();
    expect(cancelled.attempts.map((a) => a.cancelled?.code)).toEqual([Status.CANCELLED, Status.CANCELLED]);
    expect(limiter.tokens).toBe(0);
    const hedged = engineCall(config, { clock, interceptor: { cancelRateLimit: limiter } });
    hedged.attempt(1).succeed();
    expect(hedged.attempt(0).cancelled).toBeUndefined();
    expect(eventsOfType(hedged.events, 'attempt-left-running')).toHaveLength(1);
  });

  it('a loser left running is read to its end, its responses dropped, and its end says so', async () => {
    const limiter = new CancelRateLimiter({ burst: 1, ratePerSecond: 0.001, loserCapMs: 5000 });
    limiter.tryCancel(); // the burst is spent: the next loser is left running
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      type: 'server-stream',
      deadlineMs: 60_000,
      interceptor: { cancelRateLimit: limiter },
    });
    h.attempt(1).headers();
    h.attempt(1).message('winner');
    expect(h.attempt(0).cancelled).toBeUndefined();
    const reads = h.attempt(0).reads;
    h.attempt(0).message('dropped');
    expect(h.attempt(0).reads).toBe(reads + 1);
    h.attempt(0).status(Status.OK, 'OK');
    h.attempt(1).status(Status.OK, 'OK');
    expect(h.received.messages).toEqual(['winner']);
    expect(h.status.code).toBe(Status.OK);
    expect(eventsOfType(h.events, 'attempt-end').map((e) => [e.attempt, e.committed, e.leftRunning])).toEqual(
      [
        [1, false, true],
        [2, true, undefined],
      ],
    );
  });
});

describe('engine: the replay buffer overflows', () => {
  it('while hedges run, the call commits to the attempt that has sent the most (the first such)', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    h.attempt(0).autoCompleteWrites = false;
    h.call.sendMessage('a');
    h.call.sendMessage('b'); // attempt 1 is still writing 'a'; attempts 2 and 3 have both
    h.call.sendMessage(Buffer.alloc(1000));
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    expect(h.attempt(1).messages).toHaveLength(3);
  });

  it('after a hedge failed, the overflow commits to the attempt still out', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    h.attempt(0).fail();
    h.call.sendMessage(Buffer.alloc(1000));
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    expect(h.attempt(1).messages).toHaveLength(1);
  });

  it('a unary request too large for a hedge after a wait: the call ends with the failure', () => {
    const h = engineCall(hedgingPolicy(), { interceptor: { perRpcBufferBytes: 10 } });
    h.attempt(0).status(Status.UNAVAILABLE, 'pushed', { 'grpc-retry-pushback-ms': '50' });
    h.clock.advance(50);
    expect(h.status.details).toBe('pushed');
    expect(h.attempts).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a unary request too large for another hedge commits the attempt in flight when the hedge is due', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s' }), { interceptor: { perRpcBufferBytes: 10 } });
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.attempt(0).fail();
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
  });
});

describe('engine: a single request written to hedges already started (hedgingDelay "0s")', () => {
  const big = Buffer.alloc(1000);
  const startWith = (request: unknown, interceptor: object, type: 'unary' | 'server-stream' = 'unary') =>
    engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), { type, interceptor, request });

  it.each([
    ['unary', { perRpcBufferBytes: 400 }],
    ['server-stream', { perRpcBufferBytes: 400 }],
    ['unary', { totalBufferBytes: 400 }],
  ] as const)(
    '%s, too large for %j: sent once, on the first attempt, and the others are cancelled',
    async (type, limits) => {
      const h = startWith(big, limits, type);
      expect(h.attempts).toHaveLength(3);
      expect(h.attempts.map((a) => a.messages.length)).toEqual([1, 0, 0]);
      expect(eventsOfType(h.events, 'committed')).toEqual([
        expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
      ]);
      await h.settle();
      expect(h.attempts.map((a) => a.cancelled !== undefined)).toEqual([false, true, true]);
      // The committed attempt's failure is the call's: the request is not sent again.
      h.attempt(0).fail();
      expect(h.status.code).toBe(Status.UNAVAILABLE);
      expect(h.attempts).toHaveLength(3);
    },
  );

  it('a request the limits hold goes to every attempt, and a failure leaves the others running', () => {
    const h = startWith(Buffer.alloc(100), { perRpcBufferBytes: 400 });
    expect(h.attempts.map((a) => a.messages.length)).toEqual([1, 1, 1]);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    h.attempt(0).fail();
    h.attempt(2).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});

describe('engine: what counts against the server', () => {
  const countingGate = () => {
    const calls: string[] = [];
    const gate: RetryGate = {
      name: 'counting',
      allowAttempt: (kind) => {
        calls.push(`allow:${kind}`);
        return true;
      },
      recordFailure: () => calls.push('failure'),
      recordSuccess: () => calls.push('success'),
    };
    return { gate, calls };
  };

  it("a committed attempt's retryable failure counts; a non-retryable one does not", () => {
    const a = countingGate();
    const counted = engineCall(retryPolicy(), { interceptor: { gate: a.gate } });
    counted.attempt(0).headers();
    counted.attempt(0).fail(Status.UNAVAILABLE);
    expect(a.calls).toEqual(['failure']);
    const b = countingGate();
    const ignored = engineCall(retryPolicy(), { interceptor: { gate: b.gate } });
    ignored.attempt(0).headers();
    ignored.attempt(0).fail(Status.INVALID_ARGUMENT);
    ignored.attempt(0).status(Status.OK);
    expect(b.calls).toEqual([]);
  });

  it('a non-retryable failure before the commit does not count, and commits nothing', () => {
    const { gate, calls } = countingGate();
    const h = engineCall(retryPolicy(), { interceptor: { gate } });
    h.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(calls).toEqual([]);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
  });

  it('a failure that arrives after an attempt-end listener cancelled the call is not counted', async () => {
    const { gate, calls } = countingGate();
    let cancel = () => {};
    const h = engineCall(retryPolicy(), {
      start: false,
      interceptor: { gate, onEvent: (e) => e.type === 'attempt-end' && cancel() },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    h.start();
    h.attempt(0).fail();
    await h.settle();
    expect(calls).toEqual([]);
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('a gate that ends the call while it is asked: no retry is scheduled, nothing is left behind', async () => {
    let cancel = () => {};
    const gate: RetryGate = {
      allowAttempt: () => {
        cancel();
        return true;
      },
      recordFailure: () => {},
      recordSuccess: () => {},
    };
    const h = engineCall(retryPolicy(), { interceptor: { gate } });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'from the gate');
    h.attempt(0).fail();
    await h.settle();
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([]);
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('hedging draws no random numbers (only retries jitter)', () => {
    let draws = 0;
    const random = () => {
      draws++;
      return 0.5;
    };
    const h = engineCall(hedgingPolicy(), { interceptor: { random } });
    h.attempt(0).fail();
    h.attempt(1).fail();
    expect(draws).toBe(0);
    const r = engineCall(retryPolicy(), { interceptor: { random } });
    r.attempt(0).fail();
    expect(draws).toBe(1);
  });
});
