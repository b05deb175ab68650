/**
 * ts-proto: a client generated with `outputServices=grpc-js` (examples/integrations/generated/ts-proto, made by
 * generated/generate.ts) takes grpc-js client options, so the interceptor goes in its third constructor argument.
 * It makes a call that fails twice and a hedged read against the flaky test server.
 *
 * Run: npm run build && node --import tsx examples/integrations/ts-proto.ts
 */
import { fileURLToPath } from 'node:url';
import { credentials, Metadata } from '@grpc/grpc-js';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import {
  FAILS_TWICE,
  type IntegrationResult,
  integrationServiceConfig,
  report,
  SLOW_FIRST_ATTEMPT,
  startFlakyBackend,
} from './flaky-backend.js';
import { FlakyTestClient, TestRequest, type TestResponse } from './generated/ts-proto/flaky_test.js';

export async function main(print: (line: string) => void = console.log): Promise<IntegrationResult> {
  const server = await startFlakyBackend();
  const serviceConfig = integrationServiceConfig();

  // recipe: ts-proto
  const client = new FlakyTestClient(server.address, credentials.createInsecure(), {
    interceptors: [createRetryInterceptor(serviceConfig)],
  });
  // end recipe

  const metadata = (callId: string) => {
    const md = new Metadata();
    md.set('x-flaky-call-id', callId);
    return md;
  };
  try {
    const retried = await new Promise<TestResponse>((resolve, reject) =>
      client.unary(TestRequest.fromPartial({ payload: 'write' }), metadata(FAILS_TWICE), (error, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
    const hedged = await client
      .serverStream(TestRequest.fromPartial({ payload: 'read' }), metadata(SLOW_FIRST_ATTEMPT))
      .toArray();
    return await report('ts-proto', server, { retried, hedged }, print);
  } finally {
    client.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
