/**
 * Hedging across replicas: three replicas behind one target, one of them slow, and a hedging client that sends
 * each hedge to a replica the call has not tried (docs/hedging-across-replicas.md excerpts this file).
 *
 *   node --import tsx examples/hedging-across-replicas.ts
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { createChannelOptions, createRetryInterceptor } from 'grpc-retry-hedging';
import { FlakyCluster, loadFlakyTestService } from 'grpc-retry-hedging/testing';

const config = {
  methodConfig: [
    {
      name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
      hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' },
    },
  ],
};

/** Makes `calls` calls one after another; resolves with the attempts each replica received. */
export async function main(calls = 30, print: (line: string) => void = console.log): Promise<number[]> {
  const cluster = await FlakyCluster.start([{ delayMs: 200 }, { delayMs: [2, 5] }, { delayMs: [2, 5] }]);
  const Client = loadFlakyTestService();
  const client = new Client(cluster.target, grpc.credentials.createInsecure(), {
    ...createChannelOptions(config, { avoidTriedReplicas: true }),
    interceptors: [createRetryInterceptor(config)],
  });
  try {
    for (let i = 0; i < calls; i++) {
      await new Promise((resolve, reject) =>
        client.Unary({ payload: `call ${i}` }, (error, response) =>
          error ? reject(error) : resolve(response),
        ),
      );
    }
    const served = cluster.served(); // attempts per replica, e.g. [ 10, 15, 15 ]
    print(`attempts per replica (replica 0 is slow): ${served.join(' / ')}`);
    return served;
  } finally {
    client.close();
    await cluster.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
