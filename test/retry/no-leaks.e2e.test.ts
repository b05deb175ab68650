import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  cancelDuringBackoff,
  eventsOf,
  hedgingConfig,
  retryConfig,
  sleep,
  startHarness,
  unary,
} from '../helpers/harness.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

function timeouts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('resources', () => {
  it('leaves no timers behind after many retried, hedged, cancelled and expired calls', async () => {
    const baseline = timeouts();
    const retry = await startHarness(
      retryConfig({ initialBackoff: '0.005s', maxBackoff: '0.01s' }),
      {},
      server,
    );
    const hedge = await startHarness(hedgingConfig({ hedgingDelay: '0.005s', maxAttempts: 3 }), {}, server);
    const slowRetry = await startHarness(
      retryConfig({ initialBackoff: '10s', maxBackoff: '10s' }),
      {},
      server,
    );
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const kind = i % 5;
      const c = `leak-${i}`;
      if (kind === 0) {
        server.script(c, [{ status: status.UNAVAILABLE }, { status: status.UNAVAILABLE }, {}]);
        calls.push(unary(retry.client, c));
      } else if (kind === 1) {
        server.script(c, [{ delayMs: 30 }, { status: status.UNAVAILABLE }, {}]);
        calls.push(unary(hedge.client, c));
      } else if (kind === 2) {
        // cancelled during a 10 s backoff
        server.script(c, [{ status: status.UNAVAILABLE }, {}]);
        calls.push(unary(slowRetry.client, c, undefined, cancelDuringBackoff()));
      } else if (kind === 3) {
        // the deadline passes during a 10 s backoff
        server.script(c, [{ status: status.UNAVAILABLE }, {}]);
        calls.push(unary(slowRetry.client, c, undefined, { deadlineMs: 600 }));
      } else {
        // hedges in flight when the deadline passes
        server.script(c, [{ delayMs: 1000 }]);
        calls.push(unary(hedge.client, c, undefined, { deadlineMs: 40 }));
      }
    }
    const outcomes = (await Promise.all(calls)) as Array<{ statusEvents: number; code: number }>;
    expect(outcomes.every((o) => o.statusEvents === 1)).toBe(true);
    const ends = [retry, hedge, slowRetry].map((h) => eventsOf(h.events, 'call-end').length);
    expect(ends).toEqual([40, 80, 80]);
    // the cancelled calls really were waiting in a 10 s backoff (so a timer to clear existed)
    expect(eventsOf(slowRetry.events, 'retry-scheduled').length).toBeGreaterThanOrEqual(40);
    await Promise.all([retry.close(), hedge.close(), slowRetry.close()]);
    await server.waitFor(() => server.activeAttempts() === 0, 5000);
    await sleep(50);
    expect(timeouts()).toBeLessThanOrEqual(baseline);
  });
});
