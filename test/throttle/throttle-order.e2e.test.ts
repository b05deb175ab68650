/**
 * The adaptive throttle belongs after the retry interceptor in `interceptors`, where every attempt passes through
 * it. Put before it, it marks the call options it hands on, and the retry interceptor below says so once.
 */
import * as grpc from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { createAdaptiveThrottleInterceptor } from '../../src/throttle/adaptive-throttle.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';
import { type CapturedWarning, captureWarnings } from '../helpers/warnings.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

let emitted: CapturedWarning[] = [];
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the order of the adaptive throttle and the retry interceptor', () => {
  it('throttle first: the throttle sees one call for three attempts, and the retry interceptor says so once', async () => {
    emitted = captureWarnings();
    const throttle = createAdaptiveThrottleInterceptor();
    const client = testClient(server.address, [
      throttle,
      createRetryInterceptor(retryConfig({ maxAttempts: 3 })),
    ]);
    try {
      server.script('order-wrong-1', [{ status: 'UNAVAILABLE' }, { status: 'UNAVAILABLE' }, {}]);
      server.script('order-wrong-2', [{}]);
      expect((await unary(client, 'order-wrong-1')).code).toBe(status.OK);
      expect((await unary(client, 'order-wrong-2')).code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(server.attempts('order-wrong-1')).toHaveLength(3);
    expect(throttle.counters()).toMatchObject({ calls: 2, accepted: 2, notAccepted: 0 });
    expect(emitted.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_THROTTLE_ORDER']);
    expect(emitted[0]?.message).toContain('Put the throttle after the retry interceptor');
  });

  it('retry interceptor first: every attempt passes the throttle, and nothing is said', async () => {
    emitted = captureWarnings();
    // UNAVAILABLE counts as accepted here, so that the throttle lets the retries through.
    const throttle = createAdaptiveThrottleInterceptor({ rejectedStatusCodes: ['RESOURCE_EXHAUSTED'] });
    const client = testClient(server.address, [
      createRetryInterceptor(retryConfig({ maxAttempts: 3 })),
      throttle,
    ]);
    try {
      server.script('order-right', [{ status: 'UNAVAILABLE' }, { status: 'UNAVAILABLE' }, {}]);
      expect((await unary(client, 'order-right')).code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(throttle.counters()).toMatchObject({ calls: 3, rejected: 0, accepted: 3 });
    expect(emitted).toEqual([]);
  });

  it("the throttle hands on a copy of the call options: the application's object is not marked", async () => {
    const seen: object[] = [];
    const throttle = createAdaptiveThrottleInterceptor();
    const client = testClient(server.address, [
      (options, next) => {
        seen.push(options);
        return new grpc.InterceptingCall(next(options));
      },
      throttle,
      (options, next) => {
        seen.push(options);
        return new grpc.InterceptingCall(next(options));
      },
    ]);
    try {
      server.script('order-copy', [{}]);
      expect((await unary(client, 'order-copy')).code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(seen[0]);
    expect(Object.getOwnPropertySymbols(seen[0])).toEqual([]);
    expect(Object.getOwnPropertySymbols(seen[1])).toHaveLength(1);
  });
});
