/**
 * grpc-dotnet's retry and hedging unit tests (test/Grpc.Net.Client.Tests/Retry: RetryTests.cs, HedgingTests.cs,
 * HedgingCallTests.cs, ChannelRetryThrottlingTests.cs) re-created against the interceptor under a FakeClock, where
 * the earlier audits (core-retry-cases, go-java-retry-cases, java-hedging-cases) do not already hold the scenario.
 * grpc-dotnet drives Grpc.Net.Client against a mocked HTTP handler; here the scripted next call of
 * test/helpers/engine.ts plays that handler's part. The .NET defaults are those of its ServiceConfigHelpers: a retry
 * policy of 5 attempts with 1 ms backoffs, a hedging policy of 5 attempts with no delay (all at once), UNAVAILABLE
 * retryable or non-fatal. The cases that need a real grpc-js channel (closing it during a wait, a unary answer with
 * no message) are in test/interop/dotnet-retry-cases.e2e.test.ts.
 *
 * grpc-dotnet's own departures from A6, read in its sources (src/Grpc.Net.Client/Internal/Retry) and asserted here
 * in A6's terms, which are the package's, where a test reaches them:
 * - Backoff: .NET draws the delay uniformly from [0, current backoff) (the pre-2024 A6 jitter), and after a
 *   pushback of n ms it grows the next backoff from n. A6 and the package: U[0.8, 1.2] times the capped backoff,
 *   and after a pushback the backoff starts again from initialBackoff.
 * - A pushback n >= 0 makes .NET retry whatever the status code (it looks at the pushback before the retryable
 *   codes); A6 honours a pushback only for a status it would retry.
 * - Pushback values are read with int.TryParse, so "007", "+7" and " 7" are 7 ms there; A6 wants a plain decimal
 *   integer, and the package stops retrying on them (docs/configuration.md, "Pushback").
 * - Hedging: a do-not-retry pushback on a non-fatal status only cuts .NET's hedging delay short, so the next hedge
 *   goes at once; A6 stops new hedges (the package's behaviour is in java-hedging-cases).
 * - A hedged call throttled with nothing in flight ends CANCELLED ("Retries stopped because retry throttling is
 *   active.") in .NET; A6 returns the failure, and so does the package.
 * - Defaults: MaxRetryAttempts 5 (as A6; null lifts the cap there, the package's maxAttemptsLimit is always a
 *   number), MaxRetryBufferSize 16 MiB and MaxRetryBufferPerCallSize 1 MiB (as grpc-js and the package).
 *
 * Not re-created (no counterpart for a client interceptor on grpc-js): the .NET writer's own rules
 * (ClientStreamWriter_WriteWhilePendingWrite_ErrorThrown, ClientStreamWriter_WriteWhileComplete_ErrorThrown,
 * AsyncClientStreamingCall_CompleteAndWriteAfterResult_Error: Node's Writable queues writes and refuses a write after
 * end() by itself), the disposed-channel guard (AsyncUnaryCall_DisposedChannel_Error: no retry decision in it; on a
 * closed grpc-js channel the first attempt cannot start, "Channel has been shut down"), the CallCredentials cases (AsyncUnaryCall_AuthInteceptor_*: call
 * credentials run below the interceptor, inside each attempt), the unobserved-Task-exception cases (a .NET Task
 * matter) and HedgingCallTests' registration clean-up (AsyncUnaryCall_CancellationTokenSuccess_CleanedUp: its
 * analogue here, no timer left behind, is checked throughout). .NET's log lines naming a commit reason are checked
 * through `committed` and `call-end` events. Already re-created by the earlier audits, so not repeated: too many
 * attempts, a non-retryable code, client-streaming and bidi replay with later writes, a message or headers then a
 * failure, a hedge's fatal status cancelling the others, cancelling a hedged call with hedges out, a non-fatal
 * failure sending the next hedge at once, and a negative pushback on a hedge.
 */
import { type InterceptorOptions, Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import {
  type EngineCall,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  METHOD,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';

const { OK, UNAVAILABLE, INVALID_ARGUMENT, CANCELLED, DEADLINE_EXCEEDED } = Status;
const PUSHBACK = 'grpc-retry-pushback-ms';

/** .NET's CreateRetryServiceConfig: 5 attempts, 1 ms backoffs, multiplier 1, UNAVAILABLE retryable. */
function dotnetRetry(policy: Record<string, unknown> = {}): object {
  return retryPolicy({
    maxAttempts: 5,
    initialBackoff: '0.001s',
    maxBackoff: '0.001s',
    backoffMultiplier: 1,
    ...policy,
  });
}

/** .NET's CreateHedgingServiceConfig: 5 attempts, no delay (all at once), UNAVAILABLE non-fatal. */
function dotnetHedging(policy: Record<string, unknown> = {}): object {
  return hedgingPolicy({
    maxAttempts: 5,
    hedgingDelay: '0s',
    nonFatalStatusCodes: ['UNAVAILABLE'],
    ...policy,
  });
}

/** Notes the fake time (ms since the call started) at which each attempt was made, as the clock moves. */
function timeline(h: EngineCall): { times: number[]; advance: (ms: number) => void } {
  const times: number[] = [];
  const record = () => {
    while (times.length < h.attempts.length) times.push(h.clock.now() - T0);
  };
  record();
  return {
    times,
    advance(ms) {
      h.clock.advance(0); // what falls due now (a 0 ms timer) runs first
      record();
      for (let i = 0; i < ms; i++) {
        h.clock.advance(1);
        record();
      }
    },
  };
}

function callEnd(h: EngineCall) {
  const ends = eventsOfType(h.events, 'call-end');
  expect(ends).toHaveLength(1);
  return ends[0];
}

function metadataOf(entries: Record<string, string>): Metadata {
  const md = new Metadata();
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
}

describe('grpc-dotnet RetryTests', () => {
  // .NET AsyncUnaryCall_SuccessAfterRetry_RequestContentSent asserts: 2 calls; the retry carries the request again
  // and grpc-previous-rpc-attempts "1" (the first none); the response headers read "1"; the retry's trailer arrives.
  it('a Trailers-Only UNAVAILABLE is retried: the request again, the attempt count in headers both ways', async () => {
    const h = engineCall(dotnetRetry(), { request: 'World' });
    h.attempt(0).status(UNAVAILABLE, 'first');
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    expect(h.attempt(0).header('grpc-previous-rpc-attempts')).toBeUndefined();
    expect(h.attempt(1).header('grpc-previous-rpc-attempts')).toBe('1');
    expect(h.attempt(1).messages).toEqual(['World']);
    expect(h.attempt(1).halfClosed).toBe(true);

    h.attempt(1).headers();
    h.attempt(1).message('Hello world');
    h.attempt(1).status(OK, 'OK', { 'custom-trailer': 'Value!' });
    await h.settle();
    expect(h.received.headers).toHaveLength(1);
    expect(h.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual(['1']);
    expect(h.received.messages).toEqual(['Hello world']);
    expect(h.status.code).toBe(OK);
    expect(h.status.metadata.get('custom-trailer')).toEqual(['Value!']);
    expect(callEnd(h)).toMatchObject({ code: OK, attempts: 2 });
  });

  // .NET AsyncUnaryCall_SuccessAfterRetry_AccessResponseHeaders_SuccessfullyResponseHeadersReturned asserts: headers
  // asked for before the first attempt failed are the retry's ("call-count" 2), not the failed attempt's.
  it("the application's headers are the retry's; a failed Trailers-Only attempt's metadata never reaches it", async () => {
    const h = engineCall(dotnetRetry());
    h.attempt(0).status(UNAVAILABLE, 'first', { 'call-count': '1' });
    h.clock.advance(1);
    h.attempt(1).headers(metadataOf({ 'call-count': '2' }));
    expect(h.received.headers).toHaveLength(1);
    expect(h.received.headers[0]?.get('call-count')).toEqual(['2']);
    h.attempt(1).message('Hello world');
    h.attempt(1).status(OK, 'OK');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.status.metadata.get('call-count')).toEqual([]);
    expect(h.received.messages).toEqual(['Hello world']);
  });

  // .NET AsyncUnaryCall_PushbackStop_Failure ("", "-1", "stop") asserts: 1 call, the call ends UNAVAILABLE. And
  // .NET's own pushback parsing (int.TryParse, no test of its own): "007", "+7" and " 7" read 7 ms there, and the
  // call would retry after 7 ms. Differs on purpose: A6 wants a plain decimal integer; the package reads these as
  // unparseable, so do not retry (docs/configuration.md, "Pushback", names "007").
  it.each(['', '-1', 'stop', '007', '+7', ' 7'])(
    'a pushback of %j stops the retries: one attempt, UNAVAILABLE',
    async (value) => {
      const h = engineCall(dotnetRetry());
      h.attempt(0).status(UNAVAILABLE, 'pushed back', { [PUSHBACK]: value });
      await h.settle();
      expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'pushed back' });
      expect(callEnd(h)).toMatchObject({ reason: 'do-not-retry', attempts: 1 });
      expect(h.clock.pendingTimers).toBe(0);
      h.clock.advance(1000);
      expect(h.attempts).toHaveLength(1);
    },
  );

  // .NET AsyncUnaryCall_PushbackExpicitDelay_DelayForSpecifiedDuration asserts: with 1 ms backoffs, a pushback of 200
  // ms holds the retry back (the call is still open after 100 ms) and the retry answers. Extended past .NET's test:
  // the backoff after that retry starts again from initialBackoff (A6), where .NET would grow it from the 200 ms
  // pushback (then draw from [0, 400) ms with multiplier 2).
  it('a pushback of 200 ms delays the retry by exactly that; the backoff after it starts from initialBackoff', async () => {
    const h = engineCall(dotnetRetry({ initialBackoff: '0.01s', maxBackoff: '1s', backoffMultiplier: 2 }));
    const t = timeline(h);
    h.attempt(0).status(UNAVAILABLE, 'pushed back', { [PUSHBACK]: '200' });
    t.advance(199);
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toEqual([]);
    t.advance(1);
    expect(t.times).toEqual([0, 200]);

    h.attempt(1).status(UNAVAILABLE, 'no pushback'); // backoff 10 ms x U (0.5 -> factor 1.0)
    t.advance(100);
    expect(t.times).toEqual([0, 200, 210]);
    expect(eventsOfType(h.events, 'retry-scheduled').map((e) => e.delayMs)).toEqual([200, 10]);
    h.attempt(2).succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.received.messages).toEqual(['Hello world']);
  });

  // .NET AsyncUnaryCall_CancellationDuringBackoff_CanceledStatus and AsyncUnaryCall_CallDisposeDuringBackoff_
  // CanceledStatus (a 10 s pushback) and AsyncUnaryCall_FailureWithLongDelay_Dispose_CallImmediatelyDisposed (30 s
  // backoffs) assert: the call is still waiting after 100 ms; the cancel (or dispose) ends it at once, CANCELLED.
  it.each([
    ['a 10 s pushback', dotnetRetry(), { [PUSHBACK]: '10000' }],
    ['a 30 s backoff', dotnetRetry({ initialBackoff: '30s', maxBackoff: '30s' }), {}],
  ] as const)(
    'a cancel during %s ends the call at once, CANCELLED, no timer left',
    async (_name, config, trailers) => {
      const h = engineCall(config);
      h.attempt(0).status(UNAVAILABLE, 'first', trailers);
      h.clock.advance(100);
      expect(h.received.statuses).toEqual([]);
      expect(h.attempts).toHaveLength(1);
      h.call.cancelWithStatus(CANCELLED, 'Cancelled on client');
      await h.settle();
      expect(h.status).toMatchObject({ code: CANCELLED, details: 'Cancelled on client' });
      expect(h.clock.pendingTimers).toBe(0);
      h.clock.advance(60_000);
      expect(h.attempts).toHaveLength(1);
      expect(h.received.statuses).toHaveLength(1);
    },
  );

  // .NET AsyncUnaryCall_PushbackExplicitDelayExceedAttempts_Failure asserts: a pushback of 0 on every attempt makes
  // exactly maxAttempts (5) calls, then UNAVAILABLE.
  it('a pushback of 0 on every attempt: retries at once, exactly maxAttempts, then the last failure', async () => {
    const h = engineCall(dotnetRetry({ initialBackoff: '10s', maxBackoff: '10s' }));
    const t = timeline(h);
    for (let i = 0; i < 5; i++) {
      h.attempt(i).status(UNAVAILABLE, `attempt ${i + 1}`, { [PUSHBACK]: '0' });
      t.advance(0); // a 0 ms timer runs: the retry is sent without the clock moving
    }
    await h.settle();
    expect(t.times).toEqual([0, 0, 0, 0, 0]); // the 0 ms pushback, not the 10 s backoff
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'attempt 5' });
    expect(callEnd(h)).toMatchObject({ reason: 'attempts-exhausted', attempts: 5 });
    expect(h.clock.pendingTimers).toBe(0);
  });

  // .NET AsyncServerStreamingCall_NoMessagesSuccess_SuccussCommitLogged asserts: a server stream answered OK with
  // no message reads nothing and ends OK, committed once (.NET's log says at the headers).
  it('a server stream ended OK with no message: one attempt, nothing read, committed by its OK status', async () => {
    const h = engineCall(dotnetRetry(), { type: 'server-stream' });
    h.attempt(0).status(OK, 'OK');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.received.messages).toEqual([]);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'status' }),
    ]);
  });

  // .NET AsyncServerStreamingCall_SuccessAfterRetry_RequestContentSent asserts: the retry of a server stream carries
  // the one request message, then the end of the request, and its message is read.
  it('a server stream retried: the retry gets the request and the half-close, its message is read', async () => {
    const h = engineCall(dotnetRetry(), { type: 'server-stream', request: 'World' });
    h.attempt(0).status(UNAVAILABLE, 'first');
    h.clock.advance(1);
    expect(h.attempt(1).messages).toEqual(['World']);
    expect(h.attempt(1).halfClosed).toBe(true);
    h.attempt(1).headers();
    h.attempt(1).message('Hello world');
    h.attempt(1).status(OK, 'OK');
    await h.settle();
    expect(h.received.messages).toEqual(['Hello world']);
    expect(h.status.code).toBe(OK);
  });

  // .NET AsyncClientStreamingCall_WriteAfterResult_Error asserts: once the call has its OK result (before the client
  // completed its stream), a write fails with the call's status (OK). Here: the write reaches no new attempt, its
  // callback still comes (a Node writer is not left waiting), and the call keeps its one status.
  it('a client stream that ended OK before the half-close: a later write starts nothing', async () => {
    const h = engineCall(dotnetRetry(), { type: 'client-stream' });
    h.call.sendMessage('1');
    h.attempt(0).succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    let written = false;
    h.call.sendMessageWithContext({ callback: () => (written = true) }, '2');
    h.call.halfClose();
    await h.settle();
    h.clock.advance(1000);
    expect(written).toBe(true);
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toHaveLength(1);
  });
});

describe('grpc-dotnet HedgingTests', () => {
  // .NET AsyncUnaryCall_OneAttempt_Success (maxAttempts 2, 10, 100, with MaxRetryAttempts raised to match) asserts:
  // with no hedging delay every attempt is on the server at once; the call ends OK. Here one hedge answers and the
  // others are cancelled; each hedge carries its number.
  it.each([2, 10, 100])('no hedging delay, maxAttempts %i: all attempts at once, one answers', async (n) => {
    const h = engineCall(dotnetHedging({ maxAttempts: n }), {
      request: 'World',
      interceptor: { maxAttemptsLimit: n },
    });
    expect(h.attempts).toHaveLength(n);
    for (const a of h.attempts) {
      expect(a.messages).toEqual(['World']);
      expect(a.halfClosed).toBe(true);
      expect(a.header('grpc-previous-rpc-attempts')).toBe(a.index === 0 ? undefined : String(a.index));
    }
    const winner = h.attempt(n - 1);
    winner.succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.received.messages).toEqual(['Hello world']);
    expect(h.attempts.filter((a) => a.cancelled).length).toBe(n - 1);
    expect(winner.cancelled).toBeUndefined();
    expect(h.clock.pendingTimers).toBe(0);
  });

  // .NET AsyncClientStreamingCall_ManyParallelCalls_ReadDirectlyToRequestStream asserts: 100 hedges at once each get
  // the same bytes for each write, and a write completes once every hedge has it; the call ends OK.
  it('a client stream hedged 100 ways at once: each write reaches every hedge, its callback once all have it', async () => {
    const h = engineCall(dotnetHedging({ maxAttempts: 100 }), {
      type: 'client-stream',
      interceptor: { maxAttemptsLimit: 100 },
    });
    expect(h.attempts).toHaveLength(100);
    for (const a of h.attempts) a.autoCompleteWrites = false;
    let done = 0;
    h.call.sendMessageWithContext({ callback: () => done++ }, 'World');
    expect(h.attempts.every((a) => a.messages.join() === 'World')).toBe(true);
    for (const a of h.attempts.slice(0, 99)) a.pendingWrites.shift()?.();
    expect(done).toBe(0); // one hedge has not written it yet
    h.attempt(99).pendingWrites.shift()?.();
    expect(done).toBe(1);
    for (const a of h.attempts) a.autoCompleteWrites = true;
    h.call.sendMessageWithContext({ callback: () => done++ }, 'World 2');
    expect(done).toBe(2);
    h.call.halfClose();
    expect(h.attempts.every((a) => a.messages.join() === 'World,World 2' && a.halfClosed)).toBe(true);
    h.attempt(42).succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.received.messages).toEqual(['Hello world']);
  });

  // .NET AsyncUnaryCall_ExceedAttempts_Failure asserts: all 5 hedges are on the server at once, each with the
  // request; every one fails UNAVAILABLE and so does the call. Here the call ends with the last status received.
  it('five hedges at once all fail: the call ends with the last status received, no sixth attempt', async () => {
    const h = engineCall(dotnetHedging(), { request: 'World' });
    expect(h.attempts.map((a) => a.messages)).toEqual(Array.from({ length: 5 }, () => ['World']));
    for (const i of [3, 0, 4, 1, 2]) h.attempt(i).status(UNAVAILABLE, `attempt ${i + 1}`);
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'attempt 3' });
    expect(callEnd(h)).toMatchObject({ reason: 'attempts-exhausted', attempts: 5 });
    expect(h.attempts).toHaveLength(5);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // .NET AsyncUnaryCall_ExceedDeadlineWithActiveCalls_Failure asserts: hedgingDelay 200 ms, deadline 100 ms, the
  // server silent: one call made, DEADLINE_EXCEEDED, committed for the deadline. Here grpc-js below ends the attempt
  // at the deadline, as it does.
  it('the deadline before the first hedging delay: one attempt, DEADLINE_EXCEEDED, no hedge after it', async () => {
    const h = engineCall(dotnetHedging({ hedgingDelay: '0.2s' }), { deadlineMs: 100 });
    h.clock.advance(100);
    h.attempt(0).status(DEADLINE_EXCEEDED, 'Deadline exceeded');
    await h.settle();
    expect(h.status.code).toBe(DEADLINE_EXCEEDED);
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });

  // The same .NET case when nothing below reports the deadline: the interceptor's own timer ends the call (100 ms of
  // grace past the deadline, docs/configuration.md "Deadline and cancel"), and the hedge due later is never sent.
  it('the deadline with no status from below: the interceptor ends the call itself, no hedge sent', async () => {
    const h = engineCall(dotnetHedging({ hedgingDelay: '0.3s' }), { deadlineMs: 100 });
    h.clock.advance(199);
    expect(h.received.statuses).toEqual([]);
    h.clock.advance(1);
    await h.settle();
    expect(h.status.code).toBe(DEADLINE_EXCEEDED);
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
  });

  // .NET AsyncUnaryCall_ExceedAttempts_PusbackDelay_Failure asserts: maxAttempts 2, hedgingDelay 100 ms, every
  // failure with a 100 ms pushback: the second call comes at least 100 ms after the first, then UNAVAILABLE. Here
  // also: the last failure's pushback is not waited out, as no attempt is left to send.
  it('maxAttempts 2 with a 100 ms pushback each time: the hedge waits the pushback, the last failure ends at once', async () => {
    const h = engineCall(dotnetHedging({ maxAttempts: 2, hedgingDelay: '0.1s' }));
    const t = timeline(h);
    h.attempt(0).status(UNAVAILABLE, 'first', { [PUSHBACK]: '100' });
    t.advance(99);
    expect(h.attempts).toHaveLength(1);
    t.advance(1);
    expect(t.times).toEqual([0, 100]);
    h.attempt(1).status(UNAVAILABLE, 'second', { [PUSHBACK]: '100' });
    await h.settle();
    expect(h.status).toMatchObject({ code: UNAVAILABLE, details: 'second' });
    expect(callEnd(h)).toMatchObject({ reason: 'attempts-exhausted', attempts: 2 });
    expect(h.clock.pendingTimers).toBe(0);
  });

  // .NET AsyncUnaryCall_PushbackDelay_PushbackDelayUpdatesNextCallDelay asserts: hedgingDelay 10 s, maxAttempts 5;
  // the first failure's pushback of 0 sends the second call at once, whose pushback of 10 s holds back the third
  // (only two calls made within the test).
  it('pushback 0 sends the next hedge at once; a 10 s pushback then holds the next one 10 s', () => {
    const h = engineCall(dotnetHedging({ hedgingDelay: '10s' }));
    const t = timeline(h);
    h.attempt(0).status(UNAVAILABLE, 'first', { [PUSHBACK]: '0' });
    expect(t.times).toEqual([0]);
    t.advance(0);
    expect(t.times).toEqual([0, 0]);
    h.attempt(1).status(UNAVAILABLE, 'second', { [PUSHBACK]: '10000' });
    t.advance(9999);
    expect(h.attempts).toHaveLength(2);
    t.advance(1);
    expect(t.times).toEqual([0, 0, 10_000]);
    expect(h.received.statuses).toEqual([]);
  });

  // .NET AsyncServerStreamingCall_SuccessAfterRetry_RequestContentSent (hedging, maxAttempts 2, 50 ms) asserts: the
  // first call fails, the second carries the request and its message is read.
  it('a hedged server stream: after the first fails the hedge carries the request, and answers', async () => {
    const h = engineCall(dotnetHedging({ maxAttempts: 2, hedgingDelay: '0.05s' }), {
      type: 'server-stream',
      request: 'World',
    });
    const t = timeline(h);
    h.attempt(0).status(UNAVAILABLE, 'first');
    t.advance(0);
    expect(t.times).toEqual([0, 0]); // a non-fatal failure sends the next hedge at once (A6)
    expect(h.attempt(1).messages).toEqual(['World']);
    expect(h.attempt(1).halfClosed).toBe(true);
    h.attempt(1).headers();
    h.attempt(1).message('Hello world');
    h.attempt(1).status(OK, 'OK');
    await h.settle();
    expect(h.received.messages).toEqual(['Hello world']);
    expect(h.status.code).toBe(OK);
  });

  // .NET AsyncUnaryCall_ManyAttemptsNoDelay_MarshallerCalledOnce asserts: five hedges at once, all failing, run the
  // request marshaller once. Differs on purpose: before each hedge the package serializes each held message once
  // more to check it was not changed after it was written (docs/configuration.md, "Commit"; `checkResentRequests`);
  // with that check off the serializer runs once, as in .NET.
  it.each([
    ['checkResentRequests on (default)', 5, true],
    ['checkResentRequests off', 1, false],
  ] as const)('five hedges at once, %s: the request serializer runs %i times', async (_name, runs, check) => {
    let serialized = 0;
    const method_definition = {
      path: METHOD,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: unknown) => {
        serialized++;
        return Buffer.from(String(m));
      },
      responseDeserialize: (b: Buffer) => b.toString(),
    } as unknown as InterceptorOptions['method_definition'];
    const h = engineCall(dotnetHedging(), {
      request: 'World',
      callOptions: { method_definition },
      interceptor: { checkResentRequests: check },
    });
    expect(h.attempts).toHaveLength(5);
    for (const a of h.attempts) a.status(UNAVAILABLE, 'down');
    await h.settle();
    expect(h.status.code).toBe(UNAVAILABLE);
    expect(serialized).toBe(runs);
  });

  // .NET AsyncClientStreamingCall_WriteAfterResult_Error (hedging) asserts: a write after the call's OK result
  // fails with that status. Here: the write reaches no attempt, its callback still comes, nothing more is started.
  it('a hedged client stream that ended OK: a later write reaches no attempt and starts nothing', async () => {
    const h = engineCall(dotnetHedging(), { type: 'client-stream' });
    h.call.sendMessage('1');
    h.attempt(2).succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    let written = false;
    h.call.sendMessageWithContext({ callback: () => (written = true) }, '2');
    await h.settle();
    expect(written).toBe(true);
    expect(h.attempts.map((a) => a.messages)).toEqual([['1'], ['1'], ['1'], ['1'], ['1']]);
    expect(h.received.statuses).toHaveLength(1);
  });
});

describe('grpc-dotnet HedgingCallTests', () => {
  // .NET ClientStreamWriteAsync_NoActiveCalls_WaitsForNextCall asserts: hedgingDelay 200 ms; the only call out fails
  // with a 200 ms pushback; a write made while no call is out completes only when the next hedge has started, and
  // that hedge gets both messages and answers.
  it('a write while no hedge is out waits for the next hedge, which gets every message', async () => {
    const h = engineCall(dotnetHedging({ hedgingDelay: '0.2s' }), { type: 'client-stream' });
    const t = timeline(h);
    h.call.sendMessage('Name 1');
    h.attempt(0).status(UNAVAILABLE, 'first', { [PUSHBACK]: '200' });
    let written = false;
    h.call.sendMessageWithContext({ callback: () => (written = true) }, 'Name 2');
    t.advance(199);
    expect(written).toBe(false);
    expect(h.attempts).toHaveLength(1);
    t.advance(1);
    expect(t.times).toEqual([0, 200]);
    expect(written).toBe(true);
    expect(h.attempt(1).messages).toEqual(['Name 1', 'Name 2']);
    h.call.halfClose();
    expect(h.attempt(1).halfClosed).toBe(true);
    t.advance(50);
    h.attempt(1).succeed('Hello world');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(h.received.messages).toEqual(['Hello world']);
    expect(h.attempts).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
  });

  // .NET RetryThrottling_BecomesActiveDuringDelay_CancelFailure asserts: throttle 5 tokens (ratio 0.1); the only call
  // fails with a 200 ms pushback (4 left, above 2.5); two more failures elsewhere (2 left) during the wait; the call
  // then ends with 1 call made, CANCELLED "Retries stopped because retry throttling is active.". Differs on purpose:
  // a hedge that replaces failed attempts after a wait is decided when the failure comes, as a retry is and as
  // grpc-java decides it (its throttle is asked only at a failure), so that a throttled call fails at once rather
  // than wait out the pushback (A6: throttled hedges do not block), and a gate that spends when it allows (a
  // RetryBudget) is charged once. A throttle that turns active during the wait does not recall that one hedge.
  it('throttled only during a pushback wait with nothing out: the hedge allowed at the failure goes', async () => {
    const throttle = new RetryThrottle({ maxTokens: 5, tokenRatio: 0.1 });
    const h = engineCall(dotnetHedging({ hedgingDelay: '0.2s' }), { interceptor: { gate: throttle } });
    h.attempt(0).status(UNAVAILABLE, 'first', { [PUSHBACK]: '200' });
    expect(throttle.tokens).toBe(4);
    throttle.recordFailure();
    throttle.recordFailure(); // other calls: 2 left, at most half
    h.clock.advance(199);
    expect(h.attempts).toHaveLength(1);
    h.clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    expect(eventsOfType(h.events, 'throttled')).toEqual([]);
    h.attempt(1).succeed('late but fine');
    await h.settle();
    expect(h.status.code).toBe(OK);
    expect(callEnd(h)).toMatchObject({ attempts: 2, retryDelayMs: 200 });
  });

  // .NET AsyncUnaryCall_CancellationDuringBackoff_CanceledStatus and AsyncUnaryCall_DisposeDuringBackoff_Canceled
  // Status (hedging) assert: hedgingDelay 10 s, the only call out fails with a 10 s pushback; a cancel (or dispose)
  // then ends the call CANCELLED.
  it('a cancel while the hedged call waits out a pushback with nothing out: CANCELLED at once, no timer left', async () => {
    const h = engineCall(dotnetHedging({ hedgingDelay: '10s' }));
    h.attempt(0).status(UNAVAILABLE, 'first', { [PUSHBACK]: '10000' });
    h.clock.advance(100);
    expect(h.received.statuses).toEqual([]);
    h.call.cancelWithStatus(CANCELLED, 'Cancelled on client');
    await h.settle();
    expect(h.status).toMatchObject({ code: CANCELLED, details: 'Cancelled on client' });
    expect(h.clock.pendingTimers).toBe(0);
    h.clock.advance(60_000);
    expect(h.attempts).toHaveLength(1);
  });
});

describe('grpc-dotnet ChannelRetryThrottlingTests', () => {
  // .NET IsRetryThrottlingActive_FailedAndSuccessCalls_ActivatedChanges asserts: 3 tokens, ratio 1.0: inactive;
  // one failure (2 left) inactive; a second (1 left) active; a success (2) inactive again.
  it('3 tokens, ratio 1: two failures throttle, one success lifts it', () => {
    const throttle = new RetryThrottle({ maxTokens: 3, tokenRatio: 1 });
    expect(throttle.allowAttempt()).toBe(true);
    throttle.recordFailure();
    expect([throttle.tokens, throttle.allowAttempt()]).toEqual([2, true]);
    throttle.recordFailure();
    expect([throttle.tokens, throttle.allowAttempt()]).toEqual([1, false]);
    throttle.recordSuccess();
    expect([throttle.tokens, throttle.allowAttempt()]).toEqual([2, true]);
  });

  // The same numbers through the interceptor, one throttle for several calls: the tokens the calls leave decide
  // whether the next call's failure is retried.
  it('the same numbers through calls: a retry goes at 2 tokens, not at 1; two successes bring it back', async () => {
    const throttle = new RetryThrottle({ maxTokens: 3, tokenRatio: 1 });
    const first = engineCall(dotnetRetry(), { interceptor: { gate: throttle } });
    first.attempt(0).status(UNAVAILABLE, 'one'); // 2 left: retried
    first.clock.advance(1);
    expect(first.attempts).toHaveLength(2);
    first.attempt(1).status(UNAVAILABLE, 'two'); // 1 left: throttled, the failure is the result at once
    await first.settle();
    expect(first.status).toMatchObject({ code: UNAVAILABLE, details: 'two' });
    expect(callEnd(first)).toMatchObject({ reason: 'throttled', attempts: 2 });
    expect(throttle.tokens).toBe(1);

    for (const tokens of [2, 3]) {
      const ok = engineCall(dotnetRetry(), { interceptor: { gate: throttle } });
      ok.attempt(0).succeed();
      await ok.settle();
      expect(throttle.tokens).toBe(tokens);
    }
    const again = engineCall(dotnetRetry(), { interceptor: { gate: throttle } });
    again.attempt(0).status(UNAVAILABLE, 'three'); // 2 left: retried again
    again.clock.advance(1);
    expect(again.attempts).toHaveLength(2);
  });
});

describe("grpc-dotnet's own departures from A6 (from its sources)", () => {
  // .NET RetryCall.EvaluateRetry looks at a pushback before the retryable codes: INVALID_ARGUMENT with a pushback of
  // 0 is retried there. A6 honours a pushback only for a status the policy retries; the package does not retry it.
  it('a non-retryable status with a pushback of 0 is not retried', async () => {
    const h = engineCall(dotnetRetry());
    h.attempt(0).status(INVALID_ARGUMENT, 'bad', { [PUSHBACK]: '0' });
    await h.settle();
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
    expect(h.status).toMatchObject({ code: INVALID_ARGUMENT, details: 'bad' });
    expect(callEnd(h)).toMatchObject({ reason: 'fatal-status' });
  });
});
