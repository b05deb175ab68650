import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor, RetryThrottle } from '../../src/index.js';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
// Tokens 4, so retries stop below 2: one call failing twice takes its server's throttle down to the threshold.
const throttled = retryConfig({}, { retryThrottling: { maxTokens: 4, tokenRatio: 0.1 } });
const failing = Array.from({ length: 5 }, () => ({ status: UNAVAILABLE }));

let a: FlakyServer;
let b: FlakyServer;
let n = 0;
const id = () => `per-target-${++n}`;

beforeAll(async () => {
  [a, b] = await Promise.all([FlakyServer.start(), FlakyServer.start()]);
});
afterAll(async () => {
  await Promise.all([a.stop(), b.stop()]);
});

describe("the config's retryThrottling is kept per target (A6: per server name)", () => {
  it('an interceptor shared by clients of two servers: an outage of one does not throttle retries to the other', async () => {
    const interceptor = createRetryInterceptor(throttled);
    const toA = testClient(a.address, [interceptor]);
    const toB = testClient(b.address, [interceptor]);
    try {
      const down = id();
      a.script(down, failing);
      expect((await unary(toA, down)).code).toBe(UNAVAILABLE);
      expect(a.attempts(down)).toHaveLength(2);

      // A is throttled now: its next failure is not retried.
      const stillDown = id();
      a.script(stillDown, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(toA, stillDown)).code).toBe(UNAVAILABLE);
      expect(a.attempts(stillDown)).toHaveLength(1);

      // B's throttle is its own and full: its failure is retried.
      const blip = id();
      b.script(blip, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(toB, blip);
      expect(out.error).toBeUndefined();
      expect(b.attempts(blip)).toHaveLength(2);
    } finally {
      toA.close();
      toB.close();
    }
  });

  it('two clients of the same server through one interceptor share its throttle', async () => {
    const interceptor = createRetryInterceptor(throttled);
    const first = testClient(a.address, [interceptor]);
    const second = testClient(a.address, [interceptor]);
    try {
      const down = id();
      a.script(down, failing);
      await unary(first, down);
      expect(a.attempts(down)).toHaveLength(2);
      const next = id();
      a.script(next, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(second, next)).code).toBe(UNAVAILABLE);
      expect(a.attempts(next)).toHaveLength(1);
    } finally {
      first.close();
      second.close();
    }
  });

  it('a gate given as an option stays one gate for every target', async () => {
    const gate = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.1 });
    const interceptor = createRetryInterceptor(retryConfig(), { gate });
    const toA = testClient(a.address, [interceptor]);
    const toB = testClient(b.address, [interceptor]);
    try {
      const down = id();
      a.script(down, failing);
      await unary(toA, down);
      expect(gate.tokens).toBe(2);
      const blip = id();
      b.script(blip, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(toB, blip)).code).toBe(UNAVAILABLE);
      expect(b.attempts(blip)).toHaveLength(1);
    } finally {
      toA.close();
      toB.close();
    }
  });
});
