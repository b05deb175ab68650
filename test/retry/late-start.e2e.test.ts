/**
 * An interceptor that holds `start` back (an auth interceptor awaiting a token, say). Above the retry interceptor:
 * when the call is cancelled before it starts, bare grpc-js never calls the callback; through the retry
 * interceptor the call still ends once, with a status; past the deadline, it ends when the start comes. Below it: when the deadline passes while an attempt's start
 * is held, grpc-js's deadline timer ends that attempt before it has a listener and never reports it, so bare
 * grpc-js never ends the call; through the retry interceptor it ends with DEADLINE_EXCEEDED 100 ms past the
 * deadline (before that fix it never ended either, a retried call too, which without the interceptor would have
 * ended with its failure).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

/** Holds each call's start back by `ms`, as an interceptor awaiting a token would. */
const lateStart =
  (ms: number): grpc.Interceptor =>
  (options, next) =>
    new grpc.InterceptingCall(next(options), {
      start(metadata, listener, nextStart) {
        setTimeout(() => nextStart(metadata, listener), ms);
      },
    });

describe('a start held back by an interceptor above', () => {
  it('cancelled before it started: CANCELLED, once', async () => {
    const client = testClient(server.address, [lateStart(100), createRetryInterceptor(retryConfig())]);
    try {
      const outcome = await unary(
        client,
        'late-cancel',
        { payload: 'x' },
        { onCall: (call) => call.cancel() },
      );
      expect(outcome.error?.code).toBe(grpc.status.CANCELLED);
      expect(server.attempts('late-cancel')).toHaveLength(0);
    } finally {
      client.close();
    }
  });
});

describe('a start held back by an interceptor above, past the deadline', () => {
  it('ends when the start comes, with DEADLINE_EXCEEDED, once, and sends nothing', async () => {
    // The retry interceptor has no listener to end the call with until the start reaches it.
    const client = testClient(server.address, [lateStart(600), createRetryInterceptor(retryConfig())]);
    try {
      const started = Date.now();
      const outcome = await unary(client, 'late-above-deadline', { payload: 'x' }, { deadlineMs: 100 });
      const tookMs = Date.now() - started;
      expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(outcome.statusEvents).toBe(1);
      expect(tookMs).toBeGreaterThanOrEqual(590);
      expect(server.attempts('late-above-deadline')).toHaveLength(0);
    } finally {
      client.close();
    }
  });
});

describe('a start held back by an interceptor below', () => {
  it('past the deadline: DEADLINE_EXCEEDED, once, about 100 ms after it', async () => {
    const client = testClient(server.address, [createRetryInterceptor(retryConfig()), lateStart(1500)]);
    try {
      server.script('late-below', [{ status: grpc.status.UNAVAILABLE }]);
      const started = Date.now();
      const outcome = await unary(client, 'late-below', { payload: 'x' }, { deadlineMs: 200 });
      const tookMs = Date.now() - started;
      expect(outcome.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(outcome.statusEvents).toBe(1);
      expect(tookMs).toBeLessThan(1500); // not at the held start's end: the interceptor ended the call
      expect(server.attempts('late-below')).toHaveLength(0);
    } finally {
      client.close();
    }
  });
});
