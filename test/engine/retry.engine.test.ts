import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { engineCall, eventsOfType, retryPolicy, Status, T0 } from '../helpers/engine.js';

const UNAVAILABLE = Status.UNAVAILABLE;

describe('engine: retries under fake time', () => {
  it('follows the backoff sequence, sends grpc-previous-rpc-attempts, and ends after maxAttempts', async () => {
    const h = engineCall(retryPolicy());
    expect(h.attempts).toHaveLength(1);
    expect(h.attempt(0).header('grpc-previous-rpc-attempts')).toBeUndefined();
    const startTimes: number[] = [h.clock.now() - T0];
    for (let i = 0; i < 3; i++) {
      h.attempt(i).fail();
      const due = h.clock.nextDueInMs() as number;
      h.clock.advance(due - 1);
      expect(h.attempts).toHaveLength(i + 1); // not a millisecond early
      h.clock.advance(1);
      expect(h.attempts).toHaveLength(i + 2);
      startTimes.push(h.clock.now() - T0);
      expect(h.attempt(i + 1).header('grpc-previous-rpc-attempts')).toBe(String(i + 1));
    }
    // random 0.5 gives the exact capped value: 100, 200, 400 ms apart.
    expect(startTimes).toEqual([0, 100, 300, 700]);
    h.attempt(3).fail();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['3']);
    expect(eventsOfType(h.events, 'retry-scheduled').map((e) => [e.delayMs, e.reason])).toEqual([
      [100, 'backoff'],
      [200, 'backoff'],
      [400, 'backoff'],
    ]);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ attempts: 4, retryDelayMs: 700 });
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('applies the cap before the ±20% jitter', () => {
    const low = engineCall(retryPolicy({ maxBackoff: '0.15s' }), { interceptor: { random: () => 0 } });
    const high = engineCall(retryPolicy({ maxBackoff: '0.15s' }), {
      interceptor: { random: () => 0.999999 },
    });
    for (const h of [low, high]) {
      for (let i = 0; i < 3; i++) {
        h.attempt(i).fail();
        h.clock.runNext();
      }
    }
    expect(eventsOfType(low.events, 'retry-scheduled').map((e) => Math.round(e.delayMs))).toEqual([
      80, 120, 120,
    ]);
    expect(eventsOfType(high.events, 'retry-scheduled').map((e) => Math.round(e.delayMs))).toEqual([
      120, 180, 180,
    ]);
  });

  it('a pushback sets the next delay exactly and resets the backoff to initialBackoff', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '300' });
    h.clock.runNext();
    h.attempt(2).fail();
    expect(eventsOfType(h.events, 'retry-scheduled').map((e) => [e.delayMs, e.reason])).toEqual([
      [100, 'backoff'],
      [300, 'pushback'],
      [100, 'backoff'],
    ]);
  });

  it.each(['-1', 'abc', '10abc', ''])('a do-not-retry pushback %j ends the call with its status', (value) => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': value });
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('a non-retryable status ends the call at once', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(h.status.code).toBe(Status.INVALID_ARGUMENT);
    expect(h.attempts).toHaveLength(1);
  });

  it('throttling: a retry goes only while tokens stay above half, and a refused retry ends the call at once', () => {
    const config = retryPolicy({}, {});
    const h = engineCall({ ...config, retryThrottling: { maxTokens: 3, tokenRatio: 0.5 } });
    h.attempt(0).fail(); // 3 -> 2 > 1.5: retry
    h.clock.runNext();
    h.attempt(1).fail(); // 2 -> 1: throttled
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ attempt: 3, kind: 'retry', gate: 'retry-throttle', tokens: 1 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('any structural gate plugs in: asked per retry, told of every call, failure and success', () => {
    const calls: string[] = [];
    const gate: RetryGate = {
      name: 'test-gate',
      allowAttempt: (kind) => {
        calls.push(`allow:${kind}`);
        return calls.filter((c) => c.startsWith('allow')).length < 2;
      },
      recordFailure: () => calls.push('failure'),
      recordSuccess: () => calls.push('success'),
      recordCall: () => calls.push('call'),
    };
    const h = engineCall(retryPolicy(), { interceptor: { gate } });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    expect(calls).toEqual(['call', 'failure', 'allow:retry', 'failure', 'allow:retry']);
    expect(eventsOfType(h.events, 'throttled')[0]).toMatchObject({ gate: 'test-gate', tokens: Number.NaN });
    const ok = engineCall(retryPolicy(), { interceptor: { gate } });
    ok.attempt(0).succeed();
    expect(calls.slice(-2)).toEqual(['call', 'success']);
  });

  it("a server's DEADLINE_EXCEEDED is retried while the call's deadline is ahead (all four call types)", () => {
    for (const type of ['unary', 'server-stream', 'client-stream', 'bidi'] as const) {
      const h = engineCall(retryPolicy({ retryableStatusCodes: ['DEADLINE_EXCEEDED'] }), {
        type,
        deadlineMs: 10_000,
      });
      if (type === 'client-stream' || type === 'bidi') h.call.halfClose();
      h.attempt(0).fail(Status.DEADLINE_EXCEEDED);
      h.clock.runNext();
      expect(h.attempts, type).toHaveLength(2);
      h.attempt(1).succeed();
      expect(h.status.code, type).toBe(Status.OK);
    }
  });

  it('ends with the status once the deadline has passed, whatever the code', () => {
    const h = engineCall(retryPolicy({ retryableStatusCodes: ['DEADLINE_EXCEEDED'] }), { deadlineMs: 50 });
    h.clock.advance(50);
    h.attempt(0).fail(Status.DEADLINE_EXCEEDED);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(1);
  });

  it('the deadline passing during a backoff ends the call with DEADLINE_EXCEEDED and no timer left', () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 150 });
    h.attempt(0).fail(); // backoff 100
    h.clock.advance(100);
    h.clock.advance(20);
    h.attempt(1).fail(); // backoff 200 would end at 320 > 150
    h.clock.advance(29);
    expect(h.received.statuses).toHaveLength(0);
    h.clock.advance(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/while waiting to retry.*UNAVAILABLE/);
    expect(h.attempts).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('deadlineAwareBackoff ends at once with the real status instead of waiting for the deadline', () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 150, interceptor: { deadlineAwareBackoff: true } });
    h.attempt(0).fail();
    h.clock.advance(100);
    h.attempt(1).fail();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('every attempt carries the deadline and the application metadata unchanged', () => {
    const md = new Metadata();
    md.set('x-user', 'u1');
    const h = engineCall(retryPolicy(), { deadlineMs: 5000, metadata: md });
    h.attempt(0).fail();
    h.clock.runNext();
    for (const a of h.attempts) {
      expect(a.options.deadline).toBe(T0 + 5000);
      expect(a.header('x-user')).toBe('u1');
    }
    expect(md.get('grpc-previous-rpc-attempts')).toEqual([]);
  });
});

describe('engine: commit', () => {
  it('response headers commit: a later failure is the result, with no retry', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).headers();
    h.attempt(0).fail();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'headers' }),
    ]);
    expect(h.received.headers).toHaveLength(1);
  });

  it('a response message commits (server streaming)', () => {
    const h = engineCall(retryPolicy(), { type: 'server-stream' });
    h.attempt(0).message('m1');
    h.attempt(0).fail();
    expect(h.received.messages).toEqual(['m1']);
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(eventsOfType(h.events, 'committed')[0]?.reason).toBe('message');
  });

  it('a Trailers-Only failure (no headers) does not commit', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).succeed('r');
    expect(h.received.messages).toEqual(['r']);
    expect(h.status.code).toBe(Status.OK);
    expect(eventsOfType(h.events, 'committed')[0]).toMatchObject({ attempt: 2, reason: 'headers' });
  });

  it('replays every message and the half-close on each new attempt, in order, including those sent during a backoff', () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    h.call.sendMessage('a');
    h.call.sendMessage('b');
    h.attempt(0).fail();
    h.call.sendMessage('c');
    h.call.halfClose();
    h.clock.runNext();
    expect(h.attempt(1).messages).toEqual(['a', 'b', 'c']);
    expect(h.attempt(1).halfClosed).toBe(true);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('a replay-buffer overflow commits to the attempt in flight, which then gets everything once', () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 200 } });
    h.call.sendMessage(Buffer.alloc(100));
    h.call.sendMessage(Buffer.alloc(100)); // 2 x (100 + 5 + 48) > 200
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.attempt(0).fail();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(h.attempt(0).messages).toHaveLength(2);
  });

  it('an overflow during a backoff commits the call with no attempt in flight: it ends with the failure (A6)', () => {
    // A6: once committed, the client "will not make any subsequent attempts"; grpc-js's own retries end it the same way.
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 200 } });
    h.call.sendMessage(Buffer.alloc(100));
    h.attempt(0).fail();
    expect(h.received.statuses).toHaveLength(0); // waiting out the backoff
    h.call.sendMessage(Buffer.alloc(100));
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'attempt 1 failed' });
    expect(h.clock.pendingTimers).toBe(0); // the backoff's timer is gone
    h.clock.advance(60_000);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: UNAVAILABLE, attempts: 1, reason: 'replay-buffer' }),
    ]);
  });

  it('empty messages count their frame: 100,000 empty writes commit instead of growing the buffer', () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 1024 } });
    for (let i = 0; i < 100_000; i++) h.call.sendMessage('');
    const committed = eventsOfType(h.events, 'committed');
    expect(committed).toEqual([expect.objectContaining({ reason: 'replay-buffer' })]);
    // Once committed, written messages are dropped: nothing is held for replay.
    h.call.halfClose();
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('a too-large single request commits its attempt as it is written, and its failure ends the call', () => {
    const h = engineCall(retryPolicy(), { interceptor: { perRpcBufferBytes: 10 } });
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.attempt(0).fail();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(h.events.map((e) => e.type)).toEqual([
      'call-start',
      'attempt-start',
      'committed',
      'attempt-end',
      'call-end',
    ]);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: UNAVAILABLE, attempts: 1, reason: 'replay-buffer' }),
    ]);
  });

  it('an attempt committed by a too-large request keeps its per-attempt timeout: the call ends with it', () => {
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '0.05s' }), {
      interceptor: { perRpcBufferBytes: 10 },
    });
    expect(eventsOfType(h.events, 'committed')).toHaveLength(1);
    h.clock.advance(50);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/replay buffer is full/);
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.DEADLINE_EXCEEDED, attempts: 1, reason: 'replay-buffer' }),
    ]);
  });

  it('a stream committed by its buffer overflowing keeps its per-attempt timeout until its first response', () => {
    const late = engineCall(retryPolicy({ perAttemptRecvTimeout: '0.05s' }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 10 },
    });
    late.call.sendMessage(Buffer.alloc(50));
    expect(eventsOfType(late.events, 'committed')).toHaveLength(1);
    late.clock.advance(50);
    expect(late.status.code).toBe(Status.DEADLINE_EXCEEDED);

    const answered = engineCall(retryPolicy({ perAttemptRecvTimeout: '0.05s' }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 10 },
    });
    answered.call.sendMessage(Buffer.alloc(50));
    answered.attempt(0).headers();
    answered.clock.advance(100);
    expect(answered.clock.pendingTimers).toBe(0);
    answered.attempt(0).succeed();
    expect(answered.status.code).toBe(Status.OK);
  });
});

describe('engine: cancel wins in every phase, and every call ends exactly once', () => {
  const cancelled = async (h: ReturnType<typeof engineCall>) => {
    h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    h.call.cancelWithStatus(Status.CANCELLED, 'twice');
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.clock.pendingTimers).toBe(0);
    expect(eventsOfType(h.events, 'call-end')).toHaveLength(1);
  };

  it('before start', async () => {
    const h = engineCall(retryPolicy(), { start: false });
    h.call.cancelWithStatus(Status.CANCELLED, 'early');
    await h.settle();
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.received.statuses).toHaveLength(0); // no listener yet: nothing to tell
  });

  it('with an attempt in flight', async () => {
    const h = engineCall(retryPolicy());
    await cancelled(h);
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    h.attempt(0).fail();
    expect(h.received.statuses).toHaveLength(1);
  });

  it('during a backoff', async () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    await cancelled(h);
    h.clock.advance(10_000);
    expect(h.attempts).toHaveLength(1);
  });

  it('after the commit', async () => {
    const h = engineCall(retryPolicy(), { type: 'server-stream' });
    h.attempt(0).headers();
    await cancelled(h);
    expect(h.attempt(0).cancelled).toBeDefined();
  });

  it('after the end, a cancel changes nothing', async () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).succeed();
    h.call.cancelWithStatus(Status.CANCELLED, 'late');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
  });
});
