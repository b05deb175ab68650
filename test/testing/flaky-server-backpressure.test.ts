/**
 * The flaky server's streamed responses wait for the reader (audit finding F7): a client that stops reading a long
 * stream holds the server's writes, not its memory. Each call reads one response and pauses (a grpc-js client that
 * never reads at all buffers the stream itself, in its own process); the server must then stop after a handful of
 * responses (grpc-js's buffer and the HTTP/2 window), where it used to queue all of them at once. Once the client
 * reads on, every response arrives in order, followed by the scripted status and trailers. Servers on 127.0.0.1:0.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { FlakyServer, type RecordedAttempt, SCRIPT_METADATA_KEY } from '../../src/testing/index.js';
import { callMetadata, type FlakyClient, type TestResponse, testClient } from '../helpers/harness.js';

/** 20,000 responses of 6,000 bytes: 120 MB the old server queued at once for one unread call. */
const COUNT = 20_000;
const BIG = 'x'.repeat(6000);
/**
 * The most responses the server may have handed grpc-js while the client reads nothing: 16 in the server stream's
 * buffer, what the HTTP/2 window lets through (64 KiB: about 10 of 6,000 bytes) and the client's own buffer of 16.
 */
const MAX_UNREAD = 200;

let server: FlakyServer | undefined;
let client: FlakyClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.stop();
  client = undefined;
  server = undefined;
});

interface PausedCall {
  call: grpc.ClientReadableStream<TestResponse> | grpc.ClientDuplexStream<unknown, TestResponse>;
  responses: TestResponse[];
  /** Resolves with the call's status once it ends. */
  status: Promise<grpc.StatusObject>;
  /** Resolves once the first response arrived; the call is paused then. */
  first: Promise<void>;
}

/** Reads the first response of `call`, then pauses it (reading nothing more until `call.resume()`). */
function pauseAfterFirst(
  call: grpc.ClientReadableStream<TestResponse> | grpc.ClientDuplexStream<unknown, TestResponse>,
): PausedCall {
  const responses: TestResponse[] = [];
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  call.on('data', (response: TestResponse) => {
    responses.push(response);
    if (responses.length === 1) {
      call.pause();
      arrived();
    }
  });
  call.on('error', () => undefined);
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  return { call, responses, status, first };
}

/** The attempt of `callId`, once it arrived. */
async function attemptOf(callId: string): Promise<RecordedAttempt> {
  const [attempt] = await server!.waitForAttempts(callId, 1);
  return attempt!;
}

/** Lets the server write what it will while the client reads nothing; returns how many it handed to grpc-js. */
async function sentWhileUnread(attempt: RecordedAttempt): Promise<number> {
  await server!.waitFor(() => attempt.responsesSent >= 16);
  let last = -1;
  // Until the count stays put for 100 ms (the server waits for 'drain'), or 1 s.
  for (let i = 0; i < 10 && attempt.responsesSent !== last; i++) {
    last = attempt.responsesSent;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return attempt.responsesSent;
}

describe('FlakyServer: streamed responses wait for the reader', () => {
  it('server streaming: stops writing while the client reads nothing, then sends every response and the status', async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    const script = [
      {
        responses: COUNT,
        response: { payload: BIG },
        status: 'UNAVAILABLE' as const,
        details: 'after the stream',
        trailers: { 'x-after': 'last' },
      },
    ];
    server.script('ss', script);
    const paused = pauseAfterFirst(
      client.ServerStream({ payload: 'p' }, callMetadata('ss')) as grpc.ClientReadableStream<TestResponse>,
    );
    await paused.first;
    const attempt = await attemptOf('ss');

    const sent = await sentWhileUnread(attempt);
    expect(sent).toBeLessThan(MAX_UNREAD);
    expect(attempt.endedWith).toBeUndefined(); // the status waits behind the responses not written yet
    expect(server.activeAttempts()).toBe(1);

    paused.call.resume();
    const status = await paused.status;
    expect(status.code).toBe(grpc.status.UNAVAILABLE);
    expect(status.details).toBe('after the stream');
    expect(status.metadata.get('x-after')).toEqual(['last']);
    expect(paused.responses).toHaveLength(COUNT);
    // The scripted response replaces the echo: FlakyTest's index is not in it, so order shows in the count only;
    // every message is the scripted one.
    expect(paused.responses.every((r) => r.payload === BIG && r.attempt === 0)).toBe(true);
    expect(attempt).toMatchObject({
      responsesSent: COUNT,
      endedWith: grpc.status.UNAVAILABLE,
      cancelled: false,
    });
  });

  it('server streaming echo: responses arrive in order after the wait', async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    const metadata = callMetadata('echo-ss', {
      [SCRIPT_METADATA_KEY]: JSON.stringify([{ responses: COUNT }]),
    });
    const paused = pauseAfterFirst(
      client.ServerStream({ payload: BIG }, metadata) as grpc.ClientReadableStream<TestResponse>,
    );
    await paused.first;
    const attempt = await attemptOf('echo-ss');
    expect(await sentWhileUnread(attempt)).toBeLessThan(MAX_UNREAD);

    paused.call.resume();
    expect((await paused.status).code).toBe(grpc.status.OK);
    expect(paused.responses.map((r) => r.index)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    expect(paused.responses.every((r) => r.payload === BIG && r.attempt === 1)).toBe(true);
    expect(attempt).toMatchObject({ responsesSent: COUNT, endedWith: grpc.status.OK });
  });

  it('bidi after the half-close: stops writing while the client reads nothing', async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    server.script('bd', [{ responses: COUNT, trailers: { 'x-after': 'last' } }]);
    const call = client.Bidi(callMetadata('bd')) as grpc.ClientDuplexStream<unknown, TestResponse>;
    const paused = pauseAfterFirst(call);
    call.write({ payload: BIG });
    call.end();
    await paused.first;
    const attempt = await attemptOf('bd');
    expect(await sentWhileUnread(attempt)).toBeLessThan(MAX_UNREAD);
    expect(attempt.endedWith).toBeUndefined();

    call.resume();
    const status = await paused.status;
    expect(status.code).toBe(grpc.status.OK);
    expect(status.metadata.get('x-after')).toEqual(['last']);
    expect(paused.responses.map((r) => r.index)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    expect(paused.responses.every((r) => r.payload === BIG && r.messagesReceived === 1)).toBe(true);
    expect(attempt).toMatchObject({ responsesSent: COUNT, endedWith: grpc.status.OK });
  });

  it('bidi echo: answers what arrives as the client reads, in order', async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    server.script('be', [{ echo: true }]);
    const messages = 1000;
    const call = client.Bidi(callMetadata('be')) as grpc.ClientDuplexStream<unknown, TestResponse>;
    const paused = pauseAfterFirst(call);
    for (let i = 0; i < messages; i++) {
      call.write({ payload: `${i}:${BIG}` });
    }
    await paused.first;
    const attempt = await attemptOf('be');
    // Every message reaches the server (and is recorded); only a handful are answered while nothing is read.
    await server.waitFor(() => attempt.messages.length === messages);
    expect(await sentWhileUnread(attempt)).toBeLessThan(MAX_UNREAD);

    call.end();
    call.resume();
    expect((await paused.status).code).toBe(grpc.status.OK);
    expect(paused.responses.map((r) => r.index)).toEqual(Array.from({ length: messages }, (_, i) => i));
    expect(paused.responses.map((r) => r.payload)).toEqual(
      Array.from({ length: messages }, (_, i) => `${i}:${BIG}`),
    );
    expect(attempt).toMatchObject({ responsesSent: messages, endedWith: grpc.status.OK });
  });

  it('a cancel while the server waits for the reader ends the attempt as cancelled', async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    server.script('cx', [{ responses: COUNT, response: { payload: BIG } }]);
    const paused = pauseAfterFirst(
      client.ServerStream({ payload: 'p' }, callMetadata('cx')) as grpc.ClientReadableStream<TestResponse>,
    );
    await paused.first;
    const attempt = await attemptOf('cx');
    const sent = await sentWhileUnread(attempt);
    expect(sent).toBeLessThan(MAX_UNREAD);

    paused.call.cancel();
    await server.waitFor(() => attempt.endedAt !== undefined);
    expect(attempt).toMatchObject({ cancelled: true, endedWith: undefined, responsesSent: sent });
    expect(server.activeAttempts()).toBe(0);
  });

  it("the call's deadline passing while the server waits for the reader ends the attempt as cancelled", async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    server.script('dl', [{ responses: COUNT, response: { payload: BIG } }]);
    const paused = pauseAfterFirst(
      client.ServerStream({ payload: 'p' }, callMetadata('dl'), {
        deadline: Date.now() + 2500,
      }) as grpc.ClientReadableStream<TestResponse>,
    );
    await paused.first;
    const attempt = await attemptOf('dl');
    expect(await sentWhileUnread(attempt)).toBeLessThan(MAX_UNREAD);

    await server.waitFor(() => attempt.endedAt !== undefined);
    expect(attempt).toMatchObject({ cancelled: true, endedWith: undefined });
    expect(server.activeAttempts()).toBe(0);
    expect((await paused.status).code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it("the server's stop cuts off an attempt that waits for the reader", async () => {
    server = await FlakyServer.start();
    client = testClient(server.address);
    server.script('stop', [{ responses: COUNT, response: { payload: BIG } }]);
    const paused = pauseAfterFirst(
      client.ServerStream({ payload: 'p' }, callMetadata('stop')) as grpc.ClientReadableStream<TestResponse>,
    );
    await paused.first;
    const attempt = await attemptOf('stop');
    expect(await sentWhileUnread(attempt)).toBeLessThan(MAX_UNREAD);

    await server.stop(50);
    expect(attempt).toMatchObject({ cancelled: true, cutOffByStop: true, endedWith: undefined });
    expect(server.activeAttempts()).toBe(0);
    expect((await paused.status).code).not.toBe(grpc.status.OK);
  });
});
