// The FlakyTest demo service in one file, as docs/testing.md shows it. CI compiles and runs it with strict tsc
// against the packed package (test/package/packed-package.test.ts), as ESM and as CommonJS.
import * as grpc from '@grpc/grpc-js';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { CALL_ID_METADATA_KEY, createFlakyTestClient, FlakyServer } from 'grpc-retry-hedging/testing';

const server = await FlakyServer.start();
const retryPolicy = {
  maxAttempts: 3,
  initialBackoff: '0.01s',
  maxBackoff: '0.1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const client = createFlakyTestClient(server.address, {
  interceptors: [
    createRetryInterceptor({
      methodConfig: [{ name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }], retryPolicy }],
    }),
  ],
});

// attempt 1: UNAVAILABLE with pushback 50 ms; attempt 2: headers, then UNAVAILABLE (committed: not retried)
server.script('call-1', [
  { status: 'UNAVAILABLE', pushback: '50' },
  { status: 14, sendHeaders: true },
]);
const metadata = new grpc.Metadata();
metadata.set(CALL_ID_METADATA_KEY, 'call-1');
metadata.set('x-request-id', 'req-1');
const error = await new Promise<grpc.ServiceError | null>((resolve) => {
  client.Unary({ payload: 'hi' }, metadata, (err) => resolve(err)); // typed: response is a FlakyTestResponse
});
console.log(`call ended with ${error?.code}`); // call ended with 14

for (const a of server.attempts('call-1')) {
  // attempt 1: previous undefined, ended 14, id req-1
  // attempt 2: previous 1, ended 14, id req-1
  console.log(
    `attempt ${a.attempt}: previous ${a.previousRpcAttempts}, ended ${a.endedWith}, id ${a.requestId}`,
  );
}
client.close();
await server.stop();
