/**
 * The interop test server's own features that the interop cases do not reach: ResponseParameters.interval_us,
 * HalfDuplexCall, and Echo Status ending a FullDuplexCall before later messages. Bare client, 127.0.0.1.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Duplex, readAll } from './interop-calls.js';
import { type InteropServer, startInteropServer } from './interop-server.js';
import { type TestServiceClient, TestServiceClientConstructor } from './interop-service.js';

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
