/**
 * google-gax, the layer Google Cloud's Node client libraries (@google-cloud/*) build their clients on: a client
 * hands grpc-js only the options whose keys start with `grpc.`, so an `interceptors` option would be dropped
 * silently. The interceptor goes in through `'grpc.callInvocationTransformer'` instead, which adds it to every
 * call's interceptors (so per-call options, passed in gax's `otherArgs.options`, still reach it), and gax's own
 * retries are turned off in the client config so that the interceptor's are the only ones. The client is a
 * stand-in built as a generated (GAPIC) client builds it (gapic-client.ts); with a Cloud library the same options
 * go to its client's constructor, e.g. `new PublisherClient(options)`. It makes a call that fails twice and a
 * hedged read against the flaky test server.
 *
 * Run: npm run build && node --import tsx examples/integrations/google-gax.ts
 */
import { fileURLToPath } from 'node:url';
import type { CallInvocationTransformer, Interceptor } from '@grpc/grpc-js';
import type { ClientConfig } from 'google-gax';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import {
  FAILS_TWICE,
  type IntegrationResult,
  integrationServiceConfig,
  report,
  SLOW_FIRST_ATTEMPT,
  startFlakyBackend,
} from './flaky-backend.js';
import { FLAKY_TEST_SERVICE, FlakyTestClient, localServerOptions, readAll } from './gapic-client.js';

/** For `'grpc.callInvocationTransformer'`: adds `interceptor` to every call's interceptors, as the outermost. */
export const addInterceptor =
  (interceptor: Interceptor): CallInvocationTransformer =>
  (call) => ({
    ...call,
    callOptions: {
      ...call.callOptions,
      interceptors: [interceptor, ...(call.callOptions.interceptors ?? [])],
    },
  });

/**
 * gax's retries off for the methods the interceptor retries or hedges: an empty list of retry codes, named by
 * each method (changing the list the methods already name, such as `idempotent`, has no effect).
 */
export const gaxRetriesOff: ClientConfig = {
  interfaces: {
    [FLAKY_TEST_SERVICE]: {
      retry_codes: { none: [] },
      methods: {
        Unary: { retry_codes_name: 'none' },
        ServerStream: { retry_codes_name: 'none' },
      },
    },
  },
};

export async function main(print: (line: string) => void = console.log): Promise<IntegrationResult> {
  const server = await startFlakyBackend();
  const serviceConfig = integrationServiceConfig();
  const connection = localServerOptions(server.address); // with a Cloud library: nothing, or its apiEndpoint

  // recipe: google-gax
  const client = new FlakyTestClient({
    ...connection,
    'grpc.callInvocationTransformer': addInterceptor(createRetryInterceptor(serviceConfig)),
    clientConfig: gaxRetriesOff,
    gaxServerStreamingRetries: true, // server streaming: gax's retries follow the retry codes (none) too
  });
  // end recipe

  try {
    const [retried] = await client.unary(
      { payload: 'write' },
      { otherArgs: { headers: { 'x-flaky-call-id': FAILS_TWICE } } },
    );
    const hedged = await readAll(
      client.serverStream(
        { payload: 'read' },
        { otherArgs: { headers: { 'x-flaky-call-id': SLOW_FIRST_ATTEMPT } } },
      ),
    );
    return await report('google-gax', server, { retried, hedged }, print);
  } finally {
    await client.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
