/**
 * What the attempts of one call promise that the other suites leave unchecked (src/retry/attempt-set.ts): the
 * nested-retries warning, the replica-avoidance hint, reads and writes when a layer below ends an attempt at once,
 * write completions that come after an attempt ended, a clock only asked to clear timers it set, one end per
 * attempt, and the attempt an `attempt-start` listener's write keeps from starting.
 */
import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { markReplicaAvoidanceRegistered, readReplicaHint } from '../../src/lb/tried-replicas.js';
import type { Clock, TimerHandle } from '../../src/shared/clock.js';
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
const twoHedges = hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 });

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown) {
  const done = { called: 0 };
  call.sendMessageWithContext({ callback: () => (done.called += 1) }, message);
  return done;
}

/** The attempt ends as soon as it is handed a message: a layer below that fails the write before returning. */
function failsOnWrite(attempt: FakeAttempt): void {
  attempt.sendMessageWithContext = (_context, message) => {
    attempt.messages.push(message);
    attempt.fail();
  };
}

describe('engine: a call that already carries grpc-previous-rpc-attempts (a retry layer outside this one)', () => {
  it('is warned about once its second attempt starts, which still sends its own count', () => {
    const warnings = captureWarnings();
    const metadata = new Metadata();
    metadata.set(PREVIOUS, '2');
    const h = engineCall(retryPolicy(), { metadata });
    expect(warnings).toEqual([]); // a call that needs one attempt pays nothing
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempt(1).header(PREVIOUS)).toBe('1');
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_NESTED_RETRIES']);
    h.attempt(1).fail();
    h.clock.runNext();
    expect(h.attempt(2).header(PREVIOUS)).toBe('2');
    expect(warnings).toHaveLength(1);
  });

  it('is not warned about when the application sent no such header, however many attempts go', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    h.clock.runNext();
    expect(h.attempts.map((a) => a.header(PREVIOUS))).toEqual([undefined, '1', '2']);
    expect(warnings).toEqual([]);
  });
});

describe('engine: the replica-avoidance hint (src/lb) in each attempt metadata options', () => {
  const stateKey = Symbol.for('grpc-retry-hedging.replica-avoidance-state');
  const state = () => (globalThis as Record<symbol, { registered: boolean } | undefined>)[stateKey];

  function withRegistration(registered: boolean, body: () => void): void {
    const before = state()?.registered ?? false;
    try {
      if (registered) {
        markReplicaAvoidanceRegistered();
      } else if (state() !== undefined) {
        (state() as { registered: boolean }).registered = false;
      }
      body();
    } finally {
      const now = state();
      if (now !== undefined) now.registered = before;
    }
  }

  it('is absent while the policy is not registered', () => {
    withRegistration(false, () => {
      const h = engineCall(retryPolicy());
      h.attempt(0).fail();
      h.clock.runNext();
      expect(h.attempts.map((a) => readReplicaHint(a.metadata as Metadata))).toEqual([undefined, undefined]);
    });
  });

  it('once it is registered, tells each attempt where the earlier ones went', () => {
    withRegistration(true, () => {
      const h = engineCall(retryPolicy());
      const first = readReplicaHint(h.attempt(0).metadata as Metadata);
      expect(first?.avoid).toEqual([]);
      expect(first?.picked).toBeUndefined();
      (first as { picked: string | undefined }).picked = '10.0.0.1:443'; // what the picker writes back
      h.attempt(0).fail();
      h.clock.runNext();
      const second = readReplicaHint(h.attempt(1).metadata as Metadata);
      expect(second?.avoid).toEqual(['10.0.0.1:443']);
      (second as { picked: string | undefined }).picked = '10.0.0.2:443';
      h.attempt(1).fail();
      h.clock.runNext();
      expect(readReplicaHint(h.attempt(2).metadata as Metadata)?.avoid).toEqual([
        '10.0.0.1:443',
        '10.0.0.2:443',
      ]);
    });
  });
});

describe('engine: an attempt that ends while it is being started', () => {
  it('a retry whose resend meets a changed request is cancelled, and not asked to read', () => {
    captureWarnings();
    const buffer = Buffer.from('0');
    const h = engineCall(retryPolicy(), {
      type: 'client-stream',
      interceptor: {
        // Its writer was called back: it may reuse the buffer, and does, as the retry starts (a change during the
        // backoff is found before the retry is started).
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) buffer.write('1');
        },
      },
    });
    expect(h.attempt(0).reads).toBe(1); // the application asked for a response, and got none
    write(h.call, buffer);
    h.call.halfClose();
    h.attempt(0).fail(); // the request was unchanged then: a retry is scheduled
    h.clock.runNext();
    const retry = h.attempt(1);
    expect(retry.cancelled?.details).toBe('a request message changed before this attempt sent it');
    expect(retry.messages).toEqual([]);
    expect(retry.reads).toBe(0);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
  });

  it('an attempt-start listener whose write overflows the buffer commits the attempt in flight: the new hedge never starts, and ends as cancelled', () => {
    let onHedgeStart = () => {};
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }), {
      type: 'bidi',
      interceptor: {
        perRpcBufferBytes: 200,
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) onHedgeStart();
        },
      },
    });
    onHedgeStart = () => h.call.sendMessage(Buffer.alloc(500));
    h.call.sendMessage('a');
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    expect(h.attempt(1).started).toBe(false);
    expect(h.attempt(0).messages).toEqual(['a', Buffer.alloc(500)]);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
    expect(eventsOfType(h.events, 'attempt-end')).toEqual([
      expect.objectContaining({
        attempt: 2,
        committed: false,
        cancelReason: 'other-attempt-committed',
        code: Status.CANCELLED,
        details: 'another attempt committed',
      }),
    ]);
    h.call.halfClose();
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(eventsOfType(h.events, 'attempt-end').map((e) => e.attempt)).toEqual([2, 1]);
  });
});

describe('engine: a write completion that comes after its attempt ended', () => {
  it('does not call the writer back while another hedge still holds its message', async () => {
    const h = engineCall(twoHedges, { type: 'client-stream' });
    const [leader, hedge] = [h.attempt(0), h.attempt(1)];
    leader.autoCompleteWrites = false;
    hedge.autoCompleteWrites = false;
    const done = write(h.call, 'm0');
    leader.fail(); // its write is given up (it held the message no more)
    await h.settle();
    expect(done.called).toBe(0);
    leader.pendingWrites.shift()?.(); // grpc-js reports the abandoned write late
    await h.settle();
    expect(done.called).toBe(0); // the hedge may still read the object
    hedge.pendingWrites.shift()?.();
    expect(done.called).toBe(1);
    h.call.halfClose();
    hedge.succeed();
    await h.settle();
    expect(done.called).toBe(1);
    expect(h.status.code).toBe(Status.OK);
  });

  it('an attempt that had written its message and fails does not release it while another hedge writes it', async () => {
    const h = engineCall(twoHedges, { type: 'client-stream' });
    const hedge = h.attempt(1);
    hedge.autoCompleteWrites = false; // the leader completes its writes at once
    const done = write(h.call, 'm0');
    expect(h.attempt(0).messages).toEqual(['m0']);
    expect(hedge.messages).toEqual(['m0']);
    h.attempt(0).fail();
    await h.settle();
    expect(done.called).toBe(0);
    hedge.pendingWrites.shift()?.();
    expect(done.called).toBe(1);
  });
});

describe('engine: a layer below that ends an attempt before returning', () => {
  it('a hedge that fails as it is handed a message does not keep the other hedge from being handed it', async () => {
    const h = engineCall(twoHedges, { type: 'client-stream' });
    failsOnWrite(h.attempt(0));
    write(h.call, 'm0');
    expect(h.attempt(1).messages).toEqual(['m0']);
    h.call.halfClose();
    expect(h.attempt(1).halfClosed).toBe(true);
    h.attempt(1).succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
  });

  it('every started hedge reads when the application asks after they started', () => {
    const h = engineCall(twoHedges, { type: 'bidi', start: false });
    h.call.start(new Metadata(), {});
    expect(h.attempts.map((a) => a.reads)).toEqual([0, 0]);
    h.call.startRead();
    expect(h.attempts.map((a) => a.reads)).toEqual([1, 1]);
  });

  it('a hedge whose read ends it at once (grpc-js reports an ended stream from startRead) does not keep the other from reading', () => {
    const h = engineCall(twoHedges, { type: 'bidi', start: false });
    h.call.start(new Metadata(), {});
    const leader = h.attempt(0);
    leader.startRead = () => {
      leader.reads += 1;
      leader.fail();
    };
    h.call.startRead();
    expect(leader.ended).toBe(true);
    expect(h.attempt(1).reads).toBe(1);
  });

  it("an attempt whose cancel reports its status at once ends once, with the caller's status", async () => {
    const h = engineCall(twoHedges);
    const leader = h.attempt(0);
    leader.cancelWithStatus = (code, details) => {
      leader.cancelled = { code, details };
      leader.status(code, details);
    };
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    await h.settle();
    const ends = eventsOfType(h.events, 'attempt-end');
    expect(ends.map((e) => e.attempt)).toEqual([1, 2]);
    expect(ends[0]).toMatchObject({
      code: Status.CANCELLED,
      details: 'stop',
      cancelReason: 'call-cancelled',
    });
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'stop' });
  });
});

describe('engine: losers after a listener ended the call', () => {
  it('an attempt-left-running listener that cancels the call: the other loser is cancelled by the end, and not left running after it', async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock);
    let onLeftRunning = () => {};
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      clock,
      interceptor: {
        cancelRateLimit: limiter,
        onEvent: (e) => {
          if (e.type === 'attempt-left-running') onLeftRunning();
        },
      },
    });
    onLeftRunning = () => h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    expect(h.attempts).toHaveLength(3);
    expect(h.attempts.every((a) => a.halfClosed)).toBe(true);
    h.attempt(0).headers();
    await h.settle();
    expect(eventsOfType(h.events, 'attempt-left-running').map((e) => e.attempt)).toEqual([2]);
    expect(h.attempt(2).cancelled).toEqual({ code: Status.CANCELLED, details: 'stop' });
    expect(eventsOfType(h.events, 'attempt-end').filter((e) => e.attempt === 3)).toEqual([
      expect.objectContaining({ cancelReason: 'call-cancelled', code: Status.CANCELLED }),
    ]);
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'stop' });
  });
});

describe('engine: the clock is asked to clear only timers it set', () => {
  function recordingClock(fake: FakeClock) {
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
    return { clock, given, cleared };
  }

  it('with no per-attempt timeout, through a retry, a commit and the end', () => {
    const fake = new FakeClock(T0);
    const { clock, given, cleared } = recordingClock(fake);
    const h = engineCall(retryPolicy(), { clock: fake, interceptor: { clock } });
    h.attempt(0).fail();
    fake.runNext();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(cleared.filter((handle) => !given.has(handle))).toEqual([]);
  });

  it('with a per-attempt timeout: each attempt timer is cleared once it answers', () => {
    const fake = new FakeClock(T0);
    const { clock, given, cleared } = recordingClock(fake);
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), {
      clock: fake,
      interceptor: { clock },
    });
    h.attempt(0).fail();
    fake.runNext();
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(fake.pendingTimers).toBe(0);
    expect(cleared.filter((handle) => !given.has(handle))).toEqual([]);
  });
});
