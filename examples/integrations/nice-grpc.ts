/**
 * nice-grpc: its clients take no grpc-js interceptors (createClient builds its grpc-js client from the channel
 * alone), so the interceptor goes on the channel, with `interceptChannel`. The client here uses the grpc-js service
 * definition that ts-proto generated (generated/ts-proto); a proto-loader definition works the same. It makes a
 * call that fails twice and a hedged read against the flaky test server.
 *
 * Run: npm run build && node --import tsx examples/integrations/nice-grpc.ts
 */
import { fileURLToPath } from 'node:url';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { createRetryInterceptor, interceptChannel, retryOutcomeOf } from 'grpc-retry-hedging';
import { createChannel, createClient, Metadata } from 'nice-grpc';
import {
  FAILS_TWICE,
  type IntegrationResult,
  integrationServiceConfig,
  report,
  SLOW_FIRST_ATTEMPT,
  startFlakyBackend,
} from './flaky-backend.js';
import { FlakyTestService, TestRequest, type TestResponse } from './generated/ts-proto/flaky_test.js';

/**
 * For a call's retry outcome under nice-grpc, whose `ClientError` does not carry grpc-js's trailers (so
 * `retryOutcomeOf(error)` finds nothing) and which passes no per-call options (so no per-call `onEvent`): put this
 * before the retry interceptor on the channel. It sees each call's status as the retry interceptor hands it, and
 * adds the outcome to the trailers that nice-grpc's `onTrailer` gets, as `x-retry-attempts` and `x-retry-reason`.
 */
export const retryOutcomeTrailers: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start: (metadata, _listener, next) =>
      next(metadata, {
        onReceiveStatus: (status, nextStatus) => {
          const outcome = retryOutcomeOf(status);
          if (outcome === undefined) {
            nextStatus(status);
            return;
          }
          const trailers = status.metadata.clone();
          trailers.set('x-retry-attempts', String(outcome.attempts));
          if (outcome.reason !== undefined) trailers.set('x-retry-reason', outcome.reason);
          nextStatus({ ...status, metadata: trailers });
        },
      }),
  });

export async function main(print: (line: string) => void = console.log): Promise<IntegrationResult> {
  const server = await startFlakyBackend();
  const serviceConfig = integrationServiceConfig();

  // recipe: nice-grpc
  const channel = interceptChannel(createChannel(server.address), [createRetryInterceptor(serviceConfig)]);
  const client = createClient(FlakyTestService, channel);
  // end recipe

  try {
    const retried = await client.unary(TestRequest.fromPartial({ payload: 'write' }), {
      metadata: Metadata({ 'x-flaky-call-id': FAILS_TWICE }),
    });
    const hedged: TestResponse[] = [];
    const read = client.serverStream(TestRequest.fromPartial({ payload: 'read' }), {
      metadata: Metadata({ 'x-flaky-call-id': SLOW_FIRST_ATTEMPT }),
    });
    for await (const response of read) hedged.push(response);
    return await report('nice-grpc', server, { retried, hedged }, print);
  } finally {
    channel.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
