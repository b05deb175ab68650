/**
 * What the call itself promises that the other suites leave unchecked (src/retry/retrying-call.ts): a call cancelled
 * before it started ends properly (with nobody listening to events too), the channel-retries warning, no receive timer
 * without a per-attempt timeout or after a commit, the status and trailers of a call ended by a request change after
 * a timeout, the gate told only of real failures, an attempt done with (left running, failed) that cannot commit,
 * and listeners that end the call or commit another attempt in the middle of a step.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  engineCall,
  eventsOfType,
  type FakeAttempt,
  hedgingPolicy,
  retryPolicy,
  Status,
  spentLimiter,
  T0,
} from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const PREVIOUS = 'grpc-previous-rpc-attempts';

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown) {
  const done = { called: 0 };
  call.sendMessageWithContext({ callback: () => (done.called += 1) }, message);
  return done;
}

/**
 * The attempt ends (UNAVAILABLE, with these trailers) as soon as it is handed a message: a layer below that fails
 * the write before returning.
 */
function failsOnWrite(attempt: FakeAttempt, trailers: Record<string, string> = {}): void {
  attempt.sendMessageWithContext = (_context, message) => {
    attempt.messages.push(message);
    attempt.fail(Status.UNAVAILABLE, trailers);
  };
}

describe('engine: a call cancelled before it started', () => {
  it('with no event listener: its start still gives the listener the cancel status', async () => {
    // Cancelled before start (an interceptor above held the start back) on a call nobody observes: the start must
    // not reach for the events it does not have.
    const h = engineCall(retryPolicy(), { start: false, unobserved: true });
    h.call.cancelWithStatus(Status.CANCELLED, 'held back');
    expect(() => h.start()).not.toThrow();
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'held back' });
    expect(h.attempt(0).started).toBe(false);
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
  });

  it('gives the status on a later tick, never inside the application’s start()', async () => {
    // grpc-js reports a cancel's status asynchronously: code that starts a call and then sets up what its status
    // callback uses must not be called back from inside start().
    const h = engineCall(retryPolicy(), { start: false });
    h.call.cancelWithStatus(Status.CANCELLED, 'held back');
    h.start();
    expect(h.received.statuses).toEqual([]);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.eventTypes()).toEqual(['call-start', 'call-end']);
  });
});

describe('engine: a failed attempt whose trailers show a retry layer below (grpc-js’s own retries)', () => {
  it('is warned about, and the call still retries', () => {
    // A first attempt sends no grpc-previous-rpc-attempts: one in its trailers came from retries below this layer.
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy());
    h.attempt(0).fail(Status.UNAVAILABLE, { [PREVIOUS]: '2' });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_CHANNEL_RETRIES']);
    h.clock.runNext();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('is not warned about when the value is the echo of what the attempt sent', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail(Status.UNAVAILABLE, { [PREVIOUS]: '1' });
    expect(warnings).toEqual([]);
  });
});

describe('engine: a retry policy without a per-attempt receive timeout', () => {
  it('leaves no timer on the clock while its attempt is in flight', () => {
    // No perAttemptRecvTimeout: nothing may time the attempt out (a timer with no delay would fire at once).
    const h = engineCall(retryPolicy());
    expect(h.clock.pendingTimers).toBe(0);
    h.attempt(0).fail();
    h.clock.runNext(); // the backoff
    expect(h.attempts).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(60_000);
    expect(h.attempt(1).cancelled).toBeUndefined();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});

describe('engine: a retry after a per-attempt timeout that meets a changed request', () => {
  it('ends the call with the timeout, which no attempt answered', () => {
    // The last failure is the engine's own timeout status (no attempt's status came): the call ends with it, and
    // the trailers count the attempts made, as for any status of the engine's own.
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), {
      type: 'client-stream',
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) {
            (h.attempts[1] as FakeAttempt).autoCompleteWrites = false;
          }
        },
      },
    });
    write(h.call, Buffer.from('0'));
    const reused = Buffer.from('1');
    write(h.call, reused);
    h.clock.advance(1000); // attempt 1 times out
    expect(h.attempt(0).cancelled?.code).toBe(Status.DEADLINE_EXCEEDED);
    h.clock.runNext(); // the backoff: attempt 2 resends message 0 and is held writing it
    const second = h.attempt(1);
    expect(second.messages.map(String)).toEqual(['0']);
    reused.write('2'); // its write callback came long ago: the writer reuses it
    second.pendingWrites.shift()?.(); // message 1 now reads "2": attempt 2 must not send it
    expect(second.messages.map(String)).toEqual(['0']);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/1000 ?ms|1s|timeout/i);
    expect(h.status.metadata.get(PREVIOUS)).toEqual(['1']);
  });
});

describe('engine: the gate is told of failures that count against the server only', () => {
  it('a committed attempt that succeeds is a success, not a failure, whatever pushback its trailers carry', () => {
    // A6 throttling: a committed attempt's failure still counts; its success must not, even from a server that
    // puts a do-not-retry pushback on every response (which counts when it comes with a failure).
    const gate: RetryGate = {
      allowAttempt: vi.fn(() => true),
      recordFailure: vi.fn(),
      recordSuccess: vi.fn(),
    };
    const h = engineCall(retryPolicy(), { type: 'server-stream', interceptor: { gate } });
    h.attempt(0).headers(); // commits
    h.attempt(0).message('r');
    h.attempt(0).status(Status.OK, 'OK', { 'grpc-retry-pushback-ms': '-1' });
    expect(h.status.code).toBe(Status.OK);
    expect(gate.recordFailure).not.toHaveBeenCalled();
    expect(gate.recordSuccess).toHaveBeenCalledTimes(1);
  });

  it('a committed attempt that fails with a do-not-retry pushback is a failure', () => {
    const gate: RetryGate = {
      allowAttempt: vi.fn(() => true),
      recordFailure: vi.fn(),
      recordSuccess: vi.fn(),
    };
    const h = engineCall(retryPolicy(), { type: 'server-stream', interceptor: { gate } });
    h.attempt(0).headers();
    h.attempt(0).fail(Status.INTERNAL, { 'grpc-retry-pushback-ms': '-1' }); // not retryable, but a do-not-retry
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(gate.recordFailure).toHaveBeenCalledTimes(1);
    expect(gate.recordSuccess).not.toHaveBeenCalled();
  });
});

describe('engine: a listener that ends the call while a commit cancels the losers', () => {
  it('an attempt-left-running listener that cancels the call: no commit is reported after the call’s end', async () => {
    const clock = new FakeClock(T0);
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      clock,
      interceptor: {
        cancelRateLimit: spentLimiter(clock),
        onEvent: (e) => {
          if (e.type === 'attempt-left-running') {
            h.call.cancelWithStatus(Status.CANCELLED, 'enough');
          }
        },
      },
    });
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).headers(); // commits to the hedge; attempt 1 is left running
    expect(eventsOfType(h.events, 'attempt-left-running')).toHaveLength(1);
    const types = h.eventTypes();
    expect(types.at(-1)).toBe('call-end');
    // The commit is reported before its effects (the loser left running), and so before the call's end.
    expect(types.filter((t) => t === 'committed')).toHaveLength(1);
    expect(types.indexOf('committed')).toBeLessThan(types.indexOf('attempt-left-running'));
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.received.headers).toEqual([]);
  });
});

describe('engine: a hedge whose attempt fails inside its own start (a layer below fails the write at once)', () => {
  it('sent after a pushback wait and failing with a pushback itself: the call waits again, then hedges on', () => {
    const pushback = { 'grpc-retry-pushback-ms': '100' };
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 4 }), {
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) {
            failsOnWrite(h.attempts[1] as FakeAttempt, pushback);
          }
        },
      },
    });
    h.attempt(0).fail(Status.UNAVAILABLE, pushback); // nothing in flight: wait out the pushback
    expect(h.attempts).toHaveLength(1);
    h.clock.runNext(); // hedge 2 goes, and fails with a pushback as it is handed the request
    expect(h.attempt(1).ended).toBe(true);
    // The hedge's pushback holds the call in a wait with nothing in flight; that wait, already set, is the one
    // kept (scheduled once: the hedge's send does not schedule the next one over it; with hedgingDelay 0s that
    // next one went at once, past the pushback): the next hedge goes when it is over, and the call goes on.
    expect(eventsOfType(h.events, 'hedge-scheduled').filter((e) => e.attempt === 3)).toEqual([
      expect.objectContaining({ delayMs: 100, reason: 'pushback' }),
    ]);
    expect(h.clock.pendingTimers).toBe(1);
    expect(h.clock.nextDueInMs()).toBe(100);
    h.clock.advance(99);
    expect(h.attempts).toHaveLength(2);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(3);
    h.attempt(2).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.status.metadata.get(PREVIOUS)).toEqual(['2']);
  });
});

describe('engine: an attempt-start listener that ends the call as a hedge goes', () => {
  it('nothing is scheduled, and no event follows the call’s end', async () => {
    // The hedge's start ended the call: the schedule must see the call is over, not schedule the next hedge.
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 4 }), {
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) {
            h.call.cancelWithStatus(Status.CANCELLED, 'enough');
          }
        },
      },
    });
    h.clock.advance(100); // hedge 2 is due
    expect(h.eventTypes().at(-1)).toBe('call-end');
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => e.attempt)).toEqual([2]);
    expect(h.clock.pendingTimers).toBe(0);
    expect(h.attempt(1).started).toBe(false);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
  });
});

describe('engine: a listener whose write overflows the replay buffer, committing another attempt', () => {
  it('inside the attempt-end of a failed hedge: the hedge committed carries the call, not the failure', () => {
    // The attempt-end listener of attempt 1 writes a message the buffer cannot hold: the call commits to attempt 2,
    // the one still in flight. Attempt 1's failure is then no longer the call's business.
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      type: 'client-stream',
      interceptor: {
        perRpcBufferBytes: 100,
        onEvent: (e) => {
          if (e.type === 'attempt-end' && e.attempt === 1) {
            h.call.sendMessage(Buffer.alloc(200));
          }
        },
      },
    });
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).fail();
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    expect(h.received.statuses).toEqual([]);
    expect(h.attempt(1).cancelled).toBeUndefined();
    expect(h.attempt(1).messages).toHaveLength(1);
    h.call.halfClose();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});

describe('engine: an attempt left running after its per-attempt timeout (cancel-rate limit spent)', () => {
  it('answers while the retry is in flight: its answer is dropped, and the retry carries the call', () => {
    // The timed-out attempt is no longer the call's: neither its success nor its failure may commit, end or retry.
    const clock = new FakeClock(T0);
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), {
      clock,
      deadlineMs: 60_000,
      interceptor: { cancelRateLimit: spentLimiter(clock) },
    });
    h.clock.advance(1000);
    expect(eventsOfType(h.events, 'attempt-left-running')).toEqual([
      expect.objectContaining({ attempt: 1, cancelReason: 'per-attempt-timeout' }),
    ]);
    h.clock.runNext(); // the backoff
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).status(Status.OK, 'late');
    expect(h.received.statuses).toEqual([]);
    expect(h.attempt(1).cancelled).toBeUndefined();
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    h.attempt(1).succeed('second');
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['second']);
    expect(eventsOfType(h.events, 'committed')).toEqual([expect.objectContaining({ attempt: 2 })]);
  });
});

describe('engine: an OK status that commits its attempt, with one other hedge in flight', () => {
  it('the other hedge is cancelled with a reason it reports, and the server is told why', async () => {
    // An OK with no headers or message before it commits at its status: the attempt is already done, and the one
    // hedge left must still be cancelled for a reason its attempt-end names (and grpc-js sends as details).
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }));
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.status.code).toBe(Status.OK);
    const other = eventsOfType(h.events, 'attempt-end').find((e) => e.attempt === 2);
    expect(['call-ended', 'other-attempt-committed']).toContain(other?.cancelReason);
    expect(h.attempt(1).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(1).cancelled?.details).toMatch(/\w/);
  });
});

describe('engine: the replay buffer overflows during a wait, with no attempt in flight', () => {
  // A6: a committed call makes no further attempt, so the failure the wait followed is the result at once. Before, the
  // next attempt went anyway, committed, carrying a log over the buffer's limit held through the wait.
  it('hedging, waiting out a pushback: the call ends with that failure, no hedge follows', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s', maxAttempts: 4 }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 100 },
    });
    h.call.sendMessage(Buffer.alloc(10));
    h.attempt(0).fail(Status.UNAVAILABLE, { 'grpc-retry-pushback-ms': '100' }); // wait out the pushback
    expect(h.received.statuses).toHaveLength(0);
    h.call.sendMessage(Buffer.alloc(200)); // overflows the buffer during the wait
    expect(h.status).toMatchObject({ code: Status.UNAVAILABLE, details: 'attempt 1 failed' });
    h.clock.advance(5000);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 1, reason: 'replay-buffer' }),
    ]);
  });

  it('retry: the failure counts against the throttle once, and the call makes no other attempt', () => {
    const throttle = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const h = engineCall(retryPolicy({ maxAttempts: 5 }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 100, gate: throttle },
    });
    h.call.sendMessage(Buffer.alloc(10));
    h.attempt(0).fail(); // the backoff
    h.call.sendMessage(Buffer.alloc(200)); // overflows the buffer during the backoff
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(throttle.tokens).toBe(9);
    h.clock.advance(60_000);
    expect(h.attempts).toHaveLength(1);
  });
});

describe('engine: a retry committed by its own attempt-start listener (a write that overflows the buffer)', () => {
  it('gets no per-attempt receive timer, as a commit stops it', () => {
    // Committed before its start returned: a receive timer armed now would outlive the commit that stops it.
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), {
      type: 'client-stream',
      interceptor: {
        perRpcBufferBytes: 100,
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) {
            h.call.sendMessage(Buffer.alloc(200));
          }
        },
      },
    });
    h.call.sendMessage(Buffer.alloc(10));
    h.attempt(0).fail();
    h.clock.runNext(); // the backoff
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(5000);
    expect(h.attempt(1).cancelled).toBeUndefined();
    expect(h.attempt(1).messages).toHaveLength(2);
    h.call.halfClose();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});
