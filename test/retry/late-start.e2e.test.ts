/**
 * An interceptor above the retry interceptor that holds `start` back (an auth interceptor awaiting a token, say):
 * when the call is cancelled before it starts, bare grpc-js never calls the callback. Through the retry
 * interceptor the call still ends once, with a status. (When its deadline passes before it starts, both leave it
 * without one: grpc-js ended the first attempt's call already and never reports it, and a start a millisecond
 * after a 1 ms deadline, which grpc-js still sends, cannot be told apart without a timer.)
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
