/**
 * The client side of the gRPC interop test cases, written from grpc/grpc's doc/interop-test-descriptions.md. Each
 * case makes its calls with the procedure the description gives, asserts what the description asserts (and that
 * every call ended exactly once), and returns the status code of each call it made, in order, so that a caller can
 * check them against the retry interceptor's own `call-end` events. Some cases also say what the server must have
 * seen of their calls (`checkServer`), checked once every attempt the server saw has ended.
 *
 * Every call's headers come from `ctx.metadata()`: a tag naming the call, and the headers of the mode (which make
 * the server fail or delay first attempts). Whatever answered a call names its attempt in its headers and trailers
 * (`x-interop-attempt`, a key no case checks otherwise): both must name the same attempt, one the mode expects to
 * answer, and the trailers' `grpc-previous-rpc-attempts` (added by the retry interceptor) must agree with it.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'vitest';
import { clientStream, Duplex, type Observed, readAll, unary, write } from './interop-calls.js';
import {
  ATTEMPT_TAG_KEY,
  ECHO_INITIAL_KEY,
  ECHO_TRAILING_KEY,
  type FirstAttemptRule,
  type Payload,
  PREVIOUS_ATTEMPTS_KEY,
  type ServerEnd,
  type SimpleRequest,
  type SimpleResponse,
  type TestServiceClient,
  type UnimplementedServiceClient,
  zeros,
} from './interop-service.js';

/** Attempt numbers (0-based, as `grpc-previous-rpc-attempts` counts them), both ends included. */
export interface AttemptRange {
  min: number;
  max: number;
}

/** What a case runs against. */
export interface CaseContext {
  client: TestServiceClient;
  unimplemented: UnimplementedServiceClient;
  /** Headers for one new call (each call takes its own). */
  metadata(): grpc.Metadata;
  /** The attempts that may answer a call, in this mode. */
  answeringAttempts: AttemptRange;
  /**
   * For `checkServer`: when (`performance.now()`) the case cancelled its call, or started its call (1 ms before its
   * deadline).
   */
  timeline: { cancelledAt?: number; deadlineAt?: number };
}

/** What a server recorded of one attempt. */
export interface ServerAttempt {
  method: string;
  attempt: number;
  callTag: string;
  rule: FirstAttemptRule | undefined;
  end: ServerEnd | undefined;
}

export interface InteropCase {
  name: string;
  run(ctx: CaseContext): Promise<number[]>;
  /** Checks the attempts the server saw of the case's calls, once all of them have ended. */
  checkServer?(attempts: readonly ServerAttempt[], ctx: CaseContext): void;
  /**
   * The server may see the case's calls end only at their deadline, whatever the client does: grpc-js (1.14) sends
   * no RST_STREAM for a client-streaming call cancelled right after it started on a connected channel. The runner
   * does not wait for them to end; `checkServer` sees those that have.
   */
  serverMayOutlive?: boolean;
}

/** Every call but timeout_on_sleeping_server's gets this deadline, so that a hang fails with DEADLINE_EXCEEDED. */
const CALL_DEADLINE_MS = 5_000;

function options(deadlineMs = CALL_DEADLINE_MS): grpc.CallOptions {
  return { deadline: Date.now() + deadlineMs };
}

function payload(size: number): Payload {
  return { body: zeros(size) };
}

/**
 * The attempt tags of what answered the call: headers and trailers name one attempt, one that may answer in this
 * mode, and `grpc-previous-rpc-attempts` in the trailers (when the retry interceptor ran) agrees with the
 * trailers' tag. `required`: both headers and trailers must carry the tag.
 */
export function expectAnsweredBy(observed: Observed<unknown>, range: AttemptRange, required = false): void {
  const headerTag = observed.headers?.get(ATTEMPT_TAG_KEY) ?? [];
  const trailerTag = observed.status.metadata.get(ATTEMPT_TAG_KEY);
  if (required) {
    expect(headerTag, 'attempt tag in the headers').toHaveLength(1);
    expect(trailerTag, 'attempt tag in the trailers').toHaveLength(1);
  }
  if (headerTag.length > 0 && trailerTag.length > 0) {
    expect(headerTag, 'attempt of the headers vs attempt of the trailers').toEqual(trailerTag);
  }
  for (const tag of [...headerTag, ...trailerTag]) {
    const attempt = Number(tag);
    expect(attempt, 'attempt that answered').toBeGreaterThanOrEqual(range.min);
    expect(attempt, 'attempt that answered').toBeLessThanOrEqual(range.max);
  }
  if (trailerTag.length === 1) {
    const previous = observed.status.metadata.get(PREVIOUS_ATTEMPTS_KEY);
    expect(previous, 'grpc-previous-rpc-attempts of the trailers').toEqual(
      Number(trailerTag[0]) > 0 ? [trailerTag[0]] : [],
    );
  }
}

/**
 * The call ended once, with this code; for OK, without an error; what answered it was an attempt the mode allows.
 * Returns the code.
 */
function endedWith(observed: Observed<unknown>, code: grpc.status, ctx: CaseContext): number {
  expect(observed.statusEvents, 'status events').toBe(1);
  expectAnsweredBy(observed, ctx.answeringAttempts);
  expect({ code: observed.status.code, details: observed.status.details }).toMatchObject({ code });
  if (code === grpc.status.OK) {
    expect(observed.error).toBeUndefined();
  } else {
    expect(observed.error?.code).toBe(code);
  }
  return observed.status.code;
}

function bodySizes(responses: ReadonlyArray<{ payload: Payload | null }>): number[] {
  return responses.map((r) => r.payload?.body.length ?? -1);
}

function allZeros(responses: ReadonlyArray<{ payload: Payload | null }>): boolean {
  return responses.every((r) => r.payload?.body.every((byte) => byte === 0) === true);
}

const ECHO_INITIAL_VALUE = 'test_initial_metadata_value';
const ECHO_TRAILING_VALUE = Buffer.from([0xab, 0xab, 0xab]);

function echoMetadata(ctx: CaseContext): grpc.Metadata {
  const metadata = ctx.metadata();
  metadata.set(ECHO_INITIAL_KEY, ECHO_INITIAL_VALUE);
  metadata.set(ECHO_TRAILING_KEY, ECHO_TRAILING_VALUE);
  return metadata;
}

function expectEchoedMetadata(observed: Observed<unknown>, ctx: CaseContext): void {
  expect(observed.headers?.get(ECHO_INITIAL_KEY)).toEqual([ECHO_INITIAL_VALUE]);
  expect(observed.status.metadata.get(ECHO_TRAILING_KEY)).toEqual([ECHO_TRAILING_VALUE]);
  // Initial metadata and trailers came from one attempt (the one that won).
  expectAnsweredBy(observed, ctx.answeringAttempts, true);
}

/**
 * The server side of the cancel and timeout cases: no attempt the server saw completed before `cutoff` (the
 * application's cancel, the call's deadline). Each ended cancelled, or with a status its handler sent only after
 * `cutoff`: the server may see a cancelled stream's END_STREAM some time before its RST_STREAM (seen on the wire
 * with grpc-js 1.14 clients), and a handler takes the first for a half-close and may answer it before the second
 * arrives. A first attempt the mode made fail on purpose (UNAVAILABLE) may have ended before.
 */
function noAttemptCompletedBefore(cutoff: number | undefined, attempts: readonly ServerAttempt[]): void {
  expect(cutoff, 'when the call was cancelled').toBeTypeOf('number');
  const completed = attempts.filter(
    (a) =>
      a.end?.kind === 'status' &&
      a.end.at < (cutoff ?? 0) &&
      !(a.rule === 'unavailable' && a.end.code === grpc.status.UNAVAILABLE),
  );
  expect(
    completed.map((a) => `${a.method} attempt ${a.attempt}: ${JSON.stringify(a.end)}`),
    'attempts the server completed before the call was cancelled',
  ).toEqual([]);
}

/** Echo Status on a unary and a bidi call: both end with exactly this code and message. */
async function echoStatus(
  ctx: CaseContext,
  code: number,
  message: string,
  duplex: boolean,
): Promise<number[]> {
  const request = { responseStatus: { code, message } };
  const u = await unary<SimpleRequest, SimpleResponse>(
    (r, cb) => ctx.client.UnaryCall(r, ctx.metadata(), options(), cb),
    request,
  );
  endedWith(u, code, ctx);
  expect(u.status.details).toBe(message);
  expect(u.error?.details).toBe(message);
  if (!duplex) {
    return [u.status.code];
  }
  const d = new Duplex(ctx.client.FullDuplexCall(ctx.metadata(), options()));
  d.call.write(request);
  d.call.end();
  const observed = await d.done;
  endedWith(observed, code, ctx);
  expect(observed.status.details).toBe(message);
  return [u.status.code, observed.status.code];
}

const SIZES = { request: [27182, 8, 1828, 45904], response: [31415, 9, 2653, 58979] };

export const INTEROP_CASES: readonly InteropCase[] = [
  {
    name: 'empty_unary',
    async run(ctx) {
      const o = await unary((r, cb) => ctx.client.EmptyCall(r, ctx.metadata(), options(), cb), {});
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(o.responses).toEqual([{}]);
      return [code];
    },
  },
  {
    name: 'large_unary',
    async run(ctx) {
      const o = await unary<SimpleRequest, SimpleResponse>(
        (r, cb) => ctx.client.UnaryCall(r, ctx.metadata(), options(), cb),
        {
          responseSize: 314159,
          payload: payload(271828),
        },
      );
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(bodySizes(o.responses)).toEqual([314159]);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'client_streaming',
    async run(ctx) {
      const { call, done } = clientStream((cb) =>
        ctx.client.StreamingInputCall(ctx.metadata(), options(), cb),
      );
      for (const size of SIZES.request) {
        await write(call, { payload: payload(size) });
      }
      call.end();
      const o = await done;
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(o.responses).toEqual([{ aggregatedPayloadSize: 74922 }]);
      return [code];
    },
  },
  {
    name: 'server_streaming',
    async run(ctx) {
      const o = await readAll(
        ctx.client.StreamingOutputCall(
          { responseParameters: SIZES.response.map((size) => ({ size })) },
          ctx.metadata(),
          options(),
        ),
      );
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(bodySizes(o.responses)).toEqual(SIZES.response);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'ping_pong',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(ctx.metadata(), options()));
      for (let i = 0; i < SIZES.request.length; i++) {
        d.call.write({
          responseParameters: [{ size: SIZES.response[i] as number }],
          payload: payload(SIZES.request[i] as number),
        });
        const reply = await d.next();
        expect(reply.payload?.body.length).toBe(SIZES.response[i]);
      }
      d.call.end();
      const o = await d.done;
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(bodySizes(o.responses)).toEqual(SIZES.response);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'empty_stream',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(ctx.metadata(), options()));
      d.call.end();
      const o = await d.done;
      const code = endedWith(o, grpc.status.OK, ctx);
      expect(o.responses).toEqual([]);
      return [code];
    },
  },
  {
    name: 'cancel_after_begin',
    async run(ctx) {
      const { call, done } = clientStream((cb) =>
        ctx.client.StreamingInputCall(ctx.metadata(), options(), cb),
      );
      call.cancel();
      const o = await done;
      return [endedWith(o, grpc.status.CANCELLED, ctx)];
    },
    // The server may not hear of the call before the cancel, or of the cancel before the deadline; no handler may
    // have answered it at any time (the client never half-closed).
    checkServer: (attempts) => noAttemptCompletedBefore(Number.POSITIVE_INFINITY, attempts),
    serverMayOutlive: true,
  },
  {
    name: 'cancel_after_first_response',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(ctx.metadata(), options()));
      d.call.write({ responseParameters: [{ size: 31415 }], payload: payload(27182) });
      const first = await d.next();
      expect(first.payload?.body.length).toBe(31415);
      ctx.timeline.cancelledAt = performance.now();
      d.call.cancel();
      const o = await d.done;
      const code = endedWith(o, grpc.status.CANCELLED, ctx);
      expect(bodySizes(o.responses)).toEqual([31415]);
      return [code];
    },
    checkServer(attempts, ctx) {
      // The first response came from an attempt the server ran.
      expect(attempts.length, 'attempts the server saw').toBeGreaterThanOrEqual(1);
      noAttemptCompletedBefore(ctx.timeline.cancelledAt, attempts);
    },
  },
  {
    name: 'timeout_on_sleeping_server',
    async run(ctx) {
      ctx.timeline.deadlineAt = performance.now(); // at most the deadline: the server's end must come after

      const d = new Duplex(ctx.client.FullDuplexCall(ctx.metadata(), options(1)));
      d.call.write({ payload: payload(27182) });
      const o = await d.done;
      return [endedWith(o, grpc.status.DEADLINE_EXCEEDED, ctx)];
    },
    // The handler waits for a half-close the client does not send before its deadline.
    checkServer: (attempts, ctx) => noAttemptCompletedBefore(ctx.timeline.deadlineAt, attempts),
  },
  {
    name: 'custom_metadata',
    async run(ctx) {
      const u = await unary<SimpleRequest, SimpleResponse>(
        (r, cb) => ctx.client.UnaryCall(r, echoMetadata(ctx), options(), cb),
        {
          responseSize: 314159,
          payload: payload(271828),
        },
      );
      endedWith(u, grpc.status.OK, ctx);
      expect(bodySizes(u.responses)).toEqual([314159]);
      expectEchoedMetadata(u, ctx);

      const d = new Duplex(ctx.client.FullDuplexCall(echoMetadata(ctx), options()));
      d.call.write({ responseParameters: [{ size: 314159 }], payload: payload(271828) });
      d.call.end();
      const o = await d.done;
      endedWith(o, grpc.status.OK, ctx);
      expect(bodySizes(o.responses)).toEqual([314159]);
      expectEchoedMetadata(o, ctx);
      return [u.status.code, o.status.code];
    },
  },
  {
    name: 'status_code_and_message',
    run: (ctx) => echoStatus(ctx, grpc.status.UNKNOWN, 'test status message', true),
  },
  {
    name: 'special_status_message',
    run: (ctx) =>
      echoStatus(
        ctx,
        grpc.status.UNKNOWN,
        '\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n',
        false,
      ),
  },
  {
    name: 'unimplemented_method',
    async run(ctx) {
      const o = await unary((r, cb) => ctx.client.UnimplementedCall(r, ctx.metadata(), options(), cb), {});
      return [endedWith(o, grpc.status.UNIMPLEMENTED, ctx)];
    },
  },
  {
    name: 'unimplemented_service',
    async run(ctx) {
      const o = await unary(
        (r, cb) => ctx.unimplemented.UnimplementedCall(r, ctx.metadata(), options(), cb),
        {},
      );
      return [endedWith(o, grpc.status.UNIMPLEMENTED, ctx)];
    },
  },
];

/** rpc_soak's settings: iterations, failures allowed, and the longest an iteration may take. */
export const SOAK = { iterations: 30, maxFailures: 0, maxLatencyMs: 5_000 };

/**
 * rpc_soak: large_unary calls one after the other on one channel; at most `maxFailures` of them may fail, and each
 * must take less than `maxLatencyMs`. Run in the hedging modes only (each call is hedged there).
 */
export const SOAK_CASES: readonly InteropCase[] = [
  {
    name: 'rpc_soak',
    async run(ctx) {
      const codes: number[] = [];
      const failures: string[] = [];
      for (let i = 0; i < SOAK.iterations; i++) {
        const started = performance.now();
        const o = await unary<SimpleRequest, SimpleResponse>(
          (r, cb) => ctx.client.UnaryCall(r, ctx.metadata(), options(), cb),
          { responseSize: 314159, payload: payload(271828) },
        );
        const latencyMs = performance.now() - started;
        codes.push(o.status.code);
        expect(o.statusEvents, `iteration ${i}: status events`).toBe(1);
        if (o.status.code !== grpc.status.OK) {
          failures.push(`iteration ${i}: ${o.status.code} ${o.status.details}`);
          continue;
        }
        expectAnsweredBy(o, ctx.answeringAttempts);
        expect(bodySizes(o.responses), `iteration ${i}: response size`).toEqual([314159]);
        expect(allZeros(o.responses), `iteration ${i}: zeros`).toBe(true);
        expect(latencyMs, `iteration ${i}: latency`).toBeLessThan(SOAK.maxLatencyMs);
      }
      expect(failures.length, failures.join('; ')).toBeLessThanOrEqual(SOAK.maxFailures);
      return codes;
    },
  },
];
