import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FlakyServer, loadFlakyTestService, seededRandom } from '../../src/testing/index.js';
import {
  type AdaptiveThrottleEvent,
  createAdaptiveThrottleInterceptor,
  LOCAL_REJECTION_DETAILS_PREFIX,
} from '../../src/throttle/adaptive-throttle.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import {
  callMetadata,
  eventsOf,
  type FlakyClient,
  hedgingConfig,
  retryConfig,
  testClient,
  unary,
} from '../helpers/harness.js';

const UNAVAILABLE = grpc.status.UNAVAILABLE;
const _Service = loadFlakyTestService();
let server: FlakyServer;
let n = 0;
const id = () => `throttle-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

function client(interceptors: grpc.Interceptor[]): FlakyClient {
  return testClient(server.address, interceptors);
}

/** A random source that returns the given values in turn, then `rest`. */
function randoms(values: number[], rest = 0.999): () => number {
  let i = 0;
  return () => (i < values.length ? values[i++]! : rest);
}

describe('createAdaptiveThrottleInterceptor against a real server', () => {
  it('lets a cold client through, then rejects locally with UNAVAILABLE once the server has refused', async () => {
    const events: AdaptiveThrottleEvent[] = [];
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0, onEvent: (e) => events.push(e) });
    const c = client([throttle]);
    const first = id();
    server.script(first, [{ status: UNAVAILABLE, details: 'shed' }]);
    const out1 = await unary(c, first);
    expect(out1.code).toBe(UNAVAILABLE);
    expect(out1.error?.details).toBe('shed');
    expect(server.attempts(first)).toHaveLength(1);

    // One refusal: P = 1/9, and this random source always draws 0, so the next call is rejected locally.
    const second = id();
    server.script(second, [{}]);
    const out2 = await unary(c, second);
    expect(out2.code).toBe(UNAVAILABLE);
    expect(out2.error?.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX)).toBe(true);
    expect(out2.error?.details).toContain('grpc_retry_hedging.testing.v1.FlakyTest');
    expect(out2.statusEvents).toBe(1);
    expect(server.attempts(second)).toHaveLength(0);

    expect(events).toEqual([
      {
        type: 'adaptive-throttle-rejected',
        method: '/grpc_retry_hedging.testing.v1.FlakyTest/Unary',
        key: 'grpc_retry_hedging.testing.v1.FlakyTest',
        probability: 1 / 9,
        requests: 1,
        accepts: 0,
        retry: false,
      },
    ]);
    expect(throttle.counters()).toEqual({ calls: 2, rejected: 1, accepted: 0, notAccepted: 1, cancelled: 0 });
    expect(throttle.state()['grpc_retry_hedging.testing.v1.FlakyTest']).toEqual({
      requests: 2,
      accepts: 0,
      probability: 2 / 10,
    });
    c.close();
  });

  it('counts other statuses as accepted by default, and rejectedStatusCodes changes that', async () => {
    const byDefault = createAdaptiveThrottleInterceptor({ random: () => 0 });
    const strict = createAdaptiveThrottleInterceptor({
      random: () => 0,
      rejectedStatusCodes: ['invalid_argument', 14],
    });
    for (const throttle of [byDefault, strict]) {
      const c = client([throttle]);
      for (let i = 0; i < 3; i++) {
        const call = id();
        server.script(call, [{ status: grpc.status.INVALID_ARGUMENT }]);
        await unary(c, call);
      }
      c.close();
    }
    expect(byDefault.counters()).toMatchObject({ calls: 3, rejected: 0, accepted: 3, notAccepted: 0 });
    // strict: the first refusal makes P > 0, and a random source of 0 then rejects every call.
    expect(strict.counters()).toMatchObject({ calls: 3, rejected: 2, accepted: 0, notAccepted: 1 });
  });

  it('does not count a call the client cancelled', async () => {
    const throttle = createAdaptiveThrottleInterceptor();
    const c = client([throttle]);
    const call = id();
    server.script(call, [{ delayMs: 5000 }]);
    const out = await unary(c, call, undefined, {
      onCall: (live) => {
        void server.waitForAttempts(call, 1).then(() => live.cancel());
      },
    });
    expect(out.code).toBe(grpc.status.CANCELLED);
    expect(throttle.counters()).toMatchObject({ calls: 1, cancelled: 1, accepted: 0, notAccepted: 0 });
    expect(throttle.state()['grpc_retry_hedging.testing.v1.FlakyTest']?.requests).toBe(0);
    c.close();
  });

  it('composes after the retry interceptor: every attempt is throttled, a local rejection ends the call', async () => {
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const retryEvents: RetryEvent[] = [];
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0 });
    const c = client([
      createRetryInterceptor(retryConfig(), { gate, onEvent: (e) => retryEvents.push(e) }),
      throttle,
    ]);
    const call = id();
    server.script(call, [{ status: UNAVAILABLE, details: 'db shard 7 down' }]);
    const out = await unary(c, call);
    // Attempt 1 reached the server and was refused; retry 1 went through the throttle, which rejected it (P = 1/9).
    expect(server.attempts(call)).toHaveLength(1);
    // The call reports the server's failure it was retrying, as a retry the gate refuses does: not the client's
    // own refusal, which never reached the server.
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.error?.details).toBe('db shard 7 down');
    expect(eventsOf(retryEvents, 'attempt-start').map((e) => e.kind)).toEqual(['original', 'retry']);
    expect(eventsOf(retryEvents, 'attempt-end')[1]?.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX)).toBe(
      true,
    );
    expect(eventsOf(retryEvents, 'call-end')[0]).toMatchObject({
      attempts: 2,
      reason: 'throttled',
      details: 'db shard 7 down',
    });
    // The local rejection carries a do-not-retry pushback: the engine does not retry it; it says nothing of the
    // server, so the gate counts the server's refusal alone: 10 − 1.
    expect(gate.tokens).toBe(9);
    expect(throttle.counters()).toMatchObject({ calls: 2, rejected: 1, notAccepted: 1 });
    c.close();
  });

  it('a hedge rejected locally after the server refused the first attempt: the call reports the server', async () => {
    const retryEvents: RetryEvent[] = [];
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0.999 });
    const c = client([
      createRetryInterceptor(hedgingConfig({ maxAttempts: 2, hedgingDelay: '5s' }), {
        onEvent: (e) => retryEvents.push(e),
      }),
      throttle,
    ]);
    const call = id();
    server.script(call, [{ status: UNAVAILABLE, details: 'replica draining' }]);
    const out = await unary(c, call);
    // The non-fatal failure sends the hedge at once; the throttle (P = 1/9 now) rejects it, as a retry or hedge.
    expect(server.attempts(call)).toHaveLength(1);
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.error?.details).toBe('replica draining');
    expect(eventsOf(retryEvents, 'attempt-start').map((e) => e.kind)).toEqual(['original', 'hedge']);
    expect(eventsOf(retryEvents, 'call-end')[0]).toMatchObject({ attempts: 2, details: 'replica draining' });
    expect(throttle.counters()).toMatchObject({ calls: 2, rejected: 1, notAccepted: 1 });
    c.close();
  });

  it('a first attempt rejected locally has no server failure to report: the call ends with the rejection', async () => {
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0 });
    const c = client([createRetryInterceptor(retryConfig()), throttle]);
    const refused = id();
    server.script(refused, [{ status: UNAVAILABLE }]);
    await unary(c, refused); // P = 1/9 from here on; the draw 0 rejects the next call's first attempt
    const next = id();
    server.script(next, [{}]);
    const out = await unary(c, next);
    expect(server.attempts(next)).toHaveLength(0);
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.error?.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX)).toBe(true);
    c.close();
  });

  it('counts an attempt the retry engine gave up on (perAttemptRecvTimeout) as not accepted', async () => {
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0.999, retries: 'same-probability' });
    const c = client([createRetryInterceptor(retryConfig({ perAttemptRecvTimeout: '0.5s' })), throttle]);
    const call = id();
    server.script(call, [{ delayMs: 2000 }, {}]);
    const out = await unary(c, call);
    expect(out.error).toBeUndefined();
    expect(server.attempts(call)).toHaveLength(2);
    expect(throttle.counters()).toMatchObject({ calls: 2, accepted: 1, notAccepted: 1, cancelled: 0 });
    c.close();
  });

  it('a retry due after the client was closed ends the call with UNAVAILABLE, as without the throttle, and throws nowhere', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      // 'same-probability' with draws of 0.999: a retry would be let through; its next call, made with it, is refused.
      const throttle = createAdaptiveThrottleInterceptor({
        random: () => 0.999,
        retries: 'same-probability',
      });
      const events: RetryEvent[] = [];
      const config = retryConfig({ initialBackoff: '0.3s', maxBackoff: '0.3s' });
      const c = client([createRetryInterceptor(config, { onEvent: (e) => events.push(e) }), throttle]);
      const call = id();
      server.script(call, [{ status: UNAVAILABLE }, {}]);
      const done = unary(c, call);
      while (!events.some((e) => e.type === 'attempt-end')) await new Promise((r) => setTimeout(r, 5));
      c.close(); // during the backoff: the retry cannot start on the closed channel
      const never = new Promise<'never ended'>((r) => setTimeout(() => r('never ended'), 3_000).unref());
      const out = await Promise.race([done, never]);
      if (out === 'never ended') throw new Error(`the call never ended; uncaught: ${String(uncaught)}`);
      expect(out.code).toBe(UNAVAILABLE);
      expect(out.error?.details).toBe('could not start attempt 2: Channel has been shut down');
      expect(out.statusEvents).toBe(1);
      expect(server.attempts(call)).toHaveLength(1);
      // As the engine reports a retry it could not make without the throttle: one attempt went.
      expect(eventsOf(events, 'call-end')).toEqual([
        expect.objectContaining({ code: UNAVAILABLE, attempts: 1 }),
      ]);
      await new Promise((r) => setTimeout(r, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('a call made on a closed client throws at the call site and never calls back, as it does without the throttle', async () => {
    /** What a unary call on a closed client with `interceptors` does: what it throws, and what it calls back with. */
    const onClosed = async (interceptors: grpc.Interceptor[]) => {
      const c = client(interceptors);
      c.close();
      const called: Array<number | undefined> = [];
      let thrown: string | undefined;
      try {
        c.Unary(
          { payload: 'x' },
          callMetadata(id()),
          { deadline: Date.now() + 300 },
          (error: grpc.ServiceError | null) => called.push(error?.code),
        );
      } catch (error) {
        thrown = (error as Error).message;
      }
      await new Promise((r) => setTimeout(r, 500)); // past the deadline
      return { thrown, called };
    };
    const bare = await onClosed([]);
    expect(bare).toEqual({ thrown: 'Channel has been shut down', called: [] });
    expect(await onClosed([createAdaptiveThrottleInterceptor()])).toEqual(bare);
    expect(await onClosed([createRetryInterceptor(retryConfig())])).toEqual(bare);
    expect(
      await onClosed([createRetryInterceptor(retryConfig()), createAdaptiveThrottleInterceptor()]),
    ).toEqual(bare);
  });

  it("below the retry interceptor, leaves it the call's target: events, per-target throttling and metrics keep it", async () => {
    const targets: string[] = [];
    const onEvent = (e: RetryEvent) => {
      if (e.type === 'call-start') targets.push(e.target);
    };
    const throttle = createAdaptiveThrottleInterceptor();
    const c = client([createRetryInterceptor(retryConfig(), { onEvent }), throttle]);
    const call = id();
    server.script(call, [{}]);
    expect((await unary(c, call)).error).toBeUndefined();
    expect(targets).toEqual([`dns:${server.address}`]);
    c.close();
  });

  it('rejects a retry while it rejects at all, however the draw falls (retries: reject-while-throttling)', async () => {
    const events: AdaptiveThrottleEvent[] = [];
    const throttle = createAdaptiveThrottleInterceptor({
      random: () => 0.999,
      onEvent: (e) => events.push(e),
    });
    const c = client([createRetryInterceptor(retryConfig()), throttle]);
    const call = id();
    server.script(call, [{ status: UNAVAILABLE }, {}]);
    const out = await unary(c, call);
    // Attempt 1 was refused (P = 1/9 now); the retry carries grpc-previous-rpc-attempts and is rejected locally.
    expect(out.code).toBe(UNAVAILABLE);
    expect(out.error?.details).toBe('scripted failure (attempt 1)');
    expect(server.attempts(call)).toHaveLength(1);
    expect(events).toEqual([
      expect.objectContaining({ retry: true, probability: 1, requests: 1, accepts: 0 }),
    ]);
    // A first attempt still goes (the draw 0.999 is above P), and is how the throttle learns the backend is back.
    const next = id();
    server.script(next, [{}]);
    expect((await unary(c, next)).error).toBeUndefined();
    expect(throttle.counters()).toMatchObject({ calls: 3, rejected: 1, accepted: 1, notAccepted: 1 });
    c.close();
  });

  it('with retryLocalRejections, the retry engine retries a local rejection like any UNAVAILABLE', async () => {
    const budget = new RetryBudget({ minPerSecond: 10 });
    // Draws: attempt 1 (P = 0, not drawn against), retry 1 → 0 (rejected), retry 2 → 0.999 (let through).
    const throttle = createAdaptiveThrottleInterceptor({
      random: randoms([0.5, 0]),
      retryLocalRejections: true,
      retries: 'same-probability',
    });
    const c = client([createRetryInterceptor(retryConfig(), { gate: budget }), throttle]);
    const call = id();
    server.script(call, [{ status: UNAVAILABLE }, {}]);
    const out = await unary(c, call);
    expect(out.error).toBeUndefined();
    expect(out.responses[0]?.attempt).toBe(2);
    expect(server.attempts(call)).toHaveLength(2);
    expect(throttle.counters()).toMatchObject({ calls: 3, rejected: 1, accepted: 1, notAccepted: 1 });
    expect(out.trailers?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
    c.close();
  });

  it('under a sustained overload, sends the server about k × what it accepts and rejects the rest locally', async () => {
    // A backend with the capacity for one call in four: of each 4 consecutive calls the client makes, it accepts
    // the first that reaches it and refuses the others with UNAVAILABLE (unused capacity is not banked).
    let reached = 0;
    let lastSlot = -1;
    const overloaded = await FlakyServer.start({
      onAttempt: ({ callId }) => {
        reached += 1;
        const slot = Math.floor(Number(callId) / 4);
        if (slot > lastSlot) {
          lastSlot = slot;
          return {};
        }
        return { status: UNAVAILABLE };
      },
    });
    const throttle = createAdaptiveThrottleInterceptor({ k: 2, random: seededRandom(11) });
    const c = testClient(overloaded.address, [throttle]);
    const calls = 400;
    let ok = 0;
    for (let i = 0; i < calls; i++) {
      const code = await new Promise<number>((resolve) => {
        c.Unary({ payload: 'x' }, callMetadata(String(i)), (error: grpc.ServiceError | null) =>
          resolve(error ? error.code : grpc.status.OK),
        );
      });
      if (code === grpc.status.OK) ok += 1;
    }
    c.close();
    await overloaded.stop();
    const counters = throttle.counters();
    expect(counters).toMatchObject({ calls, accepted: ok, rejected: calls - reached });
    // Without the throttle the server would see all 400 calls for its 100 accepts; with it, about k × accepts.
    expect(ok).toBeGreaterThan(80);
    expect(reached / ok).toBeGreaterThan(1.7);
    expect(reached / ok).toBeLessThan(2.6);
  });

  it('rejects bad options with errors that name the option', () => {
    expect(() => createAdaptiveThrottleInterceptor({ k: 0 })).toThrow(
      /createAdaptiveThrottleInterceptor: options\.k must be a number in \[1, 1000\]/,
    );
    expect(() => createAdaptiveThrottleInterceptor({ rejectedStatusCodes: ['NOPE'] })).toThrow(
      /createAdaptiveThrottleInterceptor: options\.rejectedStatusCodes\[0\]/,
    );
    expect(() =>
      createAdaptiveThrottleInterceptor({ rejectedStatusCodes: 14 as unknown as number[] }),
    ).toThrow(TypeError);
    expect(() => createAdaptiveThrottleInterceptor({ onEvent: 'log' as unknown as () => void })).toThrow(
      /onEvent must be a function/,
    );
    expect(() =>
      createAdaptiveThrottleInterceptor({ retryLocalRejections: 1 as unknown as boolean }),
    ).toThrow(/options\.retryLocalRejections must be true or false/);
    expect(() => createAdaptiveThrottleInterceptor({ windowMS: 1000 } as unknown as object)).toThrow(
      /options\.windowMS is not an option; did you mean "windowMs"\?/,
    );
  });
});
