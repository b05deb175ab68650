/**
 * A pause of the server (a GC pause) while calls are in flight, the server in another process: every call in
 * flight waits for the pause to end, and so would a hedge. With adaptive hedging, the second hedge that comes due
 * with no call answering since waits for the next answer; when the pause ends the calls answer together, and the
 * held hedge is never sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { hedgingConfig, sleep, testClient, unary } from '../helpers/harness.js';
import { type ServerProcess, startServerProcess, untilServerHas } from '../helpers/server-process.js';

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess();
}, 30_000);
afterAll(async () => {
  await server.stop();
});

/**
 * Two calls whose first attempts take 300 ms, in flight when the server stalls for a second: their hedges come due
 * at 400 ms into it. Returns the attempts the server saw of each, and the events.
 */
async function twoCallsThroughServerStall(
  name: string,
  holdInStalls: boolean,
): Promise<{ attempts: [number, number]; events: RetryEvent[] }> {
  const events: RetryEvent[] = [];
  const adaptive = new AdaptiveHedging({ budget: false, holdInStalls });
  const client = testClient(server.address, [
    createRetryInterceptor(hedgingConfig({ hedgingDelay: '0.4s', maxAttempts: 2 }), {
      adaptiveHedging: adaptive,
      onEvent: (e) => events.push(e),
    }),
  ]);
  try {
    const [a, b] = [`${name}-a`, `${name}-b`];
    await server.script(a, [{ delayMs: 300 }, { delayMs: 300 }]);
    await server.script(b, [{ delayMs: 300 }, { delayMs: 300 }]);
    const first = unary(client, a);
    await untilServerHas(server, a);
    const second = unary(client, b);
    await untilServerHas(server, b);
    await server.stall(1_000);
    const outcomes = await Promise.all([first, second]);
    expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined]);
    await sleep(100); // let a cancelled hedge reach the server
    return { attempts: [await server.attempts(a), await server.attempts(b)], events };
  } finally {
    client.close();
  }
}

describe('hedging: a pause of the server', () => {
  it('with adaptive hedging, the second hedge due waits for an answer, and the call answers first', async () => {
    const { attempts, events } = await twoCallsThroughServerStall('held', true);
    // The first hedge due goes (alone, it is a slow call); the second waits, and its call's own answer ends it.
    expect(attempts).toEqual([2, 1]);
    expect(events.filter((e) => e.type === 'hedge-held')).toEqual([
      expect.objectContaining({ type: 'hedge-held', attempt: 2 }),
    ]);
    expect(events.filter((e) => e.type === 'hedge-sent')).toHaveLength(1);
  }, 20_000);

  it('with holdInStalls: false, both hedges go into the pause', async () => {
    const { attempts, events } = await twoCallsThroughServerStall('sent', false);
    expect(attempts).toEqual([2, 2]);
    expect(events.filter((e) => e.type === 'hedge-held')).toEqual([]);
  }, 20_000);
});
