/**
 * A request over the channel's own `grpc.max_send_message_length` fails in grpc-js before it reaches the server,
 * with RESOURCE_EXHAUSTED. grpc-js's built-in retries never retry it (the check is above their layer); nor does the
 * interceptor, even with RESOURCE_EXHAUSTED listed: every resend would fail alike. Nor does it count against the
 * server in A6 throttling (src/retry/local-failure.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMessageSizeRejection } from '../../src/retry/local-failure.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('a request over the client’s own message-size limit', () => {
  it('fails once, as without the interceptor, and leaves the throttle’s tokens alone', async () => {
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const config = retryConfig({ retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'] });
    const client = testClient(server.address, [createRetryInterceptor(config, { gate })], {
      'grpc.max_send_message_length': 1000,
    });
    const bare = testClient(server.address, [], { 'grpc.max_send_message_length': 1000 });
    try {
      const big = { payload: 'x'.repeat(2000) };
      const outcome = await unary(client, 'too-big', big);
      const bareOutcome = await unary(bare, 'too-big-bare', big);
      expect(outcome.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(outcome.error?.details).toBe(bareOutcome.error?.details);
      expect(outcome.error?.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
      expect(server.attempts('too-big')).toHaveLength(0);
      expect(gate.tokens).toBe(10);
    } finally {
      client.close();
      bare.close();
    }
  });

  it('is told apart from a server’s RESOURCE_EXHAUSTED by grpc-js’s wording', () => {
    const code = grpc.status.RESOURCE_EXHAUSTED;
    expect(
      isMessageSizeRejection({ code, details: 'Attempted to send message with a size larger than 1000' }),
    ).toBe(true);
    // A grpc-js server's status about its own response: not the request's doing.
    expect(isMessageSizeRejection({ code, details: 'Sent message larger than max (2000 vs. 1000)' })).toBe(
      false,
    );
    expect(isMessageSizeRejection({ code, details: 'quota exceeded' })).toBe(false);
    expect(
      isMessageSizeRejection({
        code: grpc.status.INTERNAL,
        details: 'Attempted to send message with a size larger than 1000',
      }),
    ).toBe(false);
  });
});

describe('a response over the server’s own send limit', () => {
  it('is a server status like any other: retried when listed, as grpc-js’s retries do, and counted', async () => {
    const small = await FlakyServer.start({ serverOptions: { 'grpc.max_send_message_length': 1000 } });
    const gate = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    const config = retryConfig({ retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'] });
    const client = testClient(small.address, [createRetryInterceptor(config, { gate })]);
    try {
      // The first attempt's answer is over the server's limit; the second's is not.
      small.script('big-answer', [{ response: { payload: 'x'.repeat(5000) } }, {}]);
      const outcome = await unary(client, 'big-answer');
      expect(outcome.error).toBeUndefined();
      expect(outcome.responses[0]?.attempt).toBe(2);
      expect(small.attempts('big-answer')).toHaveLength(2);
      expect(gate.tokens).toBe(9.1); // one failure taken, a tenth back for the success
    } finally {
      client.close();
      await small.stop();
    }
  });
});
