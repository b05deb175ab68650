import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  callMetadata,
  cancelDuringBackoff,
  eventsOf,
  type Harness,
  retryConfig,
  startHarness,
  unary,
} from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
let server: FlakyServer;
let h: Harness;
let n = 0;
const id = () => `call-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('unary retries', () => {
  beforeEach(async () => {
    h = await startHarness(retryConfig(), {}, server);
    return () => h.close();
  });

  it('fails twice, then succeeds on the third attempt', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, { status: UNAVAILABLE }, {}]);
    const out = await unary(h.client, c, { payload: 'x' });
    expect(out.error).toBeUndefined();
    expect(out.responses).toEqual([expect.objectContaining({ payload: 'x', attempt: 3 })]);
    expect(server.attempts(c).map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
    expect(out.statusEvents).toBe(1);
    expect(out.trailers?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
  });

  it('puts the application metadata on every attempt unchanged', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, {}]);
    const md = callMetadata(c, { 'x-app': 'v1' });
    md.add('x-multi', 'a');
    md.add('x-multi', 'b');
    await unary(h.client, c, { payload: 'x' }, { metadata: md });
    const attempts = server.attempts(c);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a.metadata['x-app']).toBe('v1');
      // grpc-js joins repeated values on the wire; what matters is that every attempt carries the same
      expect(a.metadata['x-multi']).toEqual(attempts[0]?.metadata['x-multi']);
      expect(String(a.metadata['x-multi'])).toMatch(/a.*b/);
    }
    expect(md.get('grpc-previous-rpc-attempts')).toEqual([]);
  });

  it('does not retry a non-retryable code', async () => {
    const c = id();
    server.script(c, [{ status: status.INVALID_ARGUMENT }, {}]);
    const out = await unary(h.client, c);
    expect(out.error?.code).toBe(status.INVALID_ARGUMENT);
    expect(server.attempts(c)).toHaveLength(1);
    expect(out.statusEvents).toBe(1);
  });

  it('stops after maxAttempts and returns the last status', async () => {
    const c = id();
    server.script(c, [
      { status: UNAVAILABLE, details: 'first' },
      { status: UNAVAILABLE, details: 'last' },
    ]);
    const local = await startHarness(retryConfig({ maxAttempts: 3 }), {}, server);
    try {
      const out = await unary(local.client, c);
      expect(out.error?.code).toBe(UNAVAILABLE);
      expect(out.error?.details).toBe('last');
      expect(server.attempts(c)).toHaveLength(3);
    } finally {
      await local.close();
    }
  });

  it('clamps maxAttempts to 5 by default and to a custom limit', async () => {
    const big = await startHarness(retryConfig({ maxAttempts: 10 }), {}, server);
    const small = await startHarness(retryConfig({ maxAttempts: 10 }), { maxAttemptsLimit: 3 }, server);
    try {
      const c1 = id();
      server.script(c1, [{ status: UNAVAILABLE }]);
      await unary(big.client, c1);
      expect(server.attempts(c1)).toHaveLength(5);
      const c2 = id();
      server.script(c2, [{ status: UNAVAILABLE }]);
      await unary(small.client, c2);
      expect(server.attempts(c2)).toHaveLength(3);
    } finally {
      await big.close();
      await small.close();
    }
  });
});

describe('pushback', () => {
  it('waits exactly the pushback delay, then resets the backoff to initialBackoff', async () => {
    const local = await startHarness(
      retryConfig({ initialBackoff: '0.04s', maxBackoff: '10s', backoffMultiplier: 4 }),
      { random: () => 0.5 },
      server,
    );
    try {
      const c = id();
      server.script(c, [
        { status: UNAVAILABLE },
        { status: UNAVAILABLE, pushback: '300' },
        { status: UNAVAILABLE },
        {},
      ]);
      const out = await unary(local.client, c);
      expect(out.error).toBeUndefined();
      const scheduled = eventsOf(local.events, 'retry-scheduled').map((e) => [e.reason, e.delayMs]);
      // backoff n=1 (40), pushback 300, then backoff restarts at n=1 (40) instead of n=3 (640)
      expect(scheduled).toEqual([
        ['backoff', 40],
        ['pushback', 300],
        ['backoff', 40],
      ]);
      // The timing itself (300 ms exactly, then 40 again) is proved under fake time in test/engine.
      expect(server.attempts(c)).toHaveLength(4);
    } finally {
      await local.close();
    }
  });

  it.each(['-1', 'abc', '10abc', '', '1.5', '007'])('pushback %j means do not retry', async (value) => {
    const local = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, pushback: value }, {}]);
      const out = await unary(local.client, c);
      expect(out.error?.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await local.close();
    }
  });

  it('no retry when attempts are exhausted, whatever the pushback says', async () => {
    const local = await startHarness(retryConfig({ maxAttempts: 2 }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { status: UNAVAILABLE, pushback: '0' }, {}]);
      const out = await unary(local.client, c);
      expect(out.error?.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      await local.close();
    }
  });
});

describe('throttling', () => {
  it('follows the exact A6 token trace over a sequence of calls', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.5 });
    const local = await startHarness(retryConfig(), { gate: throttle }, server);
    const run = async (script: Parameters<FlakyServer['script']>[1]) => {
      const c = id();
      server.script(c, script);
      const out = await unary(local.client, c);
      return { attempts: server.attempts(c).length, tokens: throttle.tokens, code: out.code };
    };
    try {
      const fail = [{ status: UNAVAILABLE }];
      expect(await run(fail)).toEqual({ attempts: 2, tokens: 2, code: UNAVAILABLE }); // 4→3 retry, 3→2 throttled
      expect(await run(fail)).toEqual({ attempts: 1, tokens: 1, code: UNAVAILABLE }); // 2→1 throttled
      expect(await run([{ status: status.INVALID_ARGUMENT }])).toEqual({
        attempts: 1,
        tokens: 1,
        code: status.INVALID_ARGUMENT,
      }); // non-retryable: tokens untouched
      expect(await run([{ status: status.INVALID_ARGUMENT, pushback: '-1' }])).toEqual({
        attempts: 1,
        tokens: 0,
        code: status.INVALID_ARGUMENT,
      }); // do-not-retry pushback counts as a failure
      expect(await run([{}])).toMatchObject({ attempts: 1, tokens: 0.5 });
      for (let i = 0; i < 4; i++) await run([{}]);
      expect(throttle.tokens).toBe(2.5);
      // 2.5 → 1.5 after the failure: not above 2, so no retry
      expect(await run([{ status: UNAVAILABLE }, {}])).toEqual({
        attempts: 1,
        tokens: 1.5,
        code: UNAVAILABLE,
      });
      const throttled = eventsOf(local.events, 'throttled');
      expect(throttled.map((e) => e.tokens)).toEqual([2, 1, 1.5]);
    } finally {
      await local.close();
    }
  });

  it('a committed call that fails with a retryable code still takes a token', async () => {
    const throttle = new RetryThrottle({ maxTokens: 10, tokenRatio: 1 });
    const local = await startHarness(retryConfig(), { gate: throttle }, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, sendHeaders: true }, {}]);
      const out = await unary(local.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
      expect(throttle.tokens).toBe(9);
    } finally {
      await local.close();
    }
  });

  it('a shared throttle stops retries on a second interceptor too', async () => {
    const throttle = new RetryThrottle({ maxTokens: 2, tokenRatio: 0.1 });
    const a = await startHarness(retryConfig(), { gate: throttle }, server);
    const b = await startHarness(retryConfig(), { gate: throttle }, server);
    try {
      const c1 = id();
      server.script(c1, [{ status: UNAVAILABLE }]);
      await unary(a.client, c1); // 2 → 1: throttled at once
      expect(server.attempts(c1)).toHaveLength(1);
      const c2 = id();
      server.script(c2, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(b.client, c2);
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c2)).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('retryThrottling from the config builds a throttle per interceptor', async () => {
    const local = await startHarness(
      retryConfig({}, { retryThrottling: { maxTokens: 2, tokenRatio: 1 } }),
      {},
      server,
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      await unary(local.client, c);
      expect(server.attempts(c)).toHaveLength(1);
    } finally {
      await local.close();
    }
  });
});

describe('commit, deadline and cancellation', () => {
  beforeEach(async () => {
    h = await startHarness(retryConfig({ initialBackoff: '5s', maxBackoff: '5s' }), {}, server);
    return () => h.close();
  });

  it('response headers commit the call: a later failure is not retried', async () => {
    const fast = await startHarness(retryConfig(), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, sendHeaders: true }, {}]);
      const out = await unary(fast.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(out.headers?.get('x-flaky-attempt')).toEqual(['1']);
      expect(server.attempts(c)).toHaveLength(1);
      expect(eventsOf(fast.events, 'committed')).toEqual([
        expect.objectContaining({ attempt: 1, reason: 'headers' }),
      ]);
    } finally {
      await fast.close();
    }
  });

  it('ends with DEADLINE_EXCEEDED when the deadline passes during the backoff', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, {}]);
    const started = Date.now();
    const out = await unary(h.client, c, undefined, { deadlineMs: 300 });
    expect(out.code).toBe(status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(server.attempts(c)).toHaveLength(1);
    expect(out.statusEvents).toBe(1);
  });

  it("a deadline that ends a later attempt: grpc-js's time is the attempt's, and the attempts before it are counted", async () => {
    const fast = await startHarness(retryConfig({ initialBackoff: '0.2s', maxBackoff: '0.2s' }), {}, server);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { delayMs: 5000 }]);
      const out = await unary(fast.client, c, undefined, { deadlineMs: 600 });
      expect(out.code).toBe(status.DEADLINE_EXCEEDED);
      expect(server.attempts(c)).toHaveLength(2);
      // grpc-js timed the second attempt from its own start, some 0.2-0.4 s after the call's.
      expect(out.error?.details).toMatch(
        /^Deadline exceeded,previous attempts: 1,current attempt: 0\.\d{3}s/,
      );
      expect(out.error?.details).not.toMatch(/after/);
    } finally {
      await fast.close();
    }
  });

  it('cancel during the backoff ends the call once with CANCELLED and sends nothing more', async () => {
    const c = id();
    server.script(c, [{ status: UNAVAILABLE }, {}]);
    const out = await unary(h.client, c, undefined, cancelDuringBackoff());
    expect(out.code).toBe(status.CANCELLED);
    expect(out.statusEvents).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.attempts(c)).toHaveLength(1);
    expect(eventsOf(h.events, 'call-end')).toHaveLength(1);
  });

  it('cancel while an attempt is in flight reaches the server', async () => {
    const c = id();
    server.script(c, [{ delayMs: 5000 }]);
    const out = await unary(h.client, c, undefined, {
      onCall: (call) => {
        void server.waitForAttempts(c, 1).then(() => call.cancel());
      },
    });
    expect(out.code).toBe(status.CANCELLED);
    await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
  });

  it('passes methods without a policy straight through', async () => {
    const only = await startHarness(
      {
        methodConfig: [
          {
            name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest', method: 'Bidi' }],
            retryPolicy: {
              maxAttempts: 3,
              initialBackoff: '0.01s',
              maxBackoff: '0.01s',
              backoffMultiplier: 1,
              retryableStatusCodes: [14],
            },
          },
        ],
      },
      {},
      server,
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(only.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
      expect(only.events).toEqual([]);
      expect(out.trailers?.get('grpc-previous-rpc-attempts')).toEqual([]);
    } finally {
      await only.close();
    }
  });
});
