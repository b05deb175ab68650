/**
 * A pause of the client's event loop (a GC pause, a busy handler) against a server in another process, which keeps
 * answering meanwhile. Node runs due timers before it reads the sockets: the hedge timers due during the pause fire
 * first, before the answers that came in during it are read.
 */
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { callMetadata, type FlakyClient, hedgingConfig, sleep, testClient } from '../helpers/harness.js';
import { type ServerProcess, stallEventLoop, startServerProcess } from '../helpers/server-process.js';

let server: ServerProcess;
let client: FlakyClient;
beforeAll(async () => {
  server = await startServerProcess();
  client = testClient(server.address, [
    createRetryInterceptor(hedgingConfig({ hedgingDelay: '0.03s', maxAttempts: 2 })),
  ]);
  await call('warm-up');
}, 30_000);
afterAll(async () => {
  client.close();
  await server.stop();
});

function call(callId: string): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    client.Unary({ payload: 'x' }, callMetadata(callId), (e: grpc.ServiceError | null) =>
      e ? reject(e) : resolve(),
    ),
  );
}

/** Starts a call, lets its request go out, then holds the loop for `stallMs` (in the check phase, as an I/O callback would). */
async function callThroughStall(callId: string, stallMs: number): Promise<void> {
  const done = call(callId);
  await sleep(2);
  await new Promise<void>((resolve) =>
    setImmediate(() => {
      stallEventLoop(stallMs);
      resolve();
    }),
  );
  await done;
  await sleep(50); // let a cancelled hedge reach the server
}

describe('hedging: a pause of the client', () => {
  it('sends no hedge for a call whose answer came in while the loop was held past the hedging delay', async () => {
    let hedges = 0;
    for (let i = 0; i < 5; i++) {
      const callId = `answered-in-pause-${i}`;
      await server.script(callId, [{ delayMs: 5 }]);
      await callThroughStall(callId, 250);
      hedges += (await server.attempts(callId)) - 1;
    }
    expect(hedges).toBe(0);
  });

  it('still sends the hedge after the pause when the answer has not come', async () => {
    let hedges = 0;
    for (let i = 0; i < 3; i++) {
      const callId = `slow-through-pause-${i}`;
      await server.script(callId, [{ delayMs: 400 }, { delayMs: 5 }]);
      await callThroughStall(callId, 250);
      hedges += (await server.attempts(callId)) - 1;
    }
    expect(hedges).toBe(3);
  });
});
