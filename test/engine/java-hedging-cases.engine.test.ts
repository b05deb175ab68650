/**
 * grpc-java's hedging scenarios (core/src/test/java/io/grpc/internal/RetriableStreamTest.java, the `hedging_*`
 * tests and the throttling ones), re-created against the interceptor under a FakeClock. grpc-java is the one other
 * A6 implementation that hedges (C-core and grpc-go do not). Java's times are seconds (hedgingDelay 100 s, pushback
 * 101 s); here they are milliseconds, the same numbers. Java's policy allows 6 attempts, past A6's default cap of 5,
 * so these calls raise `maxAttemptsLimit` to 6 where the count matters.
 *
 * Where the package does on purpose what A6 says and grpc-java does not, the test asserts the package and says why:
 * - A non-fatal status sends the next hedge at once (A6, "Summary of Retry and Hedging Logic", case 3). grpc-java
 *   leaves the hedging timer as it was (grpc/grpc-java#10145; #10293 only made a positive pushback immediate).
 * - A pushback of n ms sends the next hedge after n ms (A6, case 5). grpc-java since #10293 sends it at once.
 * - Every further hedge asks the throttle when it is due (A6: "subsequent hedged RPCs will only be sent if
 *   token_count is greater than the threshold"); grpc-java asks only when an attempt fails.
 * - A call that ends OK adds tokenRatio (A6: "every successful RPC"); grpc-java adds it at the commit (headers).
 */
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type StatusObject,
} from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  type EngineCall,
  engineCall,
  eventsOfType,
  FakeAttempt,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

const UNAVAILABLE = Status.UNAVAILABLE;
const DATA_LOSS = Status.DATA_LOSS;
const INTERNAL = Status.INTERNAL; // fatal: not in nonFatalStatusCodes

/** Java's policy: 6 attempts, 100 (s there, ms here) apart, UNAVAILABLE and DATA_LOSS non-fatal. */
const JAVA_POLICY = hedgingPolicy({
  maxAttempts: 6,
  hedgingDelay: '0.1s',
  nonFatalStatusCodes: ['UNAVAILABLE', 'DATA_LOSS'],
});
const SIX = { maxAttemptsLimit: 6 };

/** Records the fake time at which each attempt was made. */
function timeline(h: EngineCall): { times: number[]; record: () => void } {
  const times: number[] = [];
  const record = () => {
    while (times.length < h.attempts.length) times.push(h.clock.now() - T0);
  };
  record();
  return { times, record };
}

/** Advances the clock one ms at a time, noting when attempts are made. */
function advance(h: EngineCall, ms: number, t: { record: () => void }): void {
  for (let i = 0; i < ms; i++) {
    h.clock.advance(1);
    t.record();
  }
}

/** Charged per message in the replay buffer: its bytes, a 5-byte frame header and 48 bytes of bookkeeping. */
const MESSAGE_OVERHEAD = 53;

/** A request message the replay buffer charges exactly `charge` bytes for. */
function bytes(charge: number): Buffer {
  return Buffer.alloc(charge - MESSAGE_OVERHEAD);
}

function cancelReasons(h: EngineCall): Record<number, string | undefined> {
  const out: Record<number, string | undefined> = {};
  for (const e of eventsOfType(h.events, 'attempt-end')) out[e.attempt] = e.cancelReason;
  return out;
}

describe('grpc-java RetriableStreamTest, hedging cases, against the interceptor', () => {
  // Java hedging_everythingDrained_oneHedgeReceivesNonFatal_oneHedgeReceivesFatalStatus asserts: each hedge is
  // handed every message written so far, then each later one; a non-fatally failed hedge gets no more; hedge 2's
  // fatal status cancels hedges 1 and 4 and closes the call. Differs: hedge 4 goes at the non-fatal failure (A6).
  it('everything drained: replay to each new hedge, a non-fatal failure, then a fatal status ends the call', async () => {
    const h = engineCall(JAVA_POLICY, { type: 'bidi', interceptor: SIX });
    const t = timeline(h);
    h.call.sendMessage('m1');
    h.call.sendMessage('m2');
    h.call.sendMessage('m3');
    expect(h.attempt(0).messages).toEqual(['m1', 'm2', 'm3']);

    advance(h, 99, t);
    expect(h.attempts).toHaveLength(1);
    advance(h, 1, t);
    expect(h.attempt(1).messages).toEqual(['m1', 'm2', 'm3']); // replayed to the hedge

    h.call.sendMessage('m4');
    h.call.sendMessage('m5');
    advance(h, 100, t);
    expect(h.attempt(2).messages).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);

    h.call.sendMessage('m6');
    expect(h.attempts.slice(0, 3).map((a) => a.messages.length)).toEqual([6, 6, 6]);

    // Hedge 3 fails non-fatally. Java waits for the timer (due at 300) to send hedge 4; A6 and the package send it
    // at once (see the file's comment).
    h.attempt(2).fail(UNAVAILABLE);
    t.record();
    expect(t.times).toEqual([0, 100, 200, 200]);
    expect(h.attempt(3).messages).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);

    h.call.sendMessage('m7');
    expect(h.attempt(0).messages.at(-1)).toBe('m7');
    expect(h.attempt(1).messages.at(-1)).toBe('m7');
    expect(h.attempt(2).messages).toHaveLength(6); // failed: nothing more reaches it
    expect(h.attempt(3).messages.at(-1)).toBe('m7');
    expect(h.received.statuses).toEqual([]); // a non-fatal failure is not the result while others live

    // Hedge 2 gets a fatal status: the others are cancelled and it is the call's result.
    h.attempt(1).status(INTERNAL, 'fatal on 2');
    await h.settle();
    expect(h.status).toMatchObject({ code: INTERNAL, details: 'fatal on 2' });
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(3).cancelled?.code).toBe(Status.CANCELLED);
    expect(cancelReasons(h)).toEqual({ 1: 'call-ended', 2: undefined, 3: undefined, 4: 'call-ended' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: INTERNAL, reason: 'fatal-status', attempts: 4 }),
    ]);
    // The cancelled attempts report their end before the call's.
    const types = h.eventTypes();
    expect(types.lastIndexOf('attempt-end')).toBeLessThan(types.indexOf('call-end'));
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(4);
  });

  // Java hedging_maxAttempts asserts: hedges every delay up to 6 and none after; with all but hedge 3 failed
  // non-fatally the call stays open, a later write goes to hedge 3 alone, and its headers commit and reach the app.
  // Differs: hedge 5 goes at hedge 2's non-fatal failure, not one delay later (A6).
  it('maxAttempts: six attempts and no more; the survivor gets the later writes and its headers commit', async () => {
    const h = engineCall(JAVA_POLICY, { type: 'bidi', interceptor: SIX });
    const t = timeline(h);
    advance(h, 300, t);
    expect(t.times).toEqual([0, 100, 200, 300]);

    // Hedge 2 fails: Java sends hedge 5 at 400 and 6 at 500; the package sends 5 at once, and 6 one delay later.
    h.attempt(1).fail(UNAVAILABLE);
    t.record();
    advance(h, 1000, t);
    expect(t.times).toEqual([0, 100, 200, 300, 300, 400]);
    expect(h.attempts).toHaveLength(6);
    expect(h.clock.pendingTimers).toBe(0);

    for (const i of [0, 3, 4]) h.attempt(i).fail(DATA_LOSS);
    h.attempt(5).fail(UNAVAILABLE);
    expect(h.attempts).toHaveLength(6);
    expect(h.received.statuses).toEqual([]); // attempt 3 is still out

    h.call.sendMessage('after the others failed');
    expect(h.attempts.map((a) => a.messages)).toEqual([[], [], ['after the others failed'], [], [], []]);

    const headers = new Metadata();
    headers.set('from', 'three');
    h.attempt(2).headers(headers);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 3, reason: 'headers' }),
    ]);
    expect(h.received.headers).toHaveLength(1);
    expect(h.received.headers[0]?.get('from')).toEqual(['three']);
    expect(h.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
    h.attempt(2).message('reply');
    h.attempt(2).status(Status.OK, 'OK');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['reply']);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ attempts: 6 });
  });

  // Java hedging_receiveHeaders asserts: with three hedges out, hedge 2's headers commit it, hedges 1 and 3 are
  // cancelled as losers, and the application gets hedge 2's headers.
  it('receive headers: the hedge that answers first wins, the others are cancelled as losers', async () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    h.clock.advance(200);
    expect(h.attempts).toHaveLength(3);
    h.attempt(1).headers();
    await h.settle();
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(2).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(1).cancelled).toBeUndefined();
    expect(cancelReasons(h)).toEqual({ 1: 'other-attempt-committed', 3: 'other-attempt-committed' });
    expect(h.received.headers).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'headers' }),
    ]);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(3); // committed: no more hedges
    expect(h.clock.pendingTimers).toBe(0);
    h.attempt(1).message('reply');
    h.attempt(1).status(Status.OK, 'OK');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['reply']);
  });

  // Java hedging_pushback_negative asserts: pushback -1 on hedge 2's non-fatal status leaves no hedge timer and no
  // further hedge however long one waits; the hedges in flight carry on (here hedge 3 then answers the call).
  it('negative pushback: no further hedge, the ones in flight go on and decide the call', () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    h.clock.advance(200);
    expect(h.attempts).toHaveLength(3);
    h.attempt(1).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '-1' });
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(3);
    expect(h.received.statuses).toEqual([]);
    expect(h.attempt(0).cancelled).toBeUndefined();
    expect(h.attempt(2).cancelled).toBeUndefined();
    h.attempt(2).succeed('from 3');
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['from 3']);
  });

  // Java hedging_pushback_positive asserts: after pushbacks of 101 and 99 the next hedges start (since
  // grpc-java#10293 at once, whatever the value), and hedge 4's fatal status cancels hedge 3 and closes the call.
  // Differs on purpose: A6 says "send next hedged request in n ms", and the package does: hedge 3 at 201 (not at 100
  // nor at its old time, 200), hedge 4 at 300, and the schedule resumes one delay after (hedge 5 at 400).
  it('positive pushback: the next hedge goes after exactly the pushback; a fatal status then ends the call', async () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    const t = timeline(h);
    advance(h, 100, t);
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '101' });
    expect(h.attempts).toHaveLength(2); // not at once
    advance(h, 100, t);
    expect(h.attempts).toHaveLength(2); // not at the old hedging time (200) either
    advance(h, 1, t);
    expect(t.times).toEqual([0, 100, 201]);

    h.attempt(1).fail(UNAVAILABLE, { 'grpc-retry-pushback-ms': '99' });
    advance(h, 98, t);
    expect(h.attempts).toHaveLength(3);
    advance(h, 1, t);
    expect(t.times).toEqual([0, 100, 201, 300]);
    expect(eventsOfType(h.events, 'hedge-scheduled').filter((e) => e.reason === 'pushback')).toEqual([
      expect.objectContaining({ attempt: 3, delayMs: 101 }),
      expect.objectContaining({ attempt: 4, delayMs: 99 }),
    ]);

    // A6: the schedule then resumes one hedging delay after the pushed-back hedge (Java's test stops here).
    advance(h, 99, t);
    expect(h.attempts).toHaveLength(4);
    advance(h, 1, t);
    expect(t.times).toEqual([0, 100, 201, 300, 400]);

    h.attempt(3).status(INTERNAL, 'fatal on 4');
    await h.settle();
    expect(h.status).toMatchObject({ code: INTERNAL, details: 'fatal on 4' });
    expect(h.attempt(2).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(4).cancelled?.code).toBe(Status.CANCELLED);
    expect(cancelReasons(h)).toMatchObject({ 3: 'call-ended', 5: 'call-ended' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ reason: 'fatal-status', attempts: 5 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // Java hedging_cancelled asserts: the application's cancel with two hedges out cancels both and closes the call
  // once; no hedge timer is left.
  it('cancelled by the application: every hedge out is cancelled, the call ends once', async () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.call.cancelWithStatus(Status.CANCELLED, 'cancelled');
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'cancelled' });
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(1).cancelled?.code).toBe(Status.CANCELLED);
    expect(cancelReasons(h)).toEqual({ 1: 'call-cancelled', 2: 'call-cancelled' });
    expect(eventsOfType(h.events, 'call-end')).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    expect(h.received.statuses).toHaveLength(1);
  });

  // Java hedging_perRpcBufferLimitExceeded asserts: two hedges at 999 bytes of a 1000-byte per-call limit; the
  // next 2 bytes commit one hedge and cancel the other. Java keeps hedge 2 (its count crossed the line); both sent
  // the same, A6 (keep the one that sent the most) leaves the tie open, and the package keeps the earlier one.
  // The package charges a message its bytes plus 53 (frame header and bookkeeping): `bytes(n)` is charged n.
  it('per-call buffer overflow: commits to one hedge, cancels the other, no more hedges', async () => {
    const h = engineCall(JAVA_POLICY, { type: 'bidi', interceptor: { ...SIX, perRpcBufferBytes: 1000 } });
    h.call.sendMessage(bytes(999));
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    expect(h.attempt(1).messages).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);

    h.call.sendMessage(bytes(55));
    await h.settle();
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    expect(h.attempt(1).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(0).cancelled).toBeUndefined();
    expect(cancelReasons(h)).toEqual({ 2: 'other-attempt-committed' });
    expect(h.attempt(0).messages).toHaveLength(2); // the overflowing write still goes, to the one kept
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
    // Committed by the overflow: a later non-fatal failure is the call's result.
    h.attempt(0).fail(UNAVAILABLE);
    await h.settle();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'replay-buffer', attempts: 2 });
  });

  // Java hedging_channelBufferLimitExceeded asserts: with other calls holding 1800 of the channel's 2000 bytes, a
  // hedged call holding 100 that writes 101 more commits (one hedge kept, the other cancelled), and its bytes leave
  // the channel's count. Here the other call is a real second call on the same interceptor.
  it('channel-wide buffer overflow: commits to one hedge, and the call gives back what it held', async () => {
    const shared = sharedInterceptor({ totalBufferBytes: 2000, perRpcBufferBytes: 1_000_000 });
    const other = shared.call();
    other.call.sendMessage(bytes(1800)); // another call of the channel holds 1800 bytes
    const h = shared.call();
    h.call.sendMessage(bytes(100));
    shared.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    expect(other.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);

    h.call.sendMessage(bytes(101)); // 1800 + 100 + 101 > 2000
    await shared.settle();
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    expect(h.attempts[1]?.cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempts[0]?.cancelled).toBeUndefined();
    expect(eventsOfType(other.events, 'committed')).toEqual([]); // the other call is untouched

    // The committed call holds nothing now: the other call's 150 more bytes fit (1800 + 150 <= 2000)...
    other.call.sendMessage(bytes(150));
    expect(eventsOfType(other.events, 'committed')).toEqual([]);
    // ...and 54 more do not.
    other.call.sendMessage(bytes(54));
    expect(eventsOfType(other.events, 'committed')).toEqual([
      expect.objectContaining({ reason: 'replay-buffer' }),
    ]);
    await shared.settle();
  });

  // Java hedging_transparentRetryNotAllowed asserts: hedge 2 fails non-fatally, hedge 3's fatal status then
  // cancels hedge 1 and is the call's status. (Its transparent-retry part is grpc-js's, below the interceptor.)
  // Differs: hedge 4 went at hedge 2's failure (A6), and is cancelled too.
  it('a non-fatal failure then a fatal status: the fatal status is the result, the rest cancelled', async () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    h.clock.advance(200);
    h.attempt(1).status(UNAVAILABLE, 'non-fatal on 2');
    expect(h.attempts).toHaveLength(4); // A6: the next hedge at once (Java: at 300)
    h.attempt(2).status(INTERNAL, 'fatal on 3');
    await h.settle();
    expect(h.status).toMatchObject({ code: INTERNAL, details: 'fatal on 3' });
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['2']);
    expect(h.attempt(0).cancelled?.code).toBe(Status.CANCELLED);
    expect(h.attempt(3).cancelled?.code).toBe(Status.CANCELLED);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: INTERNAL, reason: 'fatal-status' }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // Java hedging_throttledByOtherCall asserts: throttle 4 tokens (ratio 0.8); hedge 1's non-fatal failure (3
  // left), then another call's (2 left, the threshold), and hedge 3 still starts at 200 (Java asks the throttle only
  // at a failure). Differs on purpose: A6 sends a further hedge only while tokens exceed the threshold; the package
  // refuses it when due and waits for the hedge still out. Here the other call's failure comes first (see below).
  it('throttled by another call: the next hedge is refused when it comes due (Java still sends it)', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    // Not at the same moment as hedge 1's failure (that would send hedge 3 at once): Java's hedge 1 fails at 100,
    // after hedge 2 went; the package then sends hedge 3 at once, so the other call's failure comes first here.
    throttle.recordFailure(); // another call: 3 left
    h.attempt(0).fail(UNAVAILABLE); // 2 left: at the threshold, the hedge it would send at once is refused
    expect(throttle.tokens).toBe(2);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', attempt: 3, gate: 'retry-throttle', tokens: 2 }),
    ]);
    expect(h.received.statuses).toEqual([]);
    h.attempt(1).succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(throttle.tokens).toBeCloseTo(2.8);
  });

  // Java hedging_throttledByOtherCall, in Java's order: hedge 1 fails (3 left), then another call (2 left). The
  // package sent hedge 3 at hedge 1's failure (A6: at once); hedge 4, due on the timer, is refused where Java sends.
  it('throttled by another call, in Java order: the hedge due on the timer is refused', () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.clock.advance(100);
    h.attempt(0).fail(UNAVAILABLE); // 3 left: above the threshold, hedge 3 goes at once
    expect(h.attempts).toHaveLength(3);
    throttle.recordFailure(); // another call: 2 left
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(3);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', attempt: 4, tokens: 2 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // Java hedging_throttledByHedgingStreams asserts: throttle 4 tokens; hedges 1 and 2 fail non-fatally (3, then 2
  // left), the call closes, hedge 3 is never made and no timer is left (grpc-java#7222: it must not hang).
  // Differs: the package sends hedge 3 at hedge 1's failure (A6), so it is the third failure that ends the call.
  it("throttled by the call's own failures: no further hedge, and the call ends once none is out", async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.clock.advance(100);
    h.attempt(0).status(UNAVAILABLE, 'first'); // 3 left: hedge 3 at once
    expect(h.attempts).toHaveLength(3);
    h.attempt(1).status(UNAVAILABLE, 'second'); // 2 left: refused
    expect(h.attempts).toHaveLength(3);
    expect(h.received.statuses).toEqual([]);
    h.attempt(2).status(UNAVAILABLE, 'third'); // 1 left
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'third' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ reason: 'throttled', attempts: 3 }),
    ]);
    expect(throttle.tokens).toBe(1);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(3);
  });

  // Java hedging_throttledByHedgingStreams, in Java's shape (two hedges out, both fail, no third made): the
  // throttle starts at 3 here so that hedge 1's failure already reaches the threshold and sends nothing.
  it('throttled by its own failures with nothing else out: ends with the last failure, no hedge timer left', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    throttle.recordFailure(); // 3 left, so that the first failure already reaches the threshold
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    h.attempt(0).status(UNAVAILABLE, 'first'); // 2 left: no hedge
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).status(UNAVAILABLE, 'second'); // 1 left
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'second' });
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'throttled', attempts: 2 });
    expect(h.clock.pendingTimers).toBe(0);
  });
});

describe('grpc-java RetriableStreamTest, commit and replay cases, for a hedged call', () => {
  // Java addPrevRetryAttemptsToRespHeaders (a retry there) asserts: the application's headers carry one
  // grpc-previous-rpc-attempts, the winning attempt's count, in place of the server's value ("3").
  it.each([
    ['hedge 2 wins', 1, ['1']],
    ['hedge 3 wins', 2, ['2']],
  ] as const)(
    'response headers when %s: its own count, the server value replaced',
    (_name, winner, expected) => {
      const h = engineCall(JAVA_POLICY, { interceptor: SIX });
      h.clock.advance(200);
      const headers = new Metadata();
      headers.set('grpc-previous-rpc-attempts', '3');
      h.attempt(winner).headers(headers);
      expect(h.received.headers).toHaveLength(1);
      expect(h.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual(expected);
    },
  );

  // Java notAdd0PrevRetryAttemptsToRespHeaders asserts: an answer from the first attempt gets no such header.
  it('response headers when the first attempt wins: no grpc-previous-rpc-attempts', () => {
    const h = engineCall(JAVA_POLICY, { interceptor: SIX });
    h.clock.advance(200);
    h.attempt(0).headers();
    expect(h.received.headers).toHaveLength(1);
    expect(h.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual([]);
  });

  // Java perRpcBufferLimitExceededDuringBackoff (a retry there) asserts: a write past the limit during the backoff
  // commits nothing; the retry still starts, and commits when its own count crosses the limit. Differs on purpose:
  // the package (docs/configuration.md, "Commit", as grpc-js's own retries) ends the call at once with the failure it
  // waited after, reason replay-buffer. Here the wait is a hedged call's pushback, with nothing in flight.
  it('an overflow during a pushback wait with nothing in flight ends the call with the failure', async () => {
    const h = engineCall(JAVA_POLICY, { type: 'bidi', interceptor: { ...SIX, perRpcBufferBytes: 1000 } });
    h.call.sendMessage(bytes(999));
    h.attempt(0).status(UNAVAILABLE, 'pushed back', { 'grpc-retry-pushback-ms': '250' });
    expect(h.received.statuses).toEqual([]);
    h.call.sendMessage(bytes(55));
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'pushed back' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ reason: 'replay-buffer', attempts: 1 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });
});

describe('grpc-java RetriableStreamTest, throttling cases, for a hedged call', () => {
  // Java throttledStream_* (retries there; its hedging decision counts alike) assert: a retryable (here non-fatal)
  // code takes a token whatever the pushback; any other code takes one only with a do-not-retry pushback ("", -1).
  it.each([
    ['non-fatal, no pushback', UNAVAILABLE, undefined, 2],
    ['non-fatal, pushback 123', UNAVAILABLE, '123', 2],
    ['non-fatal, do-not-retry pushback ""', UNAVAILABLE, '', 2],
    ['fatal, no pushback', INTERNAL, undefined, 3],
    ['fatal, pushback 123', INTERNAL, '123', 3],
    ['fatal, do-not-retry pushback ""', INTERNAL, '', 2],
    ['fatal, do-not-retry pushback -1', INTERNAL, '-1', 2],
  ] as const)('%s: tokens after the failure', async (_name, code, pushback, tokensAfter) => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    throttle.recordFailure(); // another call: 3 left
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.attempt(0).fail(code, pushback === undefined ? {} : { 'grpc-retry-pushback-ms': pushback });
    expect(throttle.tokens).toBe(tokensAfter);
    h.call.cancelWithStatus(Status.CANCELLED, 'done');
    await h.settle();
    expect(h.received.statuses).toHaveLength(1);
    expect(throttle.tokens).toBe(tokensAfter); // a cancel takes nothing
  });

  // Java hedging_throttledByHedgingStreams (grpc-java#7222), with a pushback: a throttled failure is not hedgeable,
  // so with nothing else out Java closes the call at once. Here the only attempt fails non-fatally with pushback 300
  // and its token reaches the threshold. A6: throttled hedges do not block ("if there are no other already-sent
  // hedged RPCs the failure is returned"); the package's own retry in that state ends at once. (This audit found
  // the hedged call waiting out the pushback, 300 ms with nothing in flight, before the gate refused: fixed, such a
  // hedge is asked of the gates when it is decided, as a retry is.)
  it('throttled with a pushback and nothing in flight: the call ends at once with the failure', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    throttle.recordFailure(); // another call: 3 left
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.attempt(0).status(UNAVAILABLE, 'pushed back', { 'grpc-retry-pushback-ms': '300' }); // 2 left
    await h.settle();
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'pushed back' });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ reason: 'throttled', attempts: 1, retryDelayMs: 0 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // Java throttledStream_FailWithRetriableStatusCode_WithRetriablePushback's state, but throttled: for comparison,
  // a retry policy ends the call at once (docs: "a throttled retry is not delayed").
  it('for comparison, a retry in that state ends at once', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    throttle.recordFailure();
    const h = engineCall(retryPolicy({ maxAttempts: 5 }), { interceptor: { gate: throttle } });
    h.attempt(0).status(UNAVAILABLE, 'pushed back', { 'grpc-retry-pushback-ms': '300' });
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'pushed back' });
    expect(eventsOfType(h.events, 'call-end')[0]).toMatchObject({ reason: 'throttled', attempts: 1 });
    expect(h.clock.pendingTimers).toBe(0);
  });

  // Java throttleStream_Succeed asserts: tokenRatio (0.8) is added when the call commits, at its headers. Differs on
  // purpose: A6 credits "every successful RPC"; the package adds it once when the call ends OK, however many hedges.
  it('a successful hedged call adds tokenRatio once, at its OK status (Java: at the headers)', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.8 });
    throttle.recordFailure(); // another call: 3 left, hedges still go
    const h = engineCall(JAVA_POLICY, { interceptor: { ...SIX, gate: throttle } });
    h.clock.advance(200);
    expect(h.attempts).toHaveLength(3);
    h.attempt(1).headers();
    expect(throttle.tokens).toBe(3); // nothing at the commit
    h.attempt(1).message('reply');
    h.attempt(1).status(Status.OK, 'OK');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(throttle.tokens).toBeCloseTo(3.8); // once, though three attempts were out
  });
});

/** Several calls on one interceptor (so one replay-buffer total), each with scripted attempts. */
function sharedInterceptor(options: { totalBufferBytes: number; perRpcBufferBytes: number }) {
  const clock = new FakeClock(T0);
  const allEvents: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(JAVA_POLICY, {
    clock,
    random: () => 0.5,
    maxAttemptsLimit: 6,
    onEvent: (e) => allEvents.push(e),
    ...options,
  });
  return {
    clock,
    async settle() {
      for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    },
    call() {
      const attempts: FakeAttempt[] = [];
      const statuses: StatusObject[] = [];
      const callOptions = {
        method_definition: {
          path: METHOD,
          requestStream: true,
          responseStream: true,
          requestSerialize: (m: unknown) => (Buffer.isBuffer(m) ? m : Buffer.from(String(m))),
          responseDeserialize: (b: Buffer) => b.toString(),
        },
        deadline: undefined,
      } as unknown as InterceptorOptions;
      const nextCall = (o: InterceptorOptions) => {
        const attempt = new FakeAttempt(attempts.length, o);
        attempts.push(attempt);
        return attempt;
      };
      const before = allEvents.length;
      const call = interceptor(callOptions, nextCall as never) as unknown as InterceptingCallInterface;
      const listener: InterceptingListener = {
        onReceiveMetadata: () => {},
        onReceiveMessage: () => {},
        onReceiveStatus: (s) => statuses.push(s),
      };
      call.start(new Metadata(), listener);
      call.startRead();
      const callId = allEvents.find((e, i) => i >= before && e.type === 'call-start')?.callId;
      return {
        call,
        attempts,
        statuses,
        get events(): RetryEvent[] {
          return allEvents.filter((e) => e.callId === callId);
        },
      };
    },
  };
}
