/**
 * The rest of the method config, over a real network: `timeout` becomes the deadline the server sees, a fractional
 * timeout means what proto3 JSON says, `waitForReady` waits for a server that is not there yet, and
 * `perAttemptRecvTimeout` cancels a silent attempt (the server sees it) and retries. Rules are proved under fake
 * time in test/engine; these check what only a network shows.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { createFlakyTestClient, FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  clientStream,
  eventsOf,
  type FlakyClient,
  retryConfig,
  serverStream,
  startHarness,
  unary,
} from '../helpers/harness.js';

const FLAKY = 'grpc_retry_hedging.testing.v1.FlakyTest';
let server: FlakyServer;
let n = 0;
const id = () => `sc-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

const timeoutOnly = (timeout: string, extra: Record<string, unknown> = {}) => ({
  methodConfig: [{ name: [{ service: FLAKY }], timeout, ...extra }],
});

describe('method timeout', () => {
  it('"0.3s": a 2 s server call ends with DEADLINE_EXCEEDED, and the server saw a deadline 300 ms out', async () => {
    const h = await startHarness(timeoutOnly('0.3s'), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 2000 }]);
      const started = Date.now();
      const out = await unary(h.client, c);
      expect(out.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(Date.now() - started).toBeLessThan(1800);
      const [attempt] = server.attempts(c);
      const told = (attempt?.deadline as number) - (attempt?.arrivedAt as number);
      // grpc-timeout is sent in whole units; what arrives is at most 300 ms and well above grpc-js's 3 ns bug.
      expect(told).toBeGreaterThan(100);
      expect(told).toBeLessThanOrEqual(310);
    } finally {
      await h.close();
    }
  });

  it('"1.500s" under a retry policy: one deadline over every attempt; a sooner caller deadline wins', async () => {
    const config = retryConfig({ initialBackoff: '0.05s' }, {});
    (config as { methodConfig: Record<string, unknown>[] }).methodConfig[0]!.timeout = '1.500s';
    const h = await startHarness(config, {}, server);
    try {
      const c = id();
      server.script(c, [{ status: grpc.status.UNAVAILABLE }, { status: grpc.status.UNAVAILABLE }, {}]);
      expect((await unary(h.client, c)).code).toBe(grpc.status.OK);
      const deadlines = server.attempts(c).map((a) => a.deadline as number);
      expect(deadlines).toHaveLength(3);
      // The same absolute deadline on every attempt (to grpc-timeout's rounding), not 1.5 s from each attempt.
      expect(Math.max(...deadlines) - Math.min(...deadlines)).toBeLessThan(40);
      const sooner = id();
      server.script(sooner, [{}]);
      await unary(h.client, sooner, undefined, { deadlineMs: 400 });
      const [one] = server.attempts(sooner);
      expect((one?.deadline as number) - (one?.arrivedAt as number)).toBeLessThanOrEqual(410);
    } finally {
      await h.close();
    }
  });
});

describe('waitForReady', () => {
  it('a call made while no server listens waits for it; without waitForReady it fails fast', async () => {
    const probe = await FlakyServer.start();
    const port = probe.port;
    await probe.stop();
    const client = (wait: boolean) =>
      createFlakyTestClient(`127.0.0.1:${port}`, {
        interceptors: [createRetryInterceptor(timeoutOnly('5s', { waitForReady: wait }))],
      }) as unknown as FlakyClient;
    const failFast = client(false);
    const waiting = client(true);
    let late: FlakyServer | undefined;
    try {
      const started = Date.now();
      expect((await unary(failFast, id())).code).toBe(grpc.status.UNAVAILABLE);
      expect(Date.now() - started).toBeLessThan(3000);
      const c = id();
      const call = unary(waiting, c);
      await new Promise((resolve) => setTimeout(resolve, 400));
      late = await FlakyServer.start({ port, scripts: { [c]: [{}] } });
      const out = await call;
      expect(out.code, out.error?.details).toBe(grpc.status.OK);
      expect(late.attempts(c)).toHaveLength(1);
    } finally {
      failFast.close();
      waiting.close();
      await late?.stop();
    }
  });
});

describe('perAttemptRecvTimeout', () => {
  const policy = (maxAttempts = 3) =>
    retryConfig({ maxAttempts, initialBackoff: '0.02s', perAttemptRecvTimeout: '0.2s' });

  it.each([
    ['unary', (h: Awaited<ReturnType<typeof startHarness>>, c: string) => unary(h.client, c)],
    [
      'server streaming',
      (h: Awaited<ReturnType<typeof startHarness>>, c: string) => serverStream(h.client, c),
    ],
    [
      'client streaming',
      (h: Awaited<ReturnType<typeof startHarness>>, c: string) =>
        clientStream(h.client, c, [{ payload: 'a' }]),
    ],
    [
      'bidi',
      (h: Awaited<ReturnType<typeof startHarness>>, c: string) => bidi(h.client, c, [{ payload: 'a' }]),
    ],
  ])('%s: a silent attempt is cancelled (the server sees it) and the retry succeeds', async (_name, call) => {
    const h = await startHarness(policy(), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 3000, sendHeaders: false }, {}]);
      const out = await call(h, c);
      expect(out.code, out.error?.details).toBe(grpc.status.OK);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true, 3000);
      expect(server.attempts(c)).toHaveLength(2);
      expect(eventsOf(h.events, 'attempt-end')[0]).toMatchObject({
        attempt: 1,
        cancelReason: 'per-attempt-timeout',
      });
    } finally {
      await h.close();
    }
  });

  it('with no attempt left the call ends DEADLINE_EXCEEDED, saying which limit was hit on which attempt', async () => {
    const h = await startHarness(policy(2), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 3000, sendHeaders: false }]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(out.error?.details).toMatch(/per-attempt receive timeout \(200 ms\) hit on attempt 2/);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      await h.close();
    }
  });

  it('response headers stop the timer: a slow answer after early headers is not cut', async () => {
    const h = await startHarness(policy(), {}, server);
    try {
      const c = id();
      server.script(c, [{ delayMs: 600, sendHeaders: true }]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(grpc.status.OK);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
