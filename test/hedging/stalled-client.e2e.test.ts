/**
 * A pause of the client's event loop (a GC pause, a busy handler) against a server in another process, which keeps
 * answering meanwhile. Node runs due timers before it reads the sockets: the hedge timers due during the pause fire
 * first, before the answers that came in during it are read; and adaptive hedging must not take the pause for the
 * server's latency.
 */
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { callMetadata, type FlakyClient, hedgingConfig, sleep, testClient } from '../helpers/harness.js';
import {
  type ServerProcess,
  stallEventLoop,
  startServerProcess,
  untilServerHas,
} from '../helpers/server-process.js';

let server: ServerProcess;
let client: FlakyClient;
// A floor of 50 ms: the hedge falls due in the pause below, not before the request is out.
const adaptive = new AdaptiveHedging({ budget: false, minDelayMs: 50 });
let adaptiveClient: FlakyClient;
beforeAll(async () => {
  server = await startServerProcess();
  client = testClient(server.address, [
    createRetryInterceptor(hedgingConfig({ hedgingDelay: '0.03s', maxAttempts: 2 })),
  ]);
  adaptiveClient = testClient(server.address, [
    createRetryInterceptor(hedgingConfig({ hedgingDelay: '0.03s', maxAttempts: 2 }), {
      adaptiveHedging: adaptive,
    }),
  ]);
  await call('warm-up');
}, 30_000);
afterAll(async () => {
  client.close();
  adaptiveClient.close();
  await server.stop();
});

function call(callId: string, through = client): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    through.Unary({ payload: 'x' }, callMetadata(callId), (e: grpc.ServiceError | null) =>
      e ? reject(e) : resolve(),
    ),
  );
}

/** Holds the event loop for `stallMs` in the check phase, as an I/O callback would. */
function stallInCheckPhase(stallMs: number): Promise<void> {
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      stallEventLoop(stallMs);
      resolve();
    }),
  );
}

/** Starts a call, lets its request go out, then holds the loop for `stallMs`. */
async function callThroughStall(callId: string, stallMs: number): Promise<void> {
  const done = call(callId);
  await sleep(2);
  await stallInCheckPhase(stallMs);
  await done;
  await sleep(50); // let a cancelled hedge reach the server
}

/** As {@link callThroughStall}, but holds the loop only once the server has the first attempt. */
async function callThroughStallOnceSent(
  callId: string,
  stallMs: number,
  through: FlakyClient,
): Promise<void> {
  const done = call(callId, through);
  await untilServerHas(server, callId);
  await stallInCheckPhase(stallMs);
  await done;
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

  it('adaptive hedging does not learn the pause as latency: the delay stays near the fast path', async () => {
    for (let i = 0; i < 30; i++) {
      await call(`adaptive-warm-up-${i}`, adaptiveClient);
    }
    expect(adaptive.currentDelays().values().next().value).toBeLessThan(100);
    for (let i = 0; i < 6; i++) {
      const callId = `adaptive-in-pause-${i}`;
      await server.script(callId, [{ delayMs: 5 }]);
      await callThroughStallOnceSent(callId, 250, adaptiveClient);
    }
    // Learned from, six calls of 250 ms in a row would be a shift up, and the delay would follow them to 250 ms.
    expect(adaptive.currentDelays().values().next().value).toBeLessThan(100);
  });
});
