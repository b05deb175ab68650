/**
 * RetryInfo over a real network, scripted with the flaky server's `retryInfoMs`: the rules themselves (precedence,
 * cap, backoff reset, hedging) are proved under fake time in test/hints/retry-info.engine.test.ts.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import { eventsOf, hedgingConfig, retryConfig, startHarness, unary } from '../helpers/harness.js';

let server: FlakyServer;
let n = 0;
const id = () => `ri-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('RetryInfo from the flaky server', () => {
  it('a retry waits the server-given delay (reason retry-info), then the backoff restarts', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '0.01s' }), { random: () => 0.5 }, server);
    try {
      const c = id();
      server.script(c, [{ status: 'UNAVAILABLE', retryInfoMs: 150 }, { status: 'UNAVAILABLE' }, {}]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(eventsOf(h.events, 'retry-scheduled').map((e) => [e.reason, e.delayMs])).toEqual([
        ['retry-info', 150],
        ['backoff', 10],
      ]);
      const [a1, a2] = server.attempts(c);
      expect((a2?.arrivedAt as number) - (a1?.arrivedAt as number)).toBeGreaterThanOrEqual(140);
    } finally {
      await h.close();
    }
  });

  it('a delay over the cap ends the call with its status; a non-retryable code is not retried', async () => {
    const h = await startHarness(retryConfig(), { retryInfo: { maxDelayMs: 100 } }, server);
    try {
      const long = id();
      server.script(long, [{ status: 'UNAVAILABLE', retryInfoMs: 5000 }, {}]);
      expect((await unary(h.client, long)).code).toBe(status.UNAVAILABLE);
      expect(server.attempts(long)).toHaveLength(1);
      const fatal = id();
      server.script(fatal, [{ status: 'INVALID_ARGUMENT', retryInfoMs: 10 }, {}]);
      expect((await unary(h.client, fatal)).code).toBe(status.INVALID_ARGUMENT);
      expect(server.attempts(fatal)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('hedging: a RetryInfo delays the next hedge instead of sending it at once', async () => {
    const h = await startHarness(hedgingConfig({ hedgingDelay: '5s', maxAttempts: 2 }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: 'UNAVAILABLE', retryInfoMs: 120 }, {}]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(eventsOf(h.events, 'hedge-scheduled').map((e) => [e.reason, e.delayMs])).toEqual([
        ['hedging-delay', 5000],
        ['retry-info', 120],
      ]);
    } finally {
      await h.close();
    }
  });
});
