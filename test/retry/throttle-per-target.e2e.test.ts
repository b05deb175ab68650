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

  it('a throttle is not forgotten while a call holds it, even when it still has all its tokens', async () => {
    const interceptor = createRetryInterceptor(throttled);
    const through = (target: string) => testClient(target, [interceptor]);
    // 999 other targets (spellings of server B), each with a full throttle: at the limit of 1,000 with X.
    for (let i = 0; i < 999; i += 111) {
      await Promise.all(
        Array.from({ length: 111 }, async (_, j) => {
          const client = through(`ipv4://filler-${i + j}/127.0.0.1:${b.port}`);
          try {
            await unary(client, id());
          } finally {
            client.close();
          }
        }),
      );
    }
    const toX = through(`ipv4://x/127.0.0.1:${a.port}`);
    try {
      // X's calls are in flight with its throttle still full; a new target then comes, and full throttles go.
      const slow = Array.from({ length: 3 }, () => id());
      const slowFailures = slow.map((c) => {
        a.script(c, [{ status: UNAVAILABLE, delayMs: 300 }, ...failing]);
        return unary(toX, c);
      });
      await Promise.all(slow.map((c) => a.waitForAttempts(c, 1)));
      const newcomer = through(`ipv4://newcomer/127.0.0.1:${b.port}`);
      await unary(newcomer, id());
      newcomer.close();
      await Promise.all(slowFailures);
      // Their failures went to the throttle X's next call reads: it is throttled.
      const next = id();
      a.script(next, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(toX, next)).code).toBe(UNAVAILABLE);
      expect(a.attempts(next)).toHaveLength(1);
    } finally {
      toX.close();
    }
  }, 30_000);

  it("once a call ends it no longer holds its target's throttle: a full one goes before a drained one", async () => {
    const interceptor = createRetryInterceptor(throttled);
    const through = (target: string) => testClient(target, [interceptor]);
    const drain = async (target: string) => {
      const client = through(target);
      try {
        const c = id();
        a.script(c, failing);
        await unary(client, c);
      } finally {
        client.close();
      }
    };
    // The oldest target is drained; then X, whose call ended with its throttle full; then 998 drained ones.
    await drain(`ipv4://oldest/127.0.0.1:${a.port}`);
    const toX = through(`ipv4://x/127.0.0.1:${b.port}`);
    await unary(toX, id());
    toX.close();
    for (let i = 0; i < 998; i += 125) {
      await Promise.all(
        Array.from({ length: Math.min(125, 998 - i) }, (_, j) =>
          drain(`ipv4://drained-${i + j}/127.0.0.1:${a.port}`),
        ),
      );
    }
    // A new target: X's full throttle, held by no call, is forgotten, and the oldest drained one is kept.
    const newcomer = through(`ipv4://newcomer/127.0.0.1:${b.port}`);
    await unary(newcomer, id());
    newcomer.close();
    const oldest = through(`ipv4://oldest/127.0.0.1:${a.port}`);
    try {
      const next = id();
      a.script(next, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(oldest, next)).code).toBe(UNAVAILABLE);
      expect(a.attempts(next)).toHaveLength(1);
    } finally {
      oldest.close();
    }
  }, 30_000);

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
