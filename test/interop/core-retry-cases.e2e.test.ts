/**
 * A differential audit against gRPC C-core, the reference implementation of A6: each case re-creates, through this
 * package's retry interceptor on grpc-js, the scenario of one of C-core's end-to-end retry tests
 * (grpc/grpc test/core/end2end/tests/retry_*.cc), written anew, with the same service-config shape (ABORTED
 * retryable, `maxAttempts` 2 or 3) but backoffs of tens of milliseconds in place of seconds. Each case counts the
 * attempts the server ran, and checks the status code and details, the messages the application got and the
 * `grpc-previous-rpc-attempts` header of each attempt. The comment above each case names its C-core file and
 * what C-core asserts; where the package differs on purpose, the case asserts the package's documented behaviour
 * and says why.
 *
 * C-core retry tests that cannot apply to a client interceptor above grpc-js, so not re-created here:
 * - retry_transparent_goaway.cc, retry_transparent_max_concurrent_streams.cc, retry_transparent_not_sent_on_wire.cc:
 *   transparent retries of streams the server never processed happen inside grpc-js's transport and load
 *   balancing call, below every interceptor; the retry interceptor never sees them (A6 does not count them as
 *   attempts either).
 * - retry_unref_before_finish.cc: a status cached by C-core's surface before the application started
 *   recv_trailing_metadata, then the call unreffed (a leak check); grpc-js has no such op, every call asks for its
 *   status at start, so its observable outcome is that of retry_non_retriable_status.cc below.
 * - retry_non_retriable_status_before_trailers.cc: the same non-retryable status with the status op started late:
 *   a C-core batch-ordering case with no grpc-js counterpart (covered by the non-retryable cases below).
 * - C-core RetryHttp2* tests (ping, bad ping, max connection idle, connectivity watch, high seqno): transport
 *   behaviour of C-core's HTTP/2 stack, not retry policy.
 * retry_lb_fail.cc is re-created with the nearest grpc-js counterpart (the channel fails the pick: nothing listens).
 * retry_lb_drop.cc (a call the LB policy drops is not retried) is re-created in test/retry/lb-drop.e2e.test.ts, with
 * a policy that drops as grpc-js-xds's does: grpc-js hands an interceptor a drop as a plain UNAVAILABLE, and this
 * audit found the interceptor retrying it (fixed: the engine knows a drop by its details on a status no server sent).
 */
import { createServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { withRetryOptions } from '../../src/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import {
  type AttemptHandler,
  type ClientSetup,
  type CoreServer,
  coreClient,
  failingAttempts,
  SERVICE,
  startCoreServer,
  streamCall,
  unaryCall,
} from './core-retry-server.js';

const { OK, ABORTED, INVALID_ARGUMENT, CANCELLED, DEADLINE_EXCEEDED, PERMISSION_DENIED, UNAVAILABLE } =
  grpc.status;
const FAILED_PRECONDITION = grpc.status.FAILED_PRECONDITION;

/** C-core's retry policy shape, with short backoffs. */
function config(policy: Record<string, unknown> = {}, top: Record<string, unknown> = {}): object {
  return {
    methodConfig: [
      {
        name: [{ service: SERVICE }],
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.01s',
          maxBackoff: '0.05s',
          backoffMultiplier: 1.6,
          retryableStatusCodes: ['ABORTED'],
          ...policy,
        },
      },
    ],
    ...top,
  };
}

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup extends ClientSetup {
  server: CoreServer;
}

async function setup(
  handler: AttemptHandler,
  cfg: object = config(),
  options: RetryInterceptorOptions = {},
  below: grpc.Interceptor[] = [],
): Promise<Setup> {
  const server = await startCoreServer(handler);
  cleanups.push(() => server.stop());
  const c = coreClient(server.address, cfg, options, below);
  cleanups.push(() => c.client.close());
  return { server, ...c };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const previous = (s: CoreServer) => s.attempts.map((a) => a.previousAttempts);
const callEnd = (events: RetryEvent[]) => events.find((e) => e.type === 'call-end');

describe('C-core retry cases, unary', () => {
  // retry.cc (RetryTests.Retry): ABORTED (Trailers-Only) then OK: the call succeeds on attempt 2, which carries
  // grpc-previous-rpc-attempts "1" (absent on attempt 1).
  it('retry: a retryable failure is retried and the retry answers', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      if (attempt.index === 0) return reply.finish(ABORTED, 'xyz');
      await attempt.message(0);
      reply.send('bar');
      reply.finish(OK, 'xyz');
    });
    let call: grpc.ClientUnaryCall | undefined;
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 }, (c) => {
      call = c;
    });
    expect([out.code, out.details]).toEqual([OK, 'xyz']);
    expect(out.messages).toEqual(['bar']);
    expect(out.statuses).toBe(1);
    // C-core checks the client call has a peer throughout; here, after the retry, it is the server's address.
    expect(call?.getPeer()).toBe(server.address);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    expect(server.attempts[1]?.messages).toEqual(['foo']);
    expect(server.attempts.every((a) => a.path === '/service/method')).toBe(true);
    expect(server.attempts[1]?.cancelled).toBe(false);
  });

  // retry_too_many_attempts.cc: maxAttempts 2, both attempts ABORTED: the call ends ABORTED "xyz" after 2.
  it('retry_too_many_attempts: no attempt beyond maxAttempts', async () => {
    const { server, client, events } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ maxAttempts: 2 }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    expect(server.attempts.map((a) => a.cancelled)).toEqual([false, false]);
    expect(callEnd(events)).toMatchObject({ reason: 'attempts-exhausted', attempts: 2 });
  });

  // retry_non_retriable_status.cc: INVALID_ARGUMENT is not in retryableStatusCodes: one attempt, status as sent.
  it('retry_non_retriable_status: a non-retryable code ends the call', async () => {
    const { server, client } = await setup(
      (_attempt, reply) => reply.finish(INVALID_ARGUMENT, 'xyz'),
      config({ maxAttempts: 2 }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([INVALID_ARGUMENT, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.cancelled).toBe(false);
  });

  // retry_recv_initial_metadata.cc: response headers (key1: val1) on their own, then ABORTED: the headers commit
  // the call, so ABORTED "xyz" is the result after one attempt.
  it('retry_recv_initial_metadata: response headers commit the call', async () => {
    const { server, client } = await setup(
      (_attempt, reply) => {
        reply.headers({ key1: 'val1' });
        reply.finish(ABORTED, 'xyz');
      },
      config({ maxAttempts: 2 }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.headers?.get('key1')).toEqual(['val1']);
    expect(server.attempts).toHaveLength(1);
  });

  // retry_server_pushback_delay.cc: ABORTED with grpc-retry-pushback-ms 2000 (backoff 1 s), then OK "message2":
  // the retry waits at least the pushback (C-core checks >= 1.5 s). Scaled: pushback 300 ms, backoff 10 ms.
  it('retry_server_pushback_delay: the retry waits the pushback, not the backoff', async () => {
    const { server, client } = await setup((attempt, reply) => {
      if (attempt.index === 0) return reply.finish(ABORTED, 'message1', { 'grpc-retry-pushback-ms': '300' });
      reply.finish(OK, 'message2');
    });
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([OK, 'message2']);
    expect(server.attempts).toHaveLength(2);
    const [first, second] = server.attempts;
    // The pushback counts from when the client got the status, which is after the server sent it.
    expect((second?.startedAt ?? 0) - (first?.endedAt ?? 0)).toBeGreaterThanOrEqual(290);
    expect(previous(server)).toEqual([undefined, '1']);
  });

  // retry_server_pushback_disabled.cc: ABORTED, then ABORTED with pushback "-1": no third attempt though
  // maxAttempts is 3; ABORTED "xyz" is the result.
  it('retry_server_pushback_disabled: a negative pushback stops the retries', async () => {
    const { server, client, events } = await setup((attempt, reply) =>
      attempt.index === 0
        ? reply.finish(ABORTED, 'xyz')
        : reply.finish(ABORTED, 'xyz', { 'grpc-retry-pushback-ms': '-1' }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    await sleep(100);
    expect(server.attempts).toHaveLength(2);
    expect(callEnd(events)).toMatchObject({ reason: 'do-not-retry', attempts: 2 });
  });

  // retry_throttled.cc: retryThrottling maxTokens 2, tokenRatio 1: one failure leaves 1 token, not above
  // maxTokens/2, so the ABORTED is not retried.
  it('retry_throttled: a throttled retry is not sent', async () => {
    const { server, client, events } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ maxAttempts: 2 }, { retryThrottling: { maxTokens: 2, tokenRatio: 1 } }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    expect(callEnd(events)).toMatchObject({ reason: 'throttled', attempts: 1 });
  });

  // retry_disabled.cc: GRPC_ARG_ENABLE_RETRIES 0 with a retryPolicy: one attempt, ABORTED "xyz".
  // Differs on purpose (README, "Do not also put a retryPolicy..."): 'grpc.enable_retries' is grpc-js's own option
  // (these clients all set it to 0) and leaves the interceptor's retries on; the package's switch is per call,
  // withRetryOptions({ enabled: false }), which gives C-core's outcome.
  it('retry_disabled: the per-call switch disables retries; the grpc-js channel option does not', async () => {
    const { server, client } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ maxAttempts: 2 }),
    );
    const off = await unaryCall(client, 'foo', {
      deadlineMs: 5000,
      options: withRetryOptions({ enabled: false }),
    });
    expect([off.code, off.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    const on = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([on.code, on.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(3);
    expect(previous(server)).toEqual([undefined, undefined, '1']);
  });

  // retry_send_initial_metadata_refs.cc: the application's metadata (a short and a long entry) reaches the retry
  // unchanged, beside grpc-previous-rpc-attempts "1"; the retry answers "bar", OK.
  it('retry_send_initial_metadata_refs: the application metadata goes on every attempt', async () => {
    const longKey = 'x'.repeat(40);
    const longValue = 'y'.repeat(40);
    const { server, client } = await setup(async (attempt, reply) => {
      if (attempt.index === 0) return reply.finish(ABORTED, 'xyz');
      await attempt.message(0);
      reply.send('bar');
      reply.finish(OK, 'xyz');
    });
    const metadata = new grpc.Metadata();
    metadata.set('foo', 'bar');
    metadata.set(longKey, longValue);
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000, metadata });
    expect([out.code, out.details]).toEqual([OK, 'xyz']);
    expect(out.messages).toEqual(['bar']);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    for (const attempt of server.attempts) {
      expect(attempt.metadata.get('foo')).toEqual(['bar']);
      expect(attempt.metadata.get(longKey)).toEqual([longValue]);
    }
  });

  // retry_exceeds_buffer_size_in_initial_batch.cc: per-RPC retry buffer of 2 bytes, a 3-byte request: the call
  // commits as it is sent, so the ABORTED is the result after one attempt. (perRpcBufferBytes counts each
  // message's size plus 53, so 2 bytes are overflowed the same way.)
  it('retry_exceeds_buffer_size_in_initial_batch: a request over the buffer limit is sent once', async () => {
    const { server, client, events } = await setup(
      async (attempt, reply) => {
        await attempt.closed();
        reply.finish(ABORTED, 'xyz');
      },
      config({ maxAttempts: 2 }),
      { perRpcBufferBytes: 2 },
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.messages).toEqual(['foo']);
    expect(callEnd(events)).toMatchObject({ reason: 'replay-buffer', attempts: 1 });
  });

  // retry_per_attempt_recv_timeout.cc: perAttemptRecvTimeout 2 s: attempt 1 never answers and is cut off,
  // attempt 2 gets ABORTED, attempt 3 answers "bar", OK "xyz"; headers absent, "1", "2". Scaled: 500 ms.
  it('retry_per_attempt_recv_timeout: a silent attempt is cancelled and retried', async () => {
    const { server, client } = await setup(
      async (attempt, reply) => {
        if (attempt.index === 0) return; // never answers
        if (attempt.index === 1) return reply.finish(ABORTED, 'xyz');
        await attempt.message(0);
        reply.send('bar');
        reply.finish(OK, 'xyz');
      },
      config({ perAttemptRecvTimeout: '0.5s' }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 10_000 });
    expect([out.code, out.details]).toEqual([OK, 'xyz']);
    expect(out.messages).toEqual(['bar']);
    expect(server.attempts).toHaveLength(3);
    expect(previous(server)).toEqual([undefined, '1', '2']);
    // The timed-out attempt was cancelled, as the server sees it.
    await server.waitFor(() => server.attempts[0]?.cancelled === true);
    expect(server.attempts[2]?.messages).toEqual(['foo']);
  });

  // retry_per_attempt_recv_timeout_on_last_attempt.cc: maxAttempts 2, both attempts silent: C-core ends the call
  // CANCELLED "retry perAttemptRecvTimeout exceeded". Differs on purpose (docs/configuration.md "Per-attempt
  // timeout", CHANGELOG): the package ends it DEADLINE_EXCEEDED, details naming the limit and the attempt, a
  // timeout being what happened (CANCELLED would read as the application's own cancel).
  it('retry_per_attempt_recv_timeout_on_last_attempt: the last timeout ends the call (DEADLINE_EXCEEDED here)', async () => {
    const { server, client, events } = await setup(
      () => {},
      config({ maxAttempts: 2, perAttemptRecvTimeout: '0.3s' }),
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 10_000 });
    expect(out.code).toBe(DEADLINE_EXCEEDED);
    expect(out.details).toMatch(/per-attempt receive timeout \(300 ms\) hit on attempt 2/);
    expect(out.statuses).toBe(1);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    await server.waitFor(() => server.attempts.every((a) => a.cancelled));
    expect(callEnd(events)).toMatchObject({ attempts: 2 });
  });
});

describe('C-core retry cases, cancellation and deadline', () => {
  // retry_cancellation.cc (cancel mode): attempt 1 ABORTED, attempt 2 reaches the server, then the application
  // cancels: CANCELLED, and attempt 1 was not cancelled (it had ended).
  it('retry_cancellation (cancel): cancelling during the retry ends the call CANCELLED', async () => {
    const { server, client } = await setup((attempt, reply) => {
      if (attempt.index === 0) reply.finish(ABORTED, 'xyz');
    });
    let call: grpc.ClientUnaryCall | undefined;
    const result = unaryCall(client, 'foo', { deadlineMs: 5000 }, (c) => {
      call = c;
    });
    await server.waitFor(() => server.attempts.length === 2);
    call?.cancel();
    const out = await result;
    expect(out.code).toBe(CANCELLED);
    expect(out.statuses).toBe(1);
    await server.waitFor(() => server.attempts[1]?.cancelled === true);
    expect(server.attempts[0]?.cancelled).toBe(false);
    await sleep(100);
    expect(server.attempts).toHaveLength(2);
  });

  // retry_cancellation.cc (deadline mode): the same with no cancel: the call's one deadline passes during
  // attempt 2 and the call ends DEADLINE_EXCEEDED.
  it('retry_cancellation (deadline): one deadline covers every attempt', async () => {
    const { server, client } = await setup((attempt, reply) => {
      if (attempt.index === 0) reply.finish(ABORTED, 'xyz');
    });
    const out = await unaryCall(client, 'foo', { deadlineMs: 800 });
    expect(out.code).toBe(DEADLINE_EXCEEDED);
    expect(out.statuses).toBe(1);
    expect(server.attempts).toHaveLength(2);
    await server.waitFor(() => server.attempts[1]?.cancelled === true);
    expect(server.attempts[0]?.cancelled).toBe(false);
  });

  // retry_cancel_during_delay.cc (cancel mode): the backoff (35 s) is longer than the deadline (30 s); a cancel
  // during it ends the call CANCELLED at once, with no second attempt. Scaled: backoff 10 s.
  it('retry_cancel_during_delay (cancel): a cancel during the backoff ends the call at once', async () => {
    const { server, client } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ initialBackoff: '10s', maxBackoff: '10s' }),
    );
    let call: grpc.ClientUnaryCall | undefined;
    const started = Date.now();
    const options = withRetryOptions({
      onEvent: (e) => {
        if (e.type === 'retry-scheduled') setImmediate(() => call?.cancel());
      },
    });
    const out = await unaryCall(client, 'foo', { deadlineMs: 30_000, options }, (c) => {
      call = c;
    });
    expect(out.code).toBe(CANCELLED);
    expect(out.statuses).toBe(1);
    expect(out.endedAt - started).toBeLessThan(5000);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.cancelled).toBe(false);
  });

  // retry_cancel_during_delay.cc (deadline mode): the deadline passes during the backoff: DEADLINE_EXCEEDED
  // at the deadline, not after the backoff, and no second attempt.
  it('retry_cancel_during_delay (deadline): the deadline during the backoff ends the call', async () => {
    const { server, client, events } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ initialBackoff: '10s', maxBackoff: '10s' }),
    );
    const started = Date.now();
    const out = await unaryCall(client, 'foo', { deadlineMs: 500 });
    expect(out.code).toBe(DEADLINE_EXCEEDED);
    expect(out.statuses).toBe(1);
    expect(out.endedAt - started).toBeLessThan(5000);
    expect(server.attempts).toHaveLength(1);
    expect(callEnd(events)).toMatchObject({ reason: 'deadline', attempts: 1 });
  });

  // retry_cancel_with_multiple_send_batches.cc (cancel mode): a filter below the retry filter fails every send
  // with ABORTED; the client sends its metadata, message and half-close in separate batches, then cancels:
  // CANCELLED. Here an interceptor below the retry interceptor plays the filter; the backoff (5 s) outlasts the case.
  it('retry_cancel_with_multiple_send_batches (cancel): CANCELLED though every attempt fails below', async () => {
    const failing = failingAttempts(() => true, { code: ABORTED, details: 'failing batch' });
    const { server, client } = await setup(
      () => {},
      config({ maxAttempts: 2, initialBackoff: '5s', maxBackoff: '5s' }),
      {},
      [failing.interceptor],
    );
    const started = Date.now();
    const stream = streamCall(client, { deadlineMs: 3000 });
    stream.write('foo');
    stream.end();
    setImmediate(() => stream.call.cancel());
    const out = await stream.result;
    expect(out.code).toBe(CANCELLED);
    expect(out.statuses).toBe(1);
    expect(out.endedAt - started).toBeLessThan(2500);
    expect(server.attempts).toHaveLength(0);
    expect(failing.seen()).toBeLessThanOrEqual(1);
  });

  // retry_cancel_with_multiple_send_batches.cc (deadline mode): the same, ended by the deadline: DEADLINE_EXCEEDED.
  it('retry_cancel_with_multiple_send_batches (deadline): DEADLINE_EXCEEDED though every attempt fails below', async () => {
    const failing = failingAttempts(() => true, { code: ABORTED, details: 'failing batch' });
    const { server, client } = await setup(
      () => {},
      config({ maxAttempts: 2, initialBackoff: '5s', maxBackoff: '5s' }),
      {},
      [failing.interceptor],
    );
    const stream = streamCall(client, { deadlineMs: 300 });
    stream.write('foo');
    stream.end();
    const out = await stream.result;
    expect(out.code).toBe(DEADLINE_EXCEEDED);
    expect(out.statuses).toBe(1);
    expect(server.attempts).toHaveLength(0);
    expect(failing.seen()).toBe(1);
  });

  // retry_cancel_after_first_attempt_starts.cc: the application drops the call right after starting it; the
  // status op completes (CANCELLED here) and nothing is retried.
  it('retry_cancel_after_first_attempt_starts: a cancel right after the start ends the call once', async () => {
    const { server, client } = await setup(() => {});
    const out = await unaryCall(client, 'foo', { deadlineMs: 6000 }, (call) => call.cancel());
    expect(out.code).toBe(CANCELLED);
    expect(out.statuses).toBe(1);
    await sleep(100);
    expect(server.attempts.length).toBeLessThanOrEqual(1);
  });

  // retry_unref_before_recv.cc: the application drops the call while its receive ops are pending, and the server
  // answers FAILED_PRECONDITION at the same time: the call ends once, and no retry is made.
  it('retry_unref_before_recv: a cancel racing a non-retryable status ends the call once', async () => {
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const { server, client } = await setup(async (_attempt, reply) => {
      await answered;
      reply.finish(FAILED_PRECONDITION, 'xyz');
    });
    let call: grpc.ClientUnaryCall | undefined;
    const result = unaryCall(client, 'foo', { deadlineMs: 60_000 }, (c) => {
      call = c;
    });
    await server.waitFor(() => server.attempts.length === 1);
    call?.cancel();
    answer();
    const out = await result;
    expect(out.code).toBe(CANCELLED);
    expect(out.statuses).toBe(1);
    await sleep(100);
    expect(server.attempts).toHaveLength(1);
  });
});

describe('C-core retry cases, streaming and commit', () => {
  // retry_recv_message.cc: headers, a message "bar" and ABORTED in one go: the message commits the call, so
  // ABORTED "xyz" is the result after one attempt (here on a bidi call, so the message is seen delivered once).
  it('retry_recv_message: a response message commits the call', async () => {
    const { server, client } = await setup(
      async (attempt, reply) => {
        await attempt.closed();
        reply.send('bar');
        reply.finish(ABORTED, 'xyz');
      },
      config({ maxAttempts: 2 }),
    );
    const stream = streamCall(client, { deadlineMs: 5000 });
    stream.write('foo');
    stream.end();
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.messages).toEqual(['bar']);
    expect(server.attempts).toHaveLength(1);
  });

  // retry_streaming.cc: the client sends "foo", "bar"; attempt 1 reads both and fails ABORTED (Trailers-Only);
  // attempt 2 gets both replayed, then "baz" and the half-close, and answers "quux" then ABORTED: the message
  // commits, so ABORTED "xyz" is the result, after 2 attempts.
  it('retry_streaming: sent messages are replayed, later ones follow, a message commits', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      if (attempt.index === 0) {
        await attempt.message(1);
        return reply.finish(ABORTED, 'xyz');
      }
      await attempt.message(2);
      await attempt.closed();
      reply.send('quux');
      reply.finish(ABORTED, 'xyz');
    });
    const stream = streamCall(client, { deadlineMs: 5000 });
    stream.write('foo');
    stream.write('bar');
    await server.waitFor(() => (server.attempts[1]?.messages.length ?? 0) >= 2);
    stream.write('baz');
    stream.end();
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.messages).toEqual(['quux']);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    expect(server.attempts[0]?.messages).toEqual(['foo', 'bar']);
    expect(server.attempts[1]?.messages).toEqual(['foo', 'bar', 'baz']);
    expect(server.attempts[1]?.halfClosed).toBe(true);
  });

  // retry_streaming_after_commit.cc: the server answers "baz" to "foo" (commit), then the client sends "bar" and
  // half-closes, and the server sends "quux" and ABORTED: the stream goes on after the commit, and ABORTED
  // "xyz" is the result, not retried.
  it('retry_streaming_after_commit: a committed stream goes on, and its failure is not retried', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      await attempt.message(0);
      reply.send('baz');
      await attempt.message(1);
      await attempt.closed();
      reply.send('quux');
      reply.finish(ABORTED, 'xyz');
    });
    const stream = streamCall(client, { deadlineMs: 5000 });
    stream.write('foo');
    await new Promise<void>((resolve) => stream.call.once('data', () => resolve()));
    stream.write('bar');
    stream.end();
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.messages).toEqual(['baz', 'quux']);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.messages).toEqual(['foo', 'bar']);
  });

  // retry_streaming_succeeds_before_replay_finished.cc: the client sends "foo", "bar", "baz" (no half-close);
  // attempt 1 reads them and fails ABORTED; attempt 2 answers "qux" and ABORTED after reading only the first
  // replayed message ("foo"): the message commits, ABORTED "xyz" is the result after 2 attempts.
  it('retry_streaming_succeeds_before_replay_finished: a commit in the middle of the replay', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      if (attempt.index === 0) {
        await attempt.message(2);
        return reply.finish(ABORTED, 'xyz');
      }
      await attempt.message(0);
      reply.send('qux');
      reply.finish(ABORTED, 'xyz');
    });
    const stream = streamCall(client, { deadlineMs: 5000 });
    for (const text of ['foo', 'bar', 'baz']) stream.write(text);
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.messages).toEqual(['qux']);
    expect(server.attempts).toHaveLength(2);
    expect(previous(server)).toEqual([undefined, '1']);
    expect(server.attempts[0]?.messages).toEqual(['foo', 'bar', 'baz']);
    expect(server.attempts[1]?.messages[0]).toBe('foo');
  });

  // retry_streaming.cc's open question (its FIXME: a commit after 1 of 2 replayed messages cannot be triggered
  // from C-core's API) and retry_streaming_succeeds_before_replay_finished.cc taken one step further: attempt 2
  // commits (headers) as soon as it has the first replayed message, and reads on; a fourth message is written
  // around the commit. Every message the application wrote, and the half-close, must still reach the committed
  // attempt, in order and once (A6: nothing is lost or duplicated at the commit).
  it('retry_streaming (commit at the first replayed message): the rest reaches the committed attempt', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      if (attempt.index === 0) {
        await attempt.message(2);
        return reply.finish(ABORTED, 'xyz');
      }
      await attempt.message(0);
      reply.headers();
      await attempt.closed();
      reply.send(attempt.messages.join(','));
      reply.finish(OK, 'xyz');
    });
    const stream = streamCall(client, { deadlineMs: 5000 });
    for (const text of ['foo', 'bar', 'baz']) stream.write(text);
    await server.waitFor(() => server.attempts.length === 2);
    stream.write('qux');
    stream.end();
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([OK, 'xyz']);
    expect(out.messages).toEqual(['foo,bar,baz,qux']);
    expect(server.attempts).toHaveLength(2);
    expect(server.attempts[1]?.messages).toEqual(['foo', 'bar', 'baz', 'qux']);
    expect(server.attempts[1]?.halfClosed).toBe(true);
  });

  // retry_send_recv_batch.cc: the client has sent "hello" (no half-close) and waits; the server fails the call
  // PERMISSION_DENIED (not retryable): that is the result, and "hello" went out once.
  it('retry_send_recv_batch: a non-retryable status while the client is still sending', async () => {
    const { server, client } = await setup(async (attempt, reply) => {
      await attempt.message(0);
      reply.finish(PERMISSION_DENIED, 'xyz');
    });
    const stream = streamCall(client, { deadlineMs: 5000 });
    stream.write('hello');
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([PERMISSION_DENIED, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.messages).toEqual(['hello']);
  });

  // retry_exceeds_buffer_size_in_subsequent_batch.cc: buffer 100 KiB; the client sends its metadata first, then a
  // 100 KiB message and the half-close: the message overflows the buffer, the call commits, ABORTED "xyz" is
  // the result after one attempt.
  it('retry_exceeds_buffer_size_in_subsequent_batch: a later message over the limit commits', async () => {
    const { server, client, events } = await setup(
      async (attempt, reply) => {
        await attempt.closed();
        reply.finish(ABORTED, 'xyz');
      },
      config({ maxAttempts: 2 }),
      { perRpcBufferBytes: 102_400 },
    );
    const stream = streamCall(client, { deadlineMs: 5000 });
    await server.waitFor(() => server.attempts.length === 1);
    stream.write(Buffer.alloc(102_400, 'a'));
    stream.end();
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(server.attempts).toHaveLength(1);
    expect(server.attempts[0]?.messages[0]).toHaveLength(102_400);
    expect(callEnd(events)).toMatchObject({ reason: 'replay-buffer', attempts: 1 });
  });

  // retry_exceeds_buffer_size_in_delay.cc: buffer 100 KiB; attempt 1 fails ABORTED with nothing sent yet; during
  // the backoff (2 s) the client sends a 100 KiB + 1 message and half-closes: C-core still starts attempt 2,
  // committed, which gets ABORTED "xyz" and is not retried (2 attempts). Differs on purpose (docs/configuration.md
  // "Commit", CHANGELOG): A6 makes no attempt after a commit, so the package ends the call at once with the
  // failure it was waiting after (ABORTED "xyz", call-end reason replay-buffer), after 1 attempt, as grpc-js's
  // own retries do.
  it('retry_exceeds_buffer_size_in_delay: an overflow during the backoff ends the call with its failure', async () => {
    const { server, client, events } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ initialBackoff: '2s', maxBackoff: '2s' }),
      { perRpcBufferBytes: 102_400 },
    );
    let wroteAt = 0;
    const stream = streamCall(client, {
      deadlineMs: 15_000,
      options: withRetryOptions({
        onEvent: (e) => {
          if (e.type !== 'retry-scheduled') return;
          setImmediate(() => {
            wroteAt = Date.now();
            stream.write(Buffer.alloc(102_401, 'a'));
            stream.end();
          });
        },
      }),
    });
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(wroteAt).toBeGreaterThan(0);
    // At once: the backoff (at least 1.6 s) was not waited out.
    expect(out.endedAt - wroteAt).toBeLessThan(1200);
    expect(server.attempts).toHaveLength(1);
    expect(callEnd(events)).toMatchObject({ reason: 'replay-buffer', attempts: 1 });
  });
});

describe('C-core retry cases, failures below the retry layer', () => {
  // retry_send_op_fails.cc: a filter below the retry filter fails the first attempt's sends (ABORTED) before they
  // reach the wire; the retry reaches the server with grpc-previous-rpc-attempts "1" and gets ABORTED "xyz",
  // the result (maxAttempts 2).
  it('retry_send_op_fails: an attempt failed before the wire counts as an attempt', async () => {
    const failing = failingAttempts((i) => i === 0, { code: ABORTED, details: 'failing batch' });
    const { server, client } = await setup(
      async (attempt, reply) => {
        await attempt.closed();
        reply.finish(ABORTED, 'xyz');
      },
      config({ maxAttempts: 2 }),
      {},
      [failing.interceptor],
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(failing.seen()).toBe(2);
    expect(server.attempts).toHaveLength(1);
    expect(previous(server)).toEqual(['1']);
    expect(server.attempts[0]?.messages).toEqual(['foo']);
    expect(server.attempts[0]?.cancelled).toBe(false);
  });

  // retry_recv_message_replay.cc: the same failing first attempt, with the client's receive ops (headers, a
  // message, the status) started but nothing sent beyond the metadata: the retry gets ABORTED "xyz", the result,
  // and no message reaches the application.
  it('retry_recv_message_replay: a retry with receive ops pending and nothing sent', async () => {
    const failing = failingAttempts((i) => i === 0, { code: ABORTED, details: 'failing batch' });
    const { server, client } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ maxAttempts: 2 }),
      {},
      [failing.interceptor],
    );
    const stream = streamCall(client, { deadlineMs: 5000 });
    const out = await stream.result;
    expect([out.code, out.details]).toEqual([ABORTED, 'xyz']);
    expect(out.messages).toEqual([]);
    expect(failing.seen()).toBe(2);
    expect(server.attempts).toHaveLength(1);
    expect(previous(server)).toEqual(['1']);
  });

  // retry_recv_trailing_metadata_error.cc: the server sends ABORTED, but a filter below the retry filter turns the
  // status into INVALID_ARGUMENT "injected error": the status the retry layer is given decides, so no retry.
  it('retry_recv_trailing_metadata_error: the status seen below decides', async () => {
    const rewrite: grpc.Interceptor = (options, nextCall) =>
      new grpc.InterceptingCall(nextCall(options), {
        start(metadata, _listener, next) {
          next(metadata, {
            onReceiveStatus(status, nextStatus) {
              nextStatus({ ...status, code: INVALID_ARGUMENT, details: 'injected error' });
            },
          });
        },
      });
    const { server, client } = await setup(
      (_attempt, reply) => reply.finish(ABORTED, 'xyz'),
      config({ maxAttempts: 2 }),
      {},
      [rewrite],
    );
    const out = await unaryCall(client, 'foo', { deadlineMs: 5000 });
    expect([out.code, out.details]).toEqual([INVALID_ARGUMENT, 'injected error']);
    expect(server.attempts).toHaveLength(1);
  });

  // retry_lb_fail.cc: the LB policy fails each pick with UNAVAILABLE "LB pick failed" before the transport;
  // UNAVAILABLE is retryable, so the call makes 2 picks (maxAttempts 2) and ends UNAVAILABLE. The grpc-js
  // counterpart: nothing listens at the target, so the channel fails each (not wait-for-ready) attempt
  // UNAVAILABLE before a stream exists; an interceptor below the retry interceptor counts the attempts.
  it('retry_lb_fail: attempts the channel fails before the wire are retried', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const counter = failingAttempts(() => false, { code: OK, details: '' });
    const c = coreClient(
      `127.0.0.1:${port}`,
      config({ maxAttempts: 2, retryableStatusCodes: ['UNAVAILABLE'] }),
      {},
      [counter.interceptor],
    );
    cleanups.push(() => c.client.close());
    const out = await unaryCall(c.client, 'foo', { deadlineMs: 5000 });
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.statuses).toBe(1);
    expect(counter.seen()).toBe(2);
    expect(callEnd(c.events)).toMatchObject({ reason: 'attempts-exhausted', attempts: 2 });
  });
});
