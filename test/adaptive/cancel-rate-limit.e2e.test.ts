/**
 * End to end: sustained hedging whose losers would be cancelled faster than a Node.js server's rapid-reset guard
 * allows (nghttp2: a burst of 1,000 RST_STREAMs, then 33 per second) loses no call, because the interceptor's
 * cancel-rate limiter lets the losers it may not cancel run to completion instead.
 *
 * Needs the engine to consult the CancelRateLimiter before cancelling a losing attempt (issue 12, item 4).
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CANCEL_BURST } from '../../src/hedging/cancel-rate-limiter.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { FlakyServer } from '../../src/testing/index.js';
import { type FlakyClient, hedgingConfig, testClient } from '../helpers/harness.js';

const CALLS = 1_500;
const CALLS_PER_SECOND = 300;
/** The original attempt is slow and the hedge fast: every call's original attempt loses. */
const LOSER_MS = 150;

let server: FlakyServer | undefined;
let client: FlakyClient | undefined;

afterEach(async () => {
  client?.close();
  await server?.stop();
  server = undefined;
  client = undefined;
});

function unaryCall(c: FlakyClient): Promise<number> {
  return new Promise((resolve) => {
    (c.Unary as (...args: unknown[]) => unknown)(
      { payload: 'x' },
      new grpc.Metadata(),
      { deadline: Date.now() + 20_000 },
      (error: grpc.ServiceError | null) => resolve(error ? error.code : grpc.status.OK),
    );
  });
}

describe('cancel-rate limiter against a real grpc-js server', () => {
  // Without the limiter (cancelRateLimit: false, or an engine that cancels every loser) the server's guard tears
  // the connection down and calls fail with 13 INTERNAL.
  it(`${CALLS} hedged calls at ${CALLS_PER_SECOND}/s whose original attempt always loses: no call fails`, async () => {
    server = await FlakyServer.start({
      onAttempt: (info) =>
        info.metadata.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length === 0
          ? { delayMs: LOSER_MS }
          : { delayMs: 1 },
    });
    const events: RetryEvent[] = [];
    const interceptor = createRetryInterceptor(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.002s' }), {
      onEvent: (e) => events.push(e),
    });
    client = testClient(server.address, [interceptor]);

    const started = Date.now();
    const calls: Promise<number>[] = [];
    while (calls.length < CALLS) {
      const due = Math.floor(((Date.now() - started) * CALLS_PER_SECOND) / 1000) + 1;
      while (calls.length < Math.min(CALLS, due)) calls.push(unaryCall(client));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const codes = await Promise.all(calls);
    const seconds = (Date.now() - started) / 1000;

    const failed = codes.filter((code) => code !== grpc.status.OK).length;
    expect(failed, `calls failed out of ${CALLS}`).toBe(0);
    // Every call hedged, and its original attempt lost: more losers than the guard's burst of 1,000, at a rate
    // (300/s) well above its 33/s. (Only the burst is asserted: a loaded machine may stretch the run.)
    const hedges = events.filter((e) => e.type === 'attempt-start' && e.kind === 'hedge').length;
    expect(hedges).toBe(CALLS);
    expect(hedges).toBeGreaterThan(1000);
    // Cancelled at the commit (a loser left running carries the same reason, with `leftRunning`).
    const cancelled = events.filter(
      (e) => e.type === 'attempt-end' && e.cancelReason === 'other-attempt-committed' && !e.leftRunning,
    ).length;
    // The default limiter: a burst of 250, then 25 a second.
    expect(cancelled).toBeLessThanOrEqual(DEFAULT_CANCEL_BURST + Math.ceil(25 * seconds) + 1);
    // Every loser ends, cancelled or run to completion (those may end after their call).
    const attemptEnds = () => events.filter((e) => e.type === 'attempt-end').length;
    for (let waited = 0; attemptEnds() < 2 * CALLS && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(events.filter((e) => e.type === 'attempt-end').length).toBe(2 * CALLS);
    expect(server.activeAttempts()).toBe(0);
  }, 60_000);
});
