import { Client, credentials, type Interceptor, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor, type RetryEvent, RetryThrottle } from '../../src/index.js';
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

/**
 * One call through a client of `target` made for it and closed after, scripted on `server` when given: its status
 * code, and the attempts that server saw.
 */
async function oneCall(
  interceptor: Interceptor,
  target: string,
  server?: FlakyServer,
  script?: Parameters<FlakyServer['script']>[1],
): Promise<{ code: number; attempts: number }> {
  const client = testClient(target, [interceptor]);
  try {
    const c = id();
    if (server && script) server.script(c, script);
    const { code } = await unary(client, c);
    return { code, attempts: server?.attempts(c).length ?? 0 };
  } finally {
    client.close();
  }
}

/** `count` calls, each to its own target named by `targetOf(i)`, in batches of 125. */
async function callsToTargets(count: number, call: (i: number) => Promise<unknown>) {
  for (let i = 0; i < count; i += 125) {
    await Promise.all(Array.from({ length: Math.min(125, count - i) }, (_, j) => call(i + j)));
  }
}

/** What a client of server `s` through a target of its own, named `name`, connects to. */
const spelling = (name: string, s: FlakyServer) => `ipv4://${name}/127.0.0.1:${s.port}`;

beforeAll(async () => {
  [a, b] = await Promise.all([FlakyServer.start(), FlakyServer.start()]);
});
afterAll(async () => {
  await Promise.all([a.stop(), b.stop()]);
});

describe("the config's retryThrottling is kept per target (A6: per server name)", () => {
  it('an interceptor shared by clients of two servers: an outage of one does not throttle retries to the other', async () => {
    const refusedAt: string[] = [];
    const interceptor = createRetryInterceptor(throttled, {
      onEvent: (e) => {
        if (e.type === 'throttled') refusedAt.push(e.target);
      },
    });
    const blip = [{ status: UNAVAILABLE }, {}];
    expect(await oneCall(interceptor, a.address, a, failing)).toEqual({ code: UNAVAILABLE, attempts: 2 });
    // A is throttled now, for every client of it through this interceptor: its next failure is not retried.
    expect(await oneCall(interceptor, a.address, a, blip)).toEqual({ code: UNAVAILABLE, attempts: 1 });
    // B's throttle is its own and full: its failure is retried.
    expect(await oneCall(interceptor, b.address, b, blip)).toEqual({ code: status.OK, attempts: 2 });
    // Each refusal names the target whose throttle made it.
    expect(refusedAt).toEqual([`dns:${a.address}`, `dns:${a.address}`]);
  });

  it('a throttle is not forgotten while a call holds it, even when it still has all its tokens', async () => {
    const interceptor = createRetryInterceptor(throttled);
    // 999 other targets (spellings of server B), each with a full throttle: at the limit of 1,000 with X.
    await callsToTargets(999, (i) => oneCall(interceptor, spelling(`filler-${i}`, b)));
    const toX = testClient(spelling('x', a), [interceptor]);
    try {
      // X's calls are in flight with its throttle still full; a new target then comes, and full throttles go.
      const slow = Array.from({ length: 3 }, () => id());
      const slowFailures = slow.map((c) => {
        a.script(c, [{ status: UNAVAILABLE, delayMs: 300 }, ...failing]);
        return unary(toX, c);
      });
      await Promise.all(slow.map((c) => a.waitForAttempts(c, 1)));
      await oneCall(interceptor, spelling('newcomer', b));
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
    // The oldest target is drained; then X, whose call ended with its throttle full; then 998 drained ones.
    await oneCall(interceptor, spelling('oldest', a), a, failing);
    await oneCall(interceptor, spelling('x', b));
    await callsToTargets(998, (i) => oneCall(interceptor, spelling(`drained-${i}`, a), a, failing));
    // A new target: X's full throttle, held by no call, is forgotten, and the oldest drained one is kept.
    await oneCall(interceptor, spelling('newcomer', b));
    const next = await oneCall(interceptor, spelling('oldest', a), a, [{ status: UNAVAILABLE }, {}]);
    expect(next).toEqual({ code: UNAVAILABLE, attempts: 1 });
  }, 30_000);

  it("call-start and call-end name the call's target, as grpc-js's getTarget() does, whatever the interceptor keeps per target", async () => {
    const targets: string[] = [];
    const endTargets: string[] = [];
    const onEvent = (e: RetryEvent) => {
      if (e.type === 'call-start') targets.push(e.target);
      if (e.type === 'call-end') endTargets.push(e.target);
    };
    // The second interceptor keeps nothing per target (no retryThrottling, no cancel-rate limit): its listener alone
    // has the target read.
    for (const [config, options] of [
      [throttled, { onEvent }],
      [retryConfig(), { onEvent, cancelRateLimit: false }],
    ] as const) {
      const interceptor = createRetryInterceptor(config, options);
      await oneCall(interceptor, a.address);
      await oneCall(interceptor, spelling('x', b));
    }
    expect(targets).toEqual([
      `dns:${a.address}`,
      `ipv4://x/127.0.0.1:${b.port}`,
      `dns:${a.address}`,
      `ipv4://x/127.0.0.1:${b.port}`,
    ]);
    expect(endTargets).toEqual(targets);
    const bare = new Client(a.address, credentials.createInsecure());
    expect(bare.getChannel().getTarget()).toBe(`dns:${a.address}`);
    bare.close();
  });

  it('a gate given as an option stays one gate for every target', async () => {
    const gate = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.1 });
    const interceptor = createRetryInterceptor(retryConfig(), { gate });
    await oneCall(interceptor, a.address, a, failing);
    expect(gate.tokens).toBe(2);
    const blip = [{ status: UNAVAILABLE }, {}];
    expect(await oneCall(interceptor, b.address, b, blip)).toEqual({ code: UNAVAILABLE, attempts: 1 });
  });
});
