/**
 * End to end: an interceptor whose own adaptive hedging (`adaptiveHedging: true` or options) is shared by clients
 * of two servers learns a delay per target, so the slow server's latency does not set the fast one's delay; an
 * `AdaptiveHedging` passed in stays one for every target.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { hedgingConfig, testClient, unary } from '../helpers/harness.js';

// maxExtraLoad 0.1: each target's delay moves once 10 of its calls have answered.
const config = hedgingConfig({ maxAttempts: 2, hedgingDelay: '10s' });
let slow: FlakyServer;
let fast: FlakyServer;

beforeAll(async () => {
  [slow, fast] = await Promise.all([
    FlakyServer.start({ onAttempt: () => ({ delayMs: 60 }) }),
    FlakyServer.start(),
  ]);
});
afterAll(async () => {
  await Promise.all([slow.stop(), fast.stop()]);
});

/** The delay the last call of `calls` to each server was given for its hedge. */
async function learnedDelays(adaptiveHedging: true | AdaptiveHedging | { maxExtraLoad: number }) {
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(config, { adaptiveHedging, onEvent: (e) => events.push(e) });
  const toSlow = testClient(slow.address, [interceptor]);
  const toFast = testClient(fast.address, [interceptor]);
  const last = { slow: Number.NaN, fast: Number.NaN };
  try {
    for (let i = 0; i < 12; i++) {
      for (const [name, client] of [
        ['slow', toSlow],
        ['fast', toFast],
      ] as const) {
        events.length = 0;
        expect((await unary(client, `${name}-${i}`)).error).toBeUndefined();
        const scheduled = events.find((e) => e.type === 'hedge-scheduled');
        last[name] = scheduled?.type === 'hedge-scheduled' ? scheduled.delayMs : Number.NaN;
      }
    }
  } finally {
    toSlow.close();
    toFast.close();
  }
  return last;
}

describe("the interceptor's own adaptive hedging learns per target", () => {
  it('clients of a slow and a fast server through one interceptor: each gets its own delay', async () => {
    const delays = await learnedDelays({ maxExtraLoad: 0.1 });
    expect(delays.slow).toBeGreaterThanOrEqual(50);
    expect(delays.slow).toBeLessThan(1_000);
    expect(delays.fast).toBeLessThan(40);
  });

  it('an AdaptiveHedging passed in is one for every target: the slow server sets the delay for both', async () => {
    const delays = await learnedDelays(new AdaptiveHedging({ maxExtraLoad: 0.1 }));
    expect(delays.slow).toBeGreaterThanOrEqual(50);
    expect(delays.fast).toBeGreaterThanOrEqual(50);
    expect(delays.fast).toBeLessThan(1_000);
  });
});
