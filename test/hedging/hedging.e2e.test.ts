import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryInterceptorOptions } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  clientStream,
  eventsOf,
  hedgingConfig,
  serverStream,
  sleep,
  startHarness,
  unary,
} from '../helpers/harness.js';

const UNAVAILABLE = status.UNAVAILABLE;
let server: FlakyServer;
let n = 0;
const id = () => `hedge-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

async function withHarness(
  policy: Record<string, unknown>,
  options: RetryInterceptorOptions,
  body: (h: Awaited<ReturnType<typeof startHarness>>) => Promise<void>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const h = await startHarness(hedgingConfig(policy, extra), options, server);
  try {
    await body(h);
  } finally {
    await h.close();
  }
}

describe('hedging: unary', () => {
  it('a slow first attempt is overtaken by a hedge and cancelled', () =>
    withHarness({ hedgingDelay: '0.3s' }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 3000 }, {}]);
      const out = await unary(h.client, c);
      expect(out.error).toBeUndefined();
      expect(out.responses[0]?.attempt).toBe(2);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
      await sleep(150);
      expect(server.attempts(c)).toHaveLength(2);
      expect(server.attempts(c)[1]?.previousRpcAttempts).toBe(1);
      expect(eventsOf(h.events, 'attempt-start').map((e) => e.kind)).toEqual(['original', 'hedge']);
    }));

  it('the client closed before the hedge is due: the first attempt still answers, as without hedging', () =>
    withHarness({ hedgingDelay: '0.1s', maxAttempts: 3 }, {}, async (h) => {
      await unary(h.client, id()); // connected
      const c = id();
      server.script(c, [{ delayMs: 300 }]);
      const pending = unary(h.client, c);
      await sleep(30);
      h.client.close(); // grpc-js now refuses new calls, the hedge among them; the call out goes on
      const out = await pending;
      expect(out.code).toBe(status.OK);
      expect(out.responses[0]?.attempt).toBe(1);
      expect(server.attempts(c)).toHaveLength(1);
    }));

  it('sends no hedge when the first attempt answers within hedgingDelay', () =>
    withHarness({ hedgingDelay: '0.3s' }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 10 }]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      await sleep(400);
      expect(server.attempts(c)).toHaveLength(1);
    }));

  it('spaces hedges by hedgingDelay', () =>
    withHarness({ hedgingDelay: '0.1s', maxAttempts: 3 }, {}, async (h) => {
      await unary(h.client, id()); // warm the connection, so that arrival times reflect send times
      const c = id();
      server.script(c, [{ delayMs: 3000 }, { delayMs: 3000 }, {}]);
      const out = await unary(h.client, c);
      expect(out.responses[0]?.attempt).toBe(3);
      // The spacing itself is proved under fake time in test/engine; here: three attempts, the losers cancelled.
      expect(server.attempts(c)).toHaveLength(3);
      await server.waitFor(() =>
        server
          .attempts(c)
          .slice(0, 2)
          .every((a) => a.cancelled),
      );
    }));

  it('a non-fatal status sends the next hedge at once', () =>
    withHarness({ hedgingDelay: '5s', maxAttempts: 2 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const started = Date.now();
      const out = await unary(h.client, c);
      expect(out.responses[0]?.attempt).toBe(2);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(eventsOf(h.events, 'hedge-scheduled').map((e) => e.reason)).toEqual([
        'hedging-delay',
        'non-fatal-status',
      ]);
    }));

  it('a fatal status cancels the other attempts and is the result at once', () =>
    withHarness({ hedgingDelay: '0.05s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 3000 }, { status: status.INVALID_ARGUMENT, details: 'bad' }]);
      const started = Date.now();
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.INVALID_ARGUMENT);
      expect(out.error?.details).toBe('bad');
      expect(Date.now() - started).toBeLessThan(2000);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
      await sleep(150);
      expect(server.attempts(c)).toHaveLength(2);
      expect(out.statusEvents).toBe(1);
    }));

  it('when every attempt fails, the last status received is the result', () =>
    withHarness({ hedgingDelay: '0.02s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [
        { status: UNAVAILABLE, details: 'first', delayMs: 100 },
        { status: UNAVAILABLE, details: 'second', delayMs: 200 },
        { status: UNAVAILABLE, details: 'third', delayMs: 300 },
      ]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      expect(out.error?.details).toBe('third');
      expect(server.attempts(c)).toHaveLength(3);
    }));

  it('pushback n sends the next hedge after n ms', () =>
    withHarness({ hedgingDelay: '5s', maxAttempts: 2 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, pushback: '300' }, {}]);
      const out = await unary(h.client, c);
      expect(out.responses[0]?.attempt).toBe(2);
      // The delay itself (exactly 300 ms) is proved under fake time in test/engine.
      expect(server.attempts(c)).toHaveLength(2);
      expect(eventsOf(h.events, 'hedge-scheduled').map((e) => [e.reason, e.delayMs])).toEqual([
        ['hedging-delay', 5000],
        ['pushback', 300],
      ]);
    }));

  it('pushback -1 stops new hedges; attempts in flight may still win', () =>
    withHarness({ hedgingDelay: '0.05s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 400 }, { status: UNAVAILABLE, pushback: '-1' }, {}]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(out.responses[0]?.attempt).toBe(1);
      expect(server.attempts(c)).toHaveLength(2);
    }));

  it('pushback -1 on the only attempt ends the call with its status', () =>
    withHarness({ hedgingDelay: '0.2s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE, pushback: '-1' }, {}]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      await sleep(300);
      expect(server.attempts(c)).toHaveLength(1);
    }));

  it('throttling stops hedges (grpc-js never throttles them)', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.1 });
    throttle.recordFailure();
    throttle.recordFailure(); // 2: not above the threshold
    await withHarness({ hedgingDelay: '0.02s', maxAttempts: 3 }, { gate: throttle }, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 200 }]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(1);
      expect(eventsOf(h.events, 'throttled')).toEqual([expect.objectContaining({ attempt: 2, tokens: 2 })]);
    });
  });

  it('non-fatal failures take tokens and throttle the following hedges', async () => {
    const throttle = new RetryThrottle({ maxTokens: 4, tokenRatio: 0.1 });
    await withHarness({ hedgingDelay: '5s', maxAttempts: 5 }, { gate: throttle }, async (h) => {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }]);
      const out = await unary(h.client, c);
      expect(out.code).toBe(UNAVAILABLE);
      // 4→3 hedge, 3→2 throttled
      expect(server.attempts(c)).toHaveLength(2);
      expect(throttle.tokens).toBe(2);
    });
  });

  it('hedgingDelay "0s" sends every attempt at once; the first answer wins', () =>
    withHarness({ hedgingDelay: '0s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 2000 }, { delayMs: 2000 }, {}]);
      const out = await unary(h.client, c);
      expect(out.responses[0]?.attempt).toBe(3);
      // All three went at once (proved under fake time in test/engine); here: all three reached the server.
      expect(server.attempts(c)).toHaveLength(3);
      await server.waitFor(() =>
        server
          .attempts(c)
          .slice(0, 2)
          .every((a) => a.cancelled),
      );
    }));

  it('the deadline ends a call with hedges in flight and cancels them all', () =>
    withHarness({ hedgingDelay: '0.05s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 5000 }]);
      const out = await unary(h.client, c, undefined, { deadlineMs: 400 });
      expect(out.code).toBe(status.DEADLINE_EXCEEDED);
      expect(out.statusEvents).toBe(1);
      expect(server.attempts(c)).toHaveLength(3);
      await server.waitFor(() => server.attempts(c).every((a) => a.cancelled));
      expect(eventsOf(h.events, 'call-end')).toHaveLength(1);
    }));

  it('cancel ends a call with hedges in flight once and cancels every attempt', () =>
    withHarness({ hedgingDelay: '0.05s', maxAttempts: 3 }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 5000 }]);
      const out = await unary(h.client, c, undefined, {
        onCall: (call) => void server.waitForAttempts(c, 3).then(() => call.cancel()),
      });
      expect(out.code).toBe(status.CANCELLED);
      expect(out.statusEvents).toBe(1);
      await server.waitFor(
        () => server.attempts(c).length === 3 && server.attempts(c).every((a) => a.cancelled),
      );
      await sleep(150);
      expect(server.attempts(c)).toHaveLength(3);
    }));
  it('a request too large for the replay buffer is never hedged: the call keeps its one attempt', () =>
    withHarness({ hedgingDelay: '0.02s', maxAttempts: 3 }, { perRpcBufferBytes: 100 }, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 300 }]);
      const out = await unary(h.client, c, { payload: 'big', blob: Buffer.alloc(300) });
      expect(out.code).toBe(status.OK);
      expect(server.attempts(c)).toHaveLength(1);
      expect(eventsOf(h.events, 'committed').map((e) => e.reason)).toEqual(['replay-buffer']);
    }));
});

describe('hedging: streaming', () => {
  it('server streaming: the first attempt to send a message wins', () =>
    withHarness({ hedgingDelay: '0.05s' }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 3000, responses: 2 }, { responses: 2 }]);
      const out = await serverStream(h.client, c);
      expect(out.responses.map((r) => r.attempt)).toEqual([2, 2]);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
    }));

  it('client streaming: messages and half-close go to every attempt, replayed to late hedges', () =>
    withHarness({ hedgingDelay: '0.05s' }, {}, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 3000 }, { delayMs: 200 }]);
      const out = await clientStream(h.client, c, [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }], {
        between: async (i) => {
          if (i === 0) await server.waitForAttempts(c, 2);
        },
      });
      expect(out.responses[0]).toMatchObject({ payload: 'a,b,c', attempt: 2 });
      const [a1, a2] = server.attempts(c);
      expect(a1?.messages).toEqual(['a', 'b', 'c']);
      expect(a1?.halfClosed).toBe(true);
      expect(a2?.messages).toEqual(['a', 'b', 'c']);
    }));

  it('bidi: the first echoed response commits and the other attempt is cancelled', () =>
    withHarness({ hedgingDelay: '0.05s' }, {}, async (h) => {
      const c = id();
      server.script(c, [
        { delayMs: 3000, echo: true },
        { echo: true, delayMs: 100 },
      ]);
      const out = await bidi(h.client, c, [{ payload: 'x' }, { payload: 'y' }], {
        between: async (i) => {
          if (i === 0) await server.waitForAttempts(c, 2);
        },
      });
      expect(out.code).toBe(status.OK);
      expect(out.responses.map((r) => [r.payload, r.attempt])).toEqual([
        ['x', 2],
        ['y', 2],
      ]);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
    }));

  it('buffer overflow keeps one attempt and cancels the rest', () =>
    withHarness({ hedgingDelay: '0.05s' }, { perRpcBufferBytes: 100 }, async (h) => {
      const c = id();
      server.script(c, [{ delayMs: 400 }, { delayMs: 400 }]);
      const out = await clientStream(
        h.client,
        c,
        [{ payload: 'small' }, { payload: 'big', blob: Buffer.alloc(300) }],
        {
          between: async (i) => {
            if (i === 0) await server.waitForAttempts(c, 2);
          },
        },
      );
      expect(out.code).toBe(status.OK);
      const committed = eventsOf(h.events, 'committed');
      expect(committed).toEqual([expect.objectContaining({ reason: 'replay-buffer' })]);
      const winner = committed[0]!.attempt;
      const attempts = server.attempts(c);
      expect(attempts[winner - 1]?.blobBytes).toBe(300);
      await server.waitFor(() => attempts[2 - winner]?.cancelled === true);
      expect(out.responses[0]?.attempt).toBe(winner);
    }));
});
