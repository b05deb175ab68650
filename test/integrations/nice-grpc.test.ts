import { createRetryInterceptor, interceptChannel } from 'grpc-retry-hedging';
import { FlakyServer } from 'grpc-retry-hedging/testing';
import { createChannel, createClient, Metadata, Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { FlakyTestService, TestRequest } from '../../examples/integrations/generated/ts-proto/flaky_test.js';
import { main } from '../../examples/integrations/nice-grpc.js';
import { retryConfig } from '../helpers/harness.js';
import { expectRetriedAndHedged } from './integration-result.js';

async function* requests(...payloads: string[]) {
  for (const payload of payloads) yield TestRequest.fromPartial({ payload });
}

describe('nice-grpc client on a channel with the interceptor (interceptChannel)', () => {
  it('retries a call that fails twice and hedges a read, as the server saw', async () => {
    expectRetriedAndHedged(await main(() => {}));
  });

  it('replays a client stream to the next attempt, and an aborted call ends with the abort', async () => {
    const server = await FlakyServer.start();
    const channel = interceptChannel(createChannel(server.address), [createRetryInterceptor(retryConfig())]);
    const client = createClient(FlakyTestService, channel);
    try {
      server.script('stream', [{ status: 'UNAVAILABLE' }, {}]);
      const response = await client.clientStream(requests('m1', 'm2'), {
        metadata: Metadata({ 'x-flaky-call-id': 'stream' }),
      });
      expect(response).toMatchObject({ payload: 'm1,m2', attempt: 2 });
      expect(server.attempts('stream').map((a) => a.messages)).toEqual([
        ['m1', 'm2'],
        ['m1', 'm2'],
      ]);

      server.script('aborted', [{ status: 'UNAVAILABLE' }, { delayMs: 10_000 }]);
      const abort = new AbortController();
      const call = client.unary(TestRequest.fromPartial({ payload: 'x' }), {
        metadata: Metadata({ 'x-flaky-call-id': 'aborted' }),
        signal: abort.signal,
      });
      await server.waitForAttempts('aborted', 2);
      abort.abort();
      await expect(call).rejects.toMatchObject({ name: 'AbortError' });
      await server.waitFor(() => server.attempts('aborted')[1]?.cancelled === true);

      server.script('fatal', [{ status: 'INVALID_ARGUMENT' }]);
      await expect(
        client.unary(TestRequest.fromPartial({ payload: 'x' }), {
          metadata: Metadata({ 'x-flaky-call-id': 'fatal' }),
        }),
      ).rejects.toMatchObject({ code: Status.INVALID_ARGUMENT });
      expect(server.attempts('fatal')).toHaveLength(1);
    } finally {
      channel.close();
      await server.stop();
    }
  });
});
