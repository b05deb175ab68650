/**
 * A failed call's `call-end` says why its last failure got no further attempt, so that a call which failed after
 * one attempt tells a policy that chose not to retry from one that could not (the replay buffer, the gate).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { forgetGivenWarnings } from '../../src/util/warn-once.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const callEnd = (h: ReturnType<typeof engineCall>) => eventsOfType(h.events, 'call-end')[0];

describe('call-end reason', () => {
  it('replay-buffer: a request the buffer cannot hold is not retried, said on call-end and warned', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy(), { interceptor: { perRpcBufferBytes: 10 } });
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(callEnd(h)).toMatchObject({ code: Status.UNAVAILABLE, attempts: 1, reason: 'replay-buffer' });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
    expect(warnings[0]?.message).toContain('perRpcBufferBytes: 10 bytes a call');
  });

  it('replay-buffer under hedging: no hedge goes, and the call says why', () => {
    const warnings = captureWarnings();
    const h = engineCall(hedgingPolicy(), { interceptor: { perRpcBufferBytes: 10 } });
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(callEnd(h)).toMatchObject({ code: Status.UNAVAILABLE, reason: 'replay-buffer' });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
  });

  it('replay-buffer: a stream committed by its overflow, whose attempt then fails as the policy would retry', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 400 } });
    h.call.sendMessage(Buffer.alloc(1000));
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(callEnd(h)).toMatchObject({ code: Status.UNAVAILABLE, attempts: 1, reason: 'replay-buffer' });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
  });

  it('replay-buffer under hedging: a stream committed by its overflow before its hedge, then failed non-fatally', () => {
    const warnings = captureWarnings();
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s' }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    h.call.sendMessage(Buffer.alloc(1000));
    h.attempt(0).fail(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(callEnd(h)).toMatchObject({ code: Status.UNAVAILABLE, attempts: 1, reason: 'replay-buffer' });
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REPLAY_BUFFER']);
  });

  it('replay-buffer after an overflow commit: a failure with pushback under hedging, and a call with no listener', () => {
    const warnings = captureWarnings();
    const pushed = engineCall(hedgingPolicy({ hedgingDelay: '0.1s' }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    pushed.call.sendMessage(Buffer.alloc(1000));
    pushed.attempt(0).status(Status.UNAVAILABLE, 'pushed', { 'grpc-retry-pushback-ms': '50' });
    expect(callEnd(pushed)).toMatchObject({ code: Status.UNAVAILABLE, reason: 'replay-buffer' });

    forgetGivenWarnings(); // the same warning, given once per process: the second case must give it too
    const unobserved = engineCall(retryPolicy(), {
      type: 'client-stream',
      unobserved: true,
      interceptor: { perRpcBufferBytes: 400 },
    });
    unobserved.call.sendMessage(Buffer.alloc(1000));
    unobserved.attempt(0).fail(Status.UNAVAILABLE);
    expect(unobserved.status.code).toBe(Status.UNAVAILABLE);
    expect(warnings.map((w) => w.code)).toEqual([
      'GRPC_RETRY_HEDGING_REPLAY_BUFFER',
      'GRPC_RETRY_HEDGING_REPLAY_BUFFER',
    ]);
  });

  it('after a commit, the reason that would have ended the call anyway, or committed after a server commit', () => {
    const warnings = captureWarnings();
    const fatal = engineCall(retryPolicy(), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    fatal.call.sendMessage(Buffer.alloc(1000));
    fatal.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(callEnd(fatal)).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'fatal-status' });

    const last = engineCall(retryPolicy({ maxAttempts: 2 }), {
      type: 'client-stream',
      interceptor: { perRpcBufferBytes: 400 },
    });
    last.attempt(0).fail(Status.UNAVAILABLE);
    last.clock.advance(200);
    last.call.sendMessage(Buffer.alloc(1000)); // commits attempt 2, the last maxAttempts allows
    expect(eventsOfType(last.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'replay-buffer' }),
    ]);
    last.attempt(1).fail(Status.UNAVAILABLE);
    expect(callEnd(last)).toMatchObject({ attempts: 2, reason: 'attempts-exhausted' });

    const answered = engineCall(retryPolicy(), { type: 'client-stream' });
    answered.attempt(0).headers();
    answered.attempt(0).fail(Status.UNAVAILABLE);
    // A6 never retries a committed call: that, not the status, is why no attempt followed.
    expect(callEnd(answered)).toMatchObject({ attempts: 1, reason: 'committed' });
    const answeredFatal = engineCall(retryPolicy(), { type: 'client-stream' });
    answeredFatal.attempt(0).headers();
    answeredFatal.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(callEnd(answeredFatal)).toMatchObject({ reason: 'fatal-status' });
    const answeredOk = engineCall(retryPolicy(), { type: 'client-stream' });
    answeredOk.attempt(0).succeed();
    expect(callEnd(answeredOk)).not.toHaveProperty('reason');
    expect(warnings).toEqual([]);
  });

  it('fatal-status, attempts-exhausted and throttled for retries; none on success', () => {
    const fatal = engineCall(retryPolicy());
    fatal.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(callEnd(fatal)?.reason).toBe('fatal-status');

    const exhausted = engineCall(retryPolicy({ maxAttempts: 2 }));
    exhausted.attempt(0).fail(Status.UNAVAILABLE);
    exhausted.clock.advance(200);
    exhausted.attempt(1).fail(Status.UNAVAILABLE);
    expect(callEnd(exhausted)).toMatchObject({ attempts: 2, reason: 'attempts-exhausted' });

    const refuseAll: RetryGate = {
      name: 'no',
      allowAttempt: () => false,
      recordSuccess() {},
      recordFailure() {},
    };
    const throttled = engineCall(retryPolicy(), { interceptor: { gate: refuseAll } });
    throttled.attempt(0).fail(Status.UNAVAILABLE);
    expect(callEnd(throttled)?.reason).toBe('throttled');

    const ok = engineCall(retryPolicy());
    ok.attempt(0).fail(Status.UNAVAILABLE);
    ok.clock.advance(200);
    ok.attempt(1).succeed();
    expect(callEnd(ok)).toMatchObject({ code: Status.OK, attempts: 2 });
    expect(callEnd(ok)).not.toHaveProperty('reason');
  });

  it('deadline: the deadline passed during a backoff, or ended the attempt in flight', () => {
    const backoff = engineCall(retryPolicy(), { deadlineMs: 50 });
    backoff.attempt(0).fail(Status.UNAVAILABLE);
    backoff.clock.advance(50);
    expect(backoff.attempts).toHaveLength(1);
    expect(callEnd(backoff)).toMatchObject({ code: Status.DEADLINE_EXCEEDED, reason: 'deadline' });

    const inFlight = engineCall(retryPolicy(), { deadlineMs: 50 });
    inFlight.clock.advance(50);
    inFlight.attempt(0).fail(Status.DEADLINE_EXCEEDED);
    expect(callEnd(inFlight)).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      attempts: 1,
      reason: 'deadline',
    });

    const hedged = engineCall(hedgingPolicy({ hedgingDelay: '0.02s' }), { deadlineMs: 50 });
    hedged.clock.advance(50);
    hedged.attempt(1).fail(Status.DEADLINE_EXCEEDED);
    hedged.attempt(0).fail(Status.DEADLINE_EXCEEDED);
    expect(callEnd(hedged)).toMatchObject({ code: Status.DEADLINE_EXCEEDED, reason: 'deadline' });
  });

  it('the reason nearest the end holds: a hedge the gate refused, then a fatal status', () => {
    const refuseHedges: RetryGate = {
      name: 'no-hedges',
      allowAttempt: (kind) => kind !== 'hedge',
      recordSuccess() {},
      recordFailure() {},
    };
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.02s' }), { interceptor: { gate: refuseHedges } });
    h.clock.advance(20);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
    h.attempt(0).fail(Status.INVALID_ARGUMENT);
    expect(callEnd(h)).toMatchObject({ code: Status.INVALID_ARGUMENT, reason: 'fatal-status' });

    const throttled = engineCall(hedgingPolicy({ hedgingDelay: '0.02s' }), {
      interceptor: { gate: refuseHedges },
    });
    throttled.clock.advance(20);
    throttled.attempt(0).fail(Status.UNAVAILABLE);
    expect(callEnd(throttled)).toMatchObject({ code: Status.UNAVAILABLE, reason: 'throttled' });
  });

  it('attempts-exhausted for hedging, once every hedge has failed', () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }));
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).fail(Status.UNAVAILABLE);
    h.attempt(1).fail(Status.UNAVAILABLE);
    expect(callEnd(h)).toMatchObject({ code: Status.UNAVAILABLE, attempts: 2, reason: 'attempts-exhausted' });
  });
});
