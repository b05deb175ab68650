/**
 * End to end: the interceptor's `adaptiveHedging` option against a real grpc-js server — the hedging delay comes
 * from observed latency once the window holds enough samples, and the hedge budget refuses hedges with a
 * `throttled` event.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { FlakyServer } from '../../src/testing/index.js';
import { eventsOf, FLAKY, type Harness, hedgingConfig, startHarness, unary } from '../helpers/harness.js';

const METHOD = `/${FLAKY}/Unary`;
let harness: Harness | undefined;
let server: FlakyServer | undefined;

afterEach(async () => {
  await harness?.close();
  await server?.stop();
  harness = undefined;
  server = undefined;
});

describe('adaptiveHedging option', () => {
  it('starts from the configured hedgingDelay and moves toward the observed percentile', async () => {
    server = await FlakyServer.start({ onAttempt: () => ({ delayMs: 5 }) });
    // maxExtraLoad 0.1: the delay moves once 10 calls have answered, to the fast path's latency.
    const adaptive = new AdaptiveHedging({ maxExtraLoad: 0.1, recentCalls: 10 });
    harness = await startHarness(
      hedgingConfig({ maxAttempts: 2, hedgingDelay: '10s' }),
      { adaptiveHedging: adaptive },
      server,
    );
    for (let i = 0; i < 12; i++) {
      const outcome = await unary(harness.client, `call-${i}`);
      expect(outcome.code).toBe(grpc.status.OK);
    }
    const scheduled = eventsOf(harness.events, 'hedge-scheduled');
    // The first calls use the configured 10 s; after 10 calls the delay is the slowest of them (the fast path).
    expect(scheduled[0]).toMatchObject({ reason: 'hedging-delay', delayMs: 10_000 });
    const last = scheduled[scheduled.length - 1];
    expect(last?.reason).toBe('adaptive-delay');
    expect(last?.delayMs).toBeGreaterThanOrEqual(1);
    expect(last?.delayMs).toBeLessThan(1_000);
    expect(adaptive.delayOf(METHOD)).toBeLessThan(1_000); // the getter sees it too
  });

  it('does not send a hedge the budget refuses, and says so with a throttled event', async () => {
    // The original is slow, so the hedge would be due; the budget holds none.
    server = await FlakyServer.start({
      onAttempt: (info) =>
        info.metadata.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length === 0 ? { delayMs: 100 } : undefined,
    });
    harness = await startHarness(
      hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.01s' }),
      { adaptiveHedging: { maxExtraLoad: 0.01, budget: { minPerSecond: 0 } } },
      server,
    );
    const outcome = await unary(harness.client, 'budget');
    expect(outcome.code).toBe(grpc.status.OK);
    expect(eventsOf(harness.events, 'attempt-start')).toHaveLength(1);
    const throttled = eventsOf(harness.events, 'throttled');
    expect(throttled).toHaveLength(1);
    expect(throttled[0]).toMatchObject({ kind: 'hedge', gate: 'hedge-budget', attempt: 2, tokens: 0 });
  });

  it('names a bad option', () => {
    expect(() => createRetryInterceptor(hedgingConfig(), { adaptiveHedging: { maxExtraLoad: 1.5 } })).toThrow(
      /createRetryInterceptor: options\.adaptiveHedging\.maxExtraLoad must be a number in \(0, 1\)/,
    );
    expect(() => createRetryInterceptor(hedgingConfig(), { cancelRateLimit: { burst: 0 } })).toThrow(
      /createRetryInterceptor: options\.cancelRateLimit\.burst must be an integer >= 1/,
    );
  });
});
