/**
 * The compression interop cases (grpc/grpc doc/interop-test-descriptions.md): client_compressed_unary,
 * client_compressed_streaming, server_compressed_unary and server_compressed_streaming, against the raw node:http2
 * server of ./raw-interop-server.ts, which records the compressed flag of every message of every attempt. Run bare
 * and through the retry interceptor: with no policy for the method, with every first attempt failing UNAVAILABLE
 * (the retry resends what was written), and with every first attempt slow (a hedge 20 ms in resends it and wins).
 * The server must have seen, on EVERY attempt (replays included), each request message compressed or not as the
 * description says, and the attempt that answered must have sent each response compressed or not as asked.
 *
 * The client compresses with the channel option `grpc.default_compression_algorithm` (gzip); a message that must
 * go uncompressed on that channel carries grpc-js's per-message NoCompress write flag: as the `write` flag of a
 * streaming call, and, for unary calls (whose API takes no flag), set by an interceptor placed before (outside)
 * the retry interceptor, so that the engine has to carry it to every attempt.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { clientStream, type Observed, readAll, unary } from './interop-calls.js';
import { type AttemptRange, expectAnsweredBy } from './interop-cases.js';
import {
  CALL_TAG_KEY,
  FIRST_ATTEMPT_KEY,
  type FirstAttemptRule,
  type SimpleRequest,
  type SimpleResponse,
  type StreamingInputCallRequest,
  type StreamingInputCallResponse,
  type StreamingOutputCallResponse,
  TEST_SERVICE,
  type TestServiceClient,
  TestServiceClientConstructor,
  zeros,
} from './interop-service.js';
import { type RawAttempt, type RawInteropServer, startRawInteropServer } from './raw-interop-server.js';

/** grpc-js's WriteFlags.NoCompress (a const enum grpc-js does not export as a value). */
const NO_COMPRESS = 2;
const GZIP = 2; // grpc.compressionAlgorithms.gzip

/** Sets the NoCompress flag on every message the application sends. */
class NoCompressCall extends grpc.InterceptingCall {
  override sendMessageWithContext(
    context: Parameters<grpc.InterceptingCall['sendMessageWithContext']>[0],
    message: unknown,
  ): void {
    super.sendMessageWithContext({ ...context, flags: (context.flags ?? 0) | NO_COMPRESS }, message);
  }
  override sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }
}
const noCompress: grpc.Interceptor = (options, nextCall) => new NoCompressCall(nextCall(options));

interface Mode {
  name: string;
  /** The retry interceptor's config; none: bare. */
  config?: object;
  firstAttempt?: FirstAttemptRule;
  answering: AttemptRange;
  /** Attempts the server must have seen of each call (the calls the cases make all reach a handler). */
  serverAttempts: AttemptRange;
}

const services = [{ service: TEST_SERVICE }];
/** Quick retries on UNAVAILABLE; each mode sets its maxAttempts. */
const RETRY_ON_UNAVAILABLE = {
  initialBackoff: '0.01s',
  maxBackoff: '0.05s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const MODES: readonly Mode[] = [
  { name: 'bare (no interceptor)', answering: { min: 0, max: 0 }, serverAttempts: { min: 1, max: 1 } },
  {
    name: 'interceptor, no policy for the method',
    config: {
      methodConfig: [
        {
          name: [{ service: 'grpc.testing.OtherService' }],
          retryPolicy: { ...RETRY_ON_UNAVAILABLE, maxAttempts: 3 },
        },
      ],
    },
    answering: { min: 0, max: 0 },
    serverAttempts: { min: 1, max: 1 },
  },
  {
    name: 'retry, first attempt UNAVAILABLE',
    config: {
      methodConfig: [
        {
          name: services,
          retryPolicy: { ...RETRY_ON_UNAVAILABLE, maxAttempts: 4 },
        },
      ],
    },
    firstAttempt: 'unavailable',
    answering: { min: 1, max: 1 },
    serverAttempts: { min: 2, max: 2 },
  },
  {
    name: 'hedging, 20 ms delay, slow first attempt (late hedges win)',
    config: {
      methodConfig: [
        {
          name: services,
          hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.02s', nonFatalStatusCodes: ['UNAVAILABLE'] },
        },
      ],
    },
    firstAttempt: 'slow',
    answering: { min: 1, max: 2 },
    // A hedge that is cancelled before its headers went out never reaches the server.
    serverAttempts: { min: 2, max: 3 },
  },
];

interface Context {
  /** No compression. */
  plain: TestServiceClient;
  /** gzip for every message. */
  gzip: TestServiceClient;
  /** gzip channel, every message of the application flagged NoCompress. */
  gzipNoCompress: TestServiceClient;
  metadata(): grpc.Metadata;
  answering: AttemptRange;
}

interface CompressionCase {
  name: string;
  /** Runs the calls; returns, per call in order, what the server must have seen of it. */
  run(ctx: Context): Promise<CallExpectation[]>;
}

interface CallExpectation {
  /** The call's tag. */
  tag: string;
  /** Every attempt's request flags are a prefix of these, and the answering attempt's are these. */
  requestFlags: boolean[];
  /** The answering attempt's response flags. */
  responseFlags: boolean[];
  /** The status the answering attempt sent. */
  code: grpc.status;
}

const deadline = () => ({ deadline: Date.now() + 5_000 });

function bodySizes(responses: ReadonlyArray<{ payload: { body: Buffer } | null }>): number[] {
  return responses.map((r) => r.payload?.body.length ?? -1);
}

function allZeros(responses: ReadonlyArray<{ payload: { body: Buffer } | null }>): boolean {
  return responses.every((r) => r.payload?.body.every((byte) => byte === 0) === true);
}

/**
 * The call ended once with `code`, answered by an attempt the mode allows (named in its headers and trailers; a
 * status without a message comes Trailers-Only, without headers).
 */
function endedWith(observed: Observed<unknown>, code: grpc.status, ctx: Context): void {
  expect(observed.statusEvents, 'status events').toBe(1);
  expect(observed.status.code, observed.status.details).toBe(code);
  if (code === grpc.status.OK) {
    expect(observed.error).toBeUndefined();
  } else {
    expect(observed.error?.code).toBe(code);
  }
  expectAnsweredBy(observed, ctx.answering, code === grpc.status.OK);
}

const tagOf = (metadata: grpc.Metadata) => String(metadata.get(CALL_TAG_KEY)[0]);

function unaryCall(client: TestServiceClient, request: SimpleRequest, ctx: Context) {
  const metadata = ctx.metadata();
  return {
    tag: tagOf(metadata),
    done: unary<SimpleRequest, SimpleResponse>(
      (r, cb) => client.UnaryCall(r, metadata, deadline(), cb),
      request,
    ),
  };
}

/** Writes with write flags (grpc-js takes them in the place of a Writable's encoding). */
function writeWithFlags<T>(call: grpc.ClientWritableStream<T>, message: T, flags: number): Promise<void> {
  return new Promise((resolve) => call.write(message, flags as unknown as BufferEncoding, () => resolve()));
}

const LARGE = { responseSize: 314159, payload: { body: zeros(271828) } };

const CASES: readonly CompressionCase[] = [
  {
    name: 'client_compressed_unary',
    async run(ctx) {
      // 1. The feature probe: an uncompressed message that says it is compressed.
      const probe = unaryCall(ctx.plain, { expectCompressed: { value: true }, ...LARGE }, ctx);
      const p = await probe.done;
      endedWith(p, grpc.status.INVALID_ARGUMENT, ctx);
      // 2. Compressed.
      const compressed = unaryCall(ctx.gzip, { expectCompressed: { value: true }, ...LARGE }, ctx);
      const c = await compressed.done;
      endedWith(c, grpc.status.OK, ctx);
      // 3. Uncompressed (on the gzip channel, flagged NoCompress).
      const uncompressed = unaryCall(
        ctx.gzipNoCompress,
        { expectCompressed: { value: false }, ...LARGE },
        ctx,
      );
      const u = await uncompressed.done;
      endedWith(u, grpc.status.OK, ctx);
      for (const o of [c, u]) {
        expect(bodySizes(o.responses)).toEqual([314159]);
        expect(allZeros(o.responses)).toBe(true);
      }
      return [
        { tag: probe.tag, requestFlags: [false], responseFlags: [], code: grpc.status.INVALID_ARGUMENT },
        { tag: compressed.tag, requestFlags: [true], responseFlags: [false], code: grpc.status.OK },
        { tag: uncompressed.tag, requestFlags: [false], responseFlags: [false], code: grpc.status.OK },
      ];
    },
  },
  {
    name: 'client_compressed_streaming',
    async run(ctx) {
      // 1. The feature probe: an uncompressed message that says it is compressed.
      const probeMetadata = ctx.metadata();
      const probe = clientStream<StreamingInputCallRequest, StreamingInputCallResponse>((cb) =>
        ctx.plain.StreamingInputCall(probeMetadata, deadline(), cb),
      );
      await writeWithFlags(
        probe.call,
        { expectCompressed: { value: true }, payload: { body: zeros(27182) } },
        0,
      );
      probe.call.end();
      endedWith(await probe.done, grpc.status.INVALID_ARGUMENT, ctx);
      // 2. A compressed message, then 3. an uncompressed one, then the half-close.
      const metadata = ctx.metadata();
      const call = clientStream<StreamingInputCallRequest, StreamingInputCallResponse>((cb) =>
        ctx.gzip.StreamingInputCall(metadata, deadline(), cb),
      );
      await writeWithFlags(
        call.call,
        { expectCompressed: { value: true }, payload: { body: zeros(27182) } },
        0,
      );
      await writeWithFlags(
        call.call,
        { expectCompressed: { value: false }, payload: { body: zeros(45904) } },
        NO_COMPRESS,
      );
      call.call.end();
      const o = await call.done;
      endedWith(o, grpc.status.OK, ctx);
      expect(o.responses).toEqual([{ aggregatedPayloadSize: 73086 }]);
      return [
        {
          tag: tagOf(probeMetadata),
          requestFlags: [false],
          responseFlags: [],
          code: grpc.status.INVALID_ARGUMENT,
        },
        { tag: tagOf(metadata), requestFlags: [true, false], responseFlags: [false], code: grpc.status.OK },
      ];
    },
  },
  {
    name: 'server_compressed_unary',
    async run(ctx) {
      const expectations: CallExpectation[] = [];
      for (const value of [true, false]) {
        const call = unaryCall(ctx.plain, { responseCompressed: { value }, ...LARGE }, ctx);
        const o = await call.done;
        endedWith(o, grpc.status.OK, ctx);
        expect(bodySizes(o.responses)).toEqual([314159]);
        expect(allZeros(o.responses)).toBe(true);
        expectations.push({
          tag: call.tag,
          requestFlags: [false],
          responseFlags: [value],
          code: grpc.status.OK,
        });
      }
      return expectations;
    },
  },
  {
    name: 'server_compressed_streaming',
    async run(ctx) {
      const metadata = ctx.metadata();
      const o = await readAll<StreamingOutputCallResponse>(
        ctx.plain.StreamingOutputCall(
          {
            responseParameters: [
              { compressed: { value: true }, size: 31415 },
              { compressed: { value: false }, size: 92653 },
            ],
          },
          metadata,
          deadline(),
        ),
      );
      endedWith(o, grpc.status.OK, ctx);
      expect(bodySizes(o.responses)).toEqual([31415, 92653]);
      expect(allZeros(o.responses)).toBe(true);
      return [
        { tag: tagOf(metadata), requestFlags: [false], responseFlags: [true, false], code: grpc.status.OK },
      ];
    },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: RawInteropServer;

beforeAll(async () => {
  server = await startRawInteropServer();
});
afterAll(async () => {
  await server?.stop();
});

/** The attempts of a call once all have ended (polled, 2.5 s at most: cancellations come after the client is done). */
async function attemptsOf(tag: string): Promise<RawAttempt[]> {
  const mine = () => server.attempts.filter((a) => a.callTag === tag);
  const giveUpAt = Date.now() + 2_500;
  while (mine().some((a) => a.end === undefined) && Date.now() < giveUpAt) {
    await sleep(5);
  }
  expect(
    mine().filter((a) => a.end === undefined),
    `attempts of ${tag} still running`,
  ).toEqual([]);
  return mine();
}

let modeNumber = 0;

describe.each(MODES)('compression, $name', (mode) => {
  const modeTag = `compression${++modeNumber}`;
  let ctx: Context;
  const events: RetryEvent[] = [];
  let clients: TestServiceClient[] = [];
  let caseNumber = 0;

  beforeAll(() => {
    const retry = mode.config
      ? [createRetryInterceptor(mode.config, { onEvent: (e) => events.push(e) })]
      : [];
    const make = (interceptors: grpc.Interceptor[], options: grpc.ChannelOptions = {}) =>
      new TestServiceClientConstructor(server.address, grpc.credentials.createInsecure(), {
        ...options,
        interceptors,
        'grpc.enable_retries': 0,
      });
    clients = [
      make(retry),
      make(retry, { 'grpc.default_compression_algorithm': GZIP }),
      make([noCompress, ...retry], { 'grpc.default_compression_algorithm': GZIP }),
    ];
    const [plain, gzip, gzipNoCompress] = clients as [
      TestServiceClient,
      TestServiceClient,
      TestServiceClient,
    ];
    ctx = { plain, gzip, gzipNoCompress, answering: mode.answering, metadata: () => new grpc.Metadata() };
  });
  afterAll(() => {
    for (const client of clients) {
      client.close();
    }
  });

  it.each(CASES)('$name', async (compressionCase) => {
    const caseTag = `${modeTag}/${compressionCase.name}#${++caseNumber}/`;
    let callNumber = 0;
    const expectations = await compressionCase.run({
      ...ctx,
      metadata() {
        const metadata = new grpc.Metadata();
        metadata.set(CALL_TAG_KEY, `${caseTag}${++callNumber}`);
        if (mode.firstAttempt) {
          metadata.set(FIRST_ATTEMPT_KEY, mode.firstAttempt);
        }
        return metadata;
      },
    });
    for (const call of expectations) {
      const attempts = await attemptsOf(call.tag);
      const summary = attempts.map((a) => ({
        attempt: a.attempt,
        requestFlags: a.requestFlags,
        responseFlags: a.responseFlags,
        end: a.end?.kind === 'status' ? a.end.code : 'cancelled',
      }));
      const label = `${call.tag}: ${JSON.stringify(summary)}`;
      expect(attempts.length, `attempts the server saw of ${label}`).toBeGreaterThanOrEqual(
        mode.serverAttempts.min,
      );
      expect(attempts.length, `attempts the server saw of ${label}`).toBeLessThanOrEqual(
        mode.serverAttempts.max,
      );
      // Every attempt, replays included, got each request message compressed as the description says.
      for (const a of attempts) {
        expect(a.requestFlags, `request flags of attempt ${a.attempt} of ${label}`).toEqual(
          call.requestFlags.slice(0, a.requestFlags.length),
        );
      }
      // One attempt answered: the one the mode expects, with every request, and responses flagged as asked. With
      // late hedges, a second hedge may also answer before the cancel that follows the first one's answer reaches
      // the server (both then answered alike).
      const answered = attempts.filter(
        (a) =>
          a.end?.kind === 'status' && !(a.rule === 'unavailable' && a.end.code === grpc.status.UNAVAILABLE),
      );
      if (mode.firstAttempt === 'slow') {
        expect(answered.length, `attempts that answered ${label}`).toBeGreaterThanOrEqual(1);
      } else {
        expect(answered.length, `attempts that answered ${label}`).toBe(1);
      }
      for (const winner of answered) {
        expect(winner.attempt, `attempt that answered ${label}`).toBeGreaterThanOrEqual(mode.answering.min);
        expect(winner.attempt, `attempt that answered ${label}`).toBeLessThanOrEqual(mode.answering.max);
        expect(winner.end, label).toMatchObject({ kind: 'status', code: call.code });
        expect(winner.requestFlags, `request flags of the answering attempt of ${label}`).toEqual(
          call.requestFlags,
        );
        expect(winner.responseFlags, `response flags of ${label}`).toEqual(call.responseFlags);
      }
      // The attempts that did not answer: the first, failed on purpose (it had the request) or slow (cancelled).
      for (const a of attempts.filter((x) => !answered.includes(x))) {
        if (mode.firstAttempt === 'unavailable') {
          expect(a.attempt, label).toBe(0);
          expect(a.end, label).toMatchObject({ kind: 'status', code: grpc.status.UNAVAILABLE });
          expect(a.requestFlags.length, `requests the failed first attempt had of ${label}`).toBeGreaterThan(
            0,
          );
        } else {
          expect(a.end?.kind, `end of losing attempt ${a.attempt} of ${label}`).toBe('cancelled');
          expect(a.responseFlags, `responses of losing attempt ${a.attempt} of ${label}`).toEqual([]);
        }
      }
    }
  });

  it('the interceptor took part (or not)', () => {
    if (!mode.config || !mode.firstAttempt) {
      expect(events.filter((e) => e.type === 'attempt-start' && e.attempt > 1)).toEqual([]);
      return;
    }
    const kind = mode.firstAttempt === 'unavailable' ? 'retry' : 'hedge';
    expect(events.filter((e) => e.type === 'attempt-start' && e.kind === kind).length).toBeGreaterThan(0);
  });
});

describe('raw interop server', () => {
  let plain: TestServiceClient;
  let gzip: TestServiceClient;
  beforeAll(() => {
    plain = new TestServiceClientConstructor(server.address, grpc.credentials.createInsecure());
    gzip = new TestServiceClientConstructor(server.address, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': GZIP,
    });
  });
  afterAll(() => {
    plain?.close();
    gzip?.close();
  });
  const tagged = (tag: string) => {
    const metadata = new grpc.Metadata();
    metadata.set(CALL_TAG_KEY, tag);
    return metadata;
  };

  it('rejects a compressed request that expects to be uncompressed, and records its flag', async () => {
    const o = await unary<SimpleRequest, SimpleResponse>(
      (r, cb) => gzip.UnaryCall(r, tagged('raw/1'), deadline(), cb),
      { expectCompressed: { value: false }, responseSize: 1, payload: { body: zeros(1000) } },
    );
    expect(o.status.code).toBe(grpc.status.INVALID_ARGUMENT);
    const [attempt] = await attemptsOf('raw/1');
    expect(attempt?.requestFlags).toEqual([true]);
    expect(attempt?.responseFlags).toEqual([]);
  });

  it('records the flag of each response it sends', async () => {
    const o = await readAll<StreamingOutputCallResponse>(
      plain.StreamingOutputCall(
        {
          responseParameters: [
            { compressed: { value: false }, size: 1 },
            { compressed: { value: true }, size: 2 },
            { size: 3 },
          ],
        },
        tagged('raw/2'),
        deadline(),
      ),
    );
    expect(o.status.code).toBe(grpc.status.OK);
    expect(bodySizes(o.responses)).toEqual([1, 2, 3]);
    const [attempt] = await attemptsOf('raw/2');
    expect(attempt?.responseFlags).toEqual([false, true, false]);
    expect(attempt?.end).toMatchObject({ kind: 'status', code: grpc.status.OK });
  });

  it('answers UNIMPLEMENTED to a method it does not implement', async () => {
    const o = await unary((r, cb) => plain.EmptyCall(r, tagged('raw/3'), deadline(), cb), {});
    expect(o.status.code).toBe(grpc.status.UNIMPLEMENTED);
  });
});
