/**
 * The client side of the gRPC interop test cases, written from grpc/grpc's doc/interop-test-descriptions.md. Each
 * case makes its calls with the procedure the description gives, asserts what the description asserts (and that
 * every call ended exactly once), and returns the status code of each call it made, in order, so that a caller can
 * check them against the retry interceptor's own `call-end` events.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'vitest';
import { clientStream, Duplex, type Observed, readAll, unary, write } from './interop-calls.js';
import {
  ECHO_INITIAL_KEY,
  ECHO_TRAILING_KEY,
  type Payload,
  type SimpleRequest,
  type SimpleResponse,
  type TestServiceClient,
  type UnimplementedServiceClient,
  zeros,
} from './interop-service.js';

/** What a case runs against. */
export interface CaseContext {
  client: TestServiceClient;
  unimplemented: UnimplementedServiceClient;
}

export interface InteropCase {
  name: string;
  run(ctx: CaseContext): Promise<number[]>;
}

/** Every call but timeout_on_sleeping_server's gets this deadline, so that a hang fails with DEADLINE_EXCEEDED. */
const CALL_DEADLINE_MS = 5_000;

function options(deadlineMs = CALL_DEADLINE_MS): grpc.CallOptions {
  return { deadline: Date.now() + deadlineMs };
}

function payload(size: number): Payload {
  return { body: zeros(size) };
}

/** The call ended once, with this code; for OK, without an error. Returns the code. */
function endedWith(observed: Observed<unknown>, code: grpc.status): number {
  expect(observed.statusEvents, 'status events').toBe(1);
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

function echoMetadata(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(ECHO_INITIAL_KEY, ECHO_INITIAL_VALUE);
  metadata.set(ECHO_TRAILING_KEY, ECHO_TRAILING_VALUE);
  return metadata;
}

function expectEchoedMetadata(observed: Observed<unknown>): void {
  expect(observed.headers?.get(ECHO_INITIAL_KEY)).toEqual([ECHO_INITIAL_VALUE]);
  expect(observed.status.metadata.get(ECHO_TRAILING_KEY)).toEqual([ECHO_TRAILING_VALUE]);
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
    (r, cb) => ctx.client.UnaryCall(r, new grpc.Metadata(), options(), cb),
    request,
  );
  endedWith(u, code);
  expect(u.status.details).toBe(message);
  expect(u.error?.details).toBe(message);
  if (!duplex) {
    return [u.status.code];
  }
  const d = new Duplex(ctx.client.FullDuplexCall(new grpc.Metadata(), options()));
  d.call.write(request);
  d.call.end();
  const observed = await d.done;
  endedWith(observed, code);
  expect(observed.status.details).toBe(message);
  return [u.status.code, observed.status.code];
}

const SIZES = { request: [27182, 8, 1828, 45904], response: [31415, 9, 2653, 58979] };

export const INTEROP_CASES: readonly InteropCase[] = [
  {
    name: 'empty_unary',
    async run(ctx) {
      const o = await unary((r, cb) => ctx.client.EmptyCall(r, new grpc.Metadata(), options(), cb), {});
      const code = endedWith(o, grpc.status.OK);
      expect(o.responses).toEqual([{}]);
      return [code];
    },
  },
  {
    name: 'large_unary',
    async run(ctx) {
      const o = await unary<SimpleRequest, SimpleResponse>(
        (r, cb) => ctx.client.UnaryCall(r, new grpc.Metadata(), options(), cb),
        {
          responseSize: 314159,
          payload: payload(271828),
        },
      );
      const code = endedWith(o, grpc.status.OK);
      expect(bodySizes(o.responses)).toEqual([314159]);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'client_streaming',
    async run(ctx) {
      const { call, done } = clientStream((cb) =>
        ctx.client.StreamingInputCall(new grpc.Metadata(), options(), cb),
      );
      for (const size of SIZES.request) {
        await write(call, { payload: payload(size) });
      }
      call.end();
      const o = await done;
      const code = endedWith(o, grpc.status.OK);
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
          new grpc.Metadata(),
          options(),
        ),
      );
      const code = endedWith(o, grpc.status.OK);
      expect(bodySizes(o.responses)).toEqual(SIZES.response);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'ping_pong',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(new grpc.Metadata(), options()));
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
      const code = endedWith(o, grpc.status.OK);
      expect(bodySizes(o.responses)).toEqual(SIZES.response);
      expect(allZeros(o.responses)).toBe(true);
      return [code];
    },
  },
  {
    name: 'empty_stream',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(new grpc.Metadata(), options()));
      d.call.end();
      const o = await d.done;
      const code = endedWith(o, grpc.status.OK);
      expect(o.responses).toEqual([]);
      return [code];
    },
  },
  {
    name: 'cancel_after_begin',
    async run(ctx) {
      const { call, done } = clientStream((cb) =>
        ctx.client.StreamingInputCall(new grpc.Metadata(), options(), cb),
      );
      call.cancel();
      const o = await done;
      return [endedWith(o, grpc.status.CANCELLED)];
    },
  },
  {
    name: 'cancel_after_first_response',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(new grpc.Metadata(), options()));
      d.call.write({ responseParameters: [{ size: 31415 }], payload: payload(27182) });
      const first = await d.next();
      expect(first.payload?.body.length).toBe(31415);
      d.call.cancel();
      const o = await d.done;
      const code = endedWith(o, grpc.status.CANCELLED);
      expect(bodySizes(o.responses)).toEqual([31415]);
      return [code];
    },
  },
  {
    name: 'timeout_on_sleeping_server',
    async run(ctx) {
      const d = new Duplex(ctx.client.FullDuplexCall(new grpc.Metadata(), options(1)));
      d.call.write({ payload: payload(27182) });
      const o = await d.done;
      return [endedWith(o, grpc.status.DEADLINE_EXCEEDED)];
    },
  },
  {
    name: 'custom_metadata',
    async run(ctx) {
      const u = await unary<SimpleRequest, SimpleResponse>(
        (r, cb) => ctx.client.UnaryCall(r, echoMetadata(), options(), cb),
        {
          responseSize: 314159,
          payload: payload(271828),
        },
      );
      endedWith(u, grpc.status.OK);
      expect(bodySizes(u.responses)).toEqual([314159]);
      expectEchoedMetadata(u);

      const d = new Duplex(ctx.client.FullDuplexCall(echoMetadata(), options()));
      d.call.write({ responseParameters: [{ size: 314159 }], payload: payload(271828) });
      d.call.end();
      const o = await d.done;
      endedWith(o, grpc.status.OK);
      expect(bodySizes(o.responses)).toEqual([314159]);
      expectEchoedMetadata(o);
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
      const o = await unary(
        (r, cb) => ctx.client.UnimplementedCall(r, new grpc.Metadata(), options(), cb),
        {},
      );
      return [endedWith(o, grpc.status.UNIMPLEMENTED)];
    },
  },
  {
    name: 'unimplemented_service',
    async run(ctx) {
      const o = await unary(
        (r, cb) => ctx.unimplemented.UnimplementedCall(r, new grpc.Metadata(), options(), cb),
        {},
      );
      return [endedWith(o, grpc.status.UNIMPLEMENTED)];
    },
  },
];
