/**
 * The interop test server's own features that the interop cases do not reach: ResponseParameters.interval_us,
 * HalfDuplexCall, and Echo Status ending a FullDuplexCall before later messages; and the test harness's additions
 * the modes rely on: the first-attempt rules, the attempt tags, and the record of how each attempt ended. Bare
 * client, 127.0.0.1.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Duplex, readAll, unary } from './interop-calls.js';
import { type InteropServer, startInteropServer } from './interop-server.js';
import {
  ATTEMPT_TAG_KEY,
  CALL_TAG_KEY,
  FIRST_ATTEMPT_FAILURE,
  FIRST_ATTEMPT_KEY,
  PREVIOUS_ATTEMPTS_KEY,
  type SimpleRequest,
  type SimpleResponse,
  SLOW_FIRST_ATTEMPT_MS,
  type TestServiceClient,
  TestServiceClientConstructor,
} from './interop-service.js';

let server: InteropServer;
let client: TestServiceClient;

beforeAll(async () => {
  server = await startInteropServer();
  client = new TestServiceClientConstructor(server.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deadline = () => ({ deadline: Date.now() + 5_000 });

describe('interop test server', () => {
  it('sleeps interval_us before each streamed response, counted from the previous one', async () => {
    const started = performance.now();
    const arrivals: number[] = [];
    const call = client.StreamingOutputCall(
      { responseParameters: [{ size: 1, intervalUs: 30_000 }, { size: 2, intervalUs: 30_000 }, { size: 3 }] },
      new grpc.Metadata(),
      deadline(),
    );
    call.on('data', () => arrivals.push(performance.now() - started));
    const observed = await readAll(call);
    expect(observed.status.code).toBe(grpc.status.OK);
    expect(observed.responses.map((r) => r.payload?.body.length)).toEqual([1, 2, 3]);
    // Lower bounds only (timers never fire early; a loaded machine only makes them later).
    expect(arrivals[0]).toBeGreaterThanOrEqual(29);
    expect(arrivals[1]).toBeGreaterThanOrEqual(59);
  });

  it('HalfDuplexCall answers nothing before the half-close, then every request in order', async () => {
    const d = new Duplex(client.HalfDuplexCall(new grpc.Metadata(), deadline()));
    let received = 0;
    d.call.on('data', () => {
      received += 1;
    });
    d.call.write({ responseParameters: [{ size: 5 }] });
    d.call.write({ responseParameters: [{ size: 6 }, { size: 7 }] });
    // Once the handler runs, give it time to answer (it must not): polled, since a loaded machine is slow.
    const giveUpAt = Date.now() + 5_000;
    while (server.handled.at(-1)?.method !== 'HalfDuplexCall' && Date.now() < giveUpAt) {
      await sleep(5);
    }
    expect(server.handled.at(-1)?.method).toBe('HalfDuplexCall');
    await sleep(50);
    expect(received).toBe(0);
    d.call.end();
    const observed = await d.done;
    expect(observed.status.code).toBe(grpc.status.OK);
    expect(observed.responses.map((r) => r.payload?.body.length)).toEqual([5, 6, 7]);
  });

  it('FullDuplexCall ends with an echoed status and answers no message sent after it', async () => {
    const d = new Duplex(client.FullDuplexCall(new grpc.Metadata(), deadline()));
    d.call.write({
      responseParameters: [{ size: 4 }],
      responseStatus: { code: grpc.status.ABORTED, message: 'stop' },
    });
    d.call.write({ responseParameters: [{ size: 9 }] });
    const observed = await d.done;
    expect(observed.status).toMatchObject({ code: grpc.status.ABORTED, details: 'stop' });
    expect(observed.responses.map((r) => r.payload?.body.length)).toEqual([4]);
  });
});

describe('interop test server: test harness additions', () => {
  let tagNumber = 0;
  /** Headers of a call with a fresh tag; `previous` sets grpc-previous-rpc-attempts (a retry's). */
  function headers(rule: string | undefined, previous?: number): { metadata: grpc.Metadata; tag: string } {
    const metadata = new grpc.Metadata();
    const tag = `harness/${++tagNumber}`;
    metadata.set(CALL_TAG_KEY, tag);
    if (rule) {
      metadata.set(FIRST_ATTEMPT_KEY, rule);
    }
    if (previous !== undefined) {
      metadata.set(PREVIOUS_ATTEMPTS_KEY, String(previous));
    }
    return { metadata, tag };
  }
  const recordOf = (tag: string) => server.handled.filter((h) => h.callTag === tag);
  async function ended(tag: string) {
    const giveUpAt = Date.now() + 5_000;
    while (recordOf(tag)[0]?.end === undefined && Date.now() < giveUpAt) {
      await sleep(5);
    }
    return recordOf(tag);
  }
  const unaryCall = (metadata: grpc.Metadata) =>
    unary<SimpleRequest, SimpleResponse>((r, cb) => client.UnaryCall(r, metadata, deadline(), cb), {
      responseSize: 3,
    });

  it('`unavailable` fails a first attempt with UNAVAILABLE, Trailers-Only, and records it', async () => {
    const { metadata, tag } = headers('unavailable');
    const observed = await unaryCall(metadata);
    expect(observed.status).toMatchObject({ code: grpc.status.UNAVAILABLE, details: FIRST_ATTEMPT_FAILURE });
    // No headers of the server's (a retry policy may retry it), the tag in the trailers.
    expect(observed.headers?.get(ATTEMPT_TAG_KEY) ?? []).toEqual([]);
    expect(observed.status.metadata.get(ATTEMPT_TAG_KEY)).toEqual(['0']);
    const [record] = await ended(tag);
    expect(record).toMatchObject({ attempt: 0, rule: 'unavailable', end: { kind: 'status', code: 14 } });
  });

  it('a later attempt (grpc-previous-rpc-attempts) runs as usual, tagged with its number', async () => {
    const { metadata, tag } = headers('unavailable', 2);
    const observed = await unaryCall(metadata);
    expect(observed.status.code).toBe(grpc.status.OK);
    expect(observed.responses.map((r) => r.payload?.body.length)).toEqual([3]);
    expect(observed.headers?.get(ATTEMPT_TAG_KEY)).toEqual(['2']);
    expect(observed.status.metadata.get(ATTEMPT_TAG_KEY)).toEqual(['2']);
    const [record] = await ended(tag);
    expect(record).toMatchObject({ attempt: 2, rule: undefined, end: { kind: 'status', code: 0 } });
  });

  it('`unavailable` fails a bidi first attempt only once its first request arrives', async () => {
    const { metadata, tag } = headers('unavailable');
    const d = new Duplex(client.FullDuplexCall(metadata, deadline()));
    const giveUpAt = Date.now() + 5_000;
    while (recordOf(tag).length === 0 && Date.now() < giveUpAt) {
      await sleep(5);
    }
    await sleep(30);
    expect(recordOf(tag)[0]?.end, 'before any request').toBeUndefined();
    d.call.write({ responseParameters: [{ size: 1 }] });
    const observed = await d.done;
    expect(observed.status.code).toBe(grpc.status.UNAVAILABLE);
    expect(observed.responses).toEqual([]);
  });

  it('`slow` keeps a first attempt silent for SLOW_FIRST_ATTEMPT_MS, then answers', async () => {
    const { metadata } = headers('slow');
    const started = performance.now();
    const observed = await unaryCall(metadata);
    // A lower bound only (timers never fire early).
    expect(performance.now() - started).toBeGreaterThanOrEqual(SLOW_FIRST_ATTEMPT_MS - 1);
    expect(observed.status.code).toBe(grpc.status.OK);
    expect(observed.status.metadata.get(ATTEMPT_TAG_KEY)).toEqual(['0']);
  });

  it('records a call the client cancelled as cancelled, and runs no handler for a cancelled `slow` attempt', async () => {
    const { metadata, tag } = headers('slow');
    const d = new Duplex(client.FullDuplexCall(metadata, deadline()));
    d.call.write({ responseParameters: [{ size: 1 }] });
    const giveUpAt = Date.now() + 5_000;
    while (recordOf(tag).length === 0 && Date.now() < giveUpAt) {
      await sleep(5);
    }
    d.call.cancel();
    const observed = await d.done;
    expect(observed.status.code).toBe(grpc.status.CANCELLED);
    const [record] = await ended(tag);
    expect(record?.end?.kind).toBe('cancelled');
    await sleep(SLOW_FIRST_ATTEMPT_MS + 50);
    expect(record?.end?.kind, 'still cancelled after the delay').toBe('cancelled');
    expect(observed.responses).toEqual([]);
  });
});
