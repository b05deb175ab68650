/**
 * `retryOutcomeOf(error or status)`: what the interceptor did for a call, read from what the application holds, with
 * no event listener. Every outcome is checked against the call's own `call-end` event where one is listened for.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createRetryInterceptor,
  type RetryEvent,
  retryOutcomeOf,
  withRetryOptions,
} from '../../src/index.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  type CallOutcome,
  clientStream,
  eventsOf,
  type FlakyClient,
  hedgingConfig,
  retryConfig,
  serverStream,
  testClient,
  unary,
} from '../helpers/harness.js';

const { UNAVAILABLE, INVALID_ARGUMENT, CANCELLED } = grpc.status;
let server: FlakyServer;
let n = 0;
const id = () => `outcome-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

/** A client whose retry interceptor has no event listener (the outcome must not depend on one). */
function quietClient(
  config: object,
  options: Parameters<typeof createRetryInterceptor>[1] = {},
): FlakyClient {
  return testClient(server.address, [createRetryInterceptor(config, options)]);
}

/** The outcome read both ways: from the error (if any) and from the 'status' event's status. */
function bothWays(outcome: CallOutcome): { fromError: unknown; fromStatus: unknown } {
  return {
    fromError: outcome.error === undefined ? 'no error' : retryOutcomeOf(outcome.error),
    fromStatus: retryOutcomeOf({ metadata: outcome.trailers }),
  };
}

describe('retryOutcomeOf', () => {
  const client = () => quietClient(retryConfig({ maxAttempts: 3 }));

  it('a call that used up its attempts: from the error and from the status alike', async () => {
    const c = client();
    try {
      const callId = id();
      server.script(callId, [{ status: 'UNAVAILABLE' }]);
      const outcome = await unary(c, callId);
      expect(outcome.code).toBe(UNAVAILABLE);
      const expected = { attempts: 3, reason: 'attempts-exhausted' };
      expect(bothWays(outcome)).toEqual({ fromError: expected, fromStatus: expected });
    } finally {
      c.close();
    }
  });

  it('a status the policy does not retry: one attempt, fatal-status', async () => {
    const c = client();
    try {
      const callId = id();
      server.script(callId, [{ status: 'INVALID_ARGUMENT' }]);
      const outcome = await unary(c, callId);
      expect(outcome.code).toBe(INVALID_ARGUMENT);
      expect(retryOutcomeOf(outcome.error)).toEqual({ attempts: 1, reason: 'fatal-status' });
    } finally {
      c.close();
    }
  });

  it('a call that succeeded after retries: its attempts, no reason; at the first attempt: nothing kept', async () => {
    const c = client();
    try {
      const retried = id();
      server.script(retried, [{ status: 'UNAVAILABLE' }, {}]);
      const afterRetry = await unary(c, retried);
      expect(afterRetry.code).toBe(grpc.status.OK);
      expect(retryOutcomeOf({ metadata: afterRetry.trailers })).toEqual({ attempts: 2 });
      const first = await unary(c, id());
      expect(first.code).toBe(grpc.status.OK);
      expect(first.trailers).toBeDefined();
      expect(retryOutcomeOf({ metadata: first.trailers })).toBeUndefined();
    } finally {
      c.close();
    }
  });

  it('the deadline during the retries', async () => {
    const c = quietClient(retryConfig({ maxAttempts: 5, initialBackoff: '0.2s', maxBackoff: '0.2s' }));
    try {
      const callId = id();
      server.script(callId, [{ status: 'UNAVAILABLE' }]);
      const outcome = await unary(c, callId, undefined, { deadlineMs: 300 });
      expect(outcome.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(retryOutcomeOf(outcome.error)).toEqual({
        attempts: expect.any(Number),
        reason: 'deadline',
      });
    } finally {
      c.close();
    }
  });

  it('a call cancelled by its caller: the attempts so far, no reason', async () => {
    const c = client();
    try {
      const callId = id();
      server.script(callId, [{ delayMs: 5000 }]);
      const outcome = await unary(c, callId, undefined, {
        onCall: (call) => {
          void server.waitForAttempts(callId, 1).then(() => call.cancel());
        },
      });
      expect(outcome.code).toBe(CANCELLED);
      expect(retryOutcomeOf(outcome.error)).toEqual({ attempts: 1 });
    } finally {
      c.close();
    }
  });

  it('every call type, the same as its call-end event', async () => {
    const events: RetryEvent[] = [];
    const c = quietClient(retryConfig({ maxAttempts: 3 }), { onEvent: (e) => events.push(e) });
    try {
      const calls = [
        (callId: string) => unary(c, callId),
        (callId: string) => serverStream(c, callId),
        (callId: string) => clientStream(c, callId, [{ payload: 'a' }, { payload: 'b' }]),
        (callId: string) => bidi(c, callId, [{ payload: 'a' }, { payload: 'b' }]),
      ];
      for (const call of calls) {
        events.length = 0;
        const callId = id();
        server.script(callId, [{ status: 'UNAVAILABLE' }]);
        const outcome = await call(callId);
        const [end] = eventsOf(events, 'call-end');
        expect(end).toBeDefined();
        const expected = { attempts: end!.attempts, reason: end!.reason };
        expect(expected).toEqual({ attempts: 3, reason: 'attempts-exhausted' });
        expect(bothWays(outcome)).toEqual({ fromError: expected, fromStatus: expected });
      }
    } finally {
      c.close();
    }
  });

  it('hedging: the attempts sent, and why the last failure got no further attempt', async () => {
    const c = quietClient(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.02s' }));
    try {
      const won = id();
      server.script(won, [{ delayMs: 2000 }, {}]);
      const hedged = await unary(c, won);
      expect(hedged.code).toBe(grpc.status.OK);
      expect(retryOutcomeOf({ metadata: hedged.trailers })).toEqual({ attempts: 2 });
      const fatal = id();
      server.script(fatal, [{ status: 'INVALID_ARGUMENT' }]);
      const failed = await unary(c, fatal);
      expect(retryOutcomeOf(failed.error)).toEqual({ attempts: 1, reason: 'fatal-status' });
    } finally {
      c.close();
    }
  });

  it('nothing for a call without a policy, one with retries turned off, or through no interceptor', async () => {
    const c = client();
    const bare = testClient(server.address);
    try {
      const off = id();
      server.script(off, [{ status: 'UNAVAILABLE' }]);
      const disabled = await unary(c, off, undefined, { callOptions: withRetryOptions({ enabled: false }) });
      expect(disabled.code).toBe(UNAVAILABLE);
      expect(retryOutcomeOf(disabled.error)).toBeUndefined();
      const plain = id();
      server.script(plain, [{ status: 'UNAVAILABLE' }]);
      const throughNone = await unary(bare, plain);
      expect(throughNone.code).toBe(UNAVAILABLE);
      expect(retryOutcomeOf(throughNone.error)).toBeUndefined();
    } finally {
      c.close();
      bare.close();
    }
  });

  it('anything else reads as nothing, without throwing', () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwing = Object.defineProperty({}, 'metadata', {
      get() {
        throw new Error('boom');
      },
    });
    for (const value of [
      throwing,
      revoked.proxy,
      undefined,
      null,
      7,
      'UNAVAILABLE',
      {},
      { metadata: null },
      { metadata: 'x' },
      new Error(),
    ]) {
      expect(retryOutcomeOf(value)).toBeUndefined();
    }
  });
});

describe('retryOutcomeOf across two copies of the package', () => {
  it('reads an outcome kept by the other copy (the ESM and CJS builds in one process)', async () => {
    const { Metadata } = grpc;
    const trailers = new Metadata();
    const first = await import('../../src/retry/retry-outcome.js');
    vi.resetModules();
    const second = await import('../../src/retry/retry-outcome.js');
    expect(second).not.toBe(first);
    first.recordRetryOutcome(trailers, { attempts: 2, reason: 'deadline' });
    expect(second.retryOutcomeOf({ metadata: trailers })).toEqual({ attempts: 2, reason: 'deadline' });
  });
});
