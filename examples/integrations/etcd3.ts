/**
 * etcd3, the etcd v3 client built on grpc-js: its `grpcOptions` are the options of every gRPC client it creates,
 * so the interceptor goes in as `grpcOptions.interceptors`. etcd3 wraps each call in its own cockatiel policies
 * (a retry of 3 tries around it, a circuit breaker per host), which retry UNAVAILABLE too: with the interceptor's
 * retries they multiply, so the recipe turns them off with cockatiel's `noop` policy. Per-call options go in with
 * the builders' `.options(...)`, e.g. `client.get('foo').options(withRetryOptions({ enabled: false }))`. The
 * server is the flaky test server serving etcd's `etcdserverpb.KV` from the protos etcd3 ships; its Range fails
 * twice, then answers.
 *
 * Run: npm run build && node --import tsx examples/integrations/etcd3.ts
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { noop } from 'cockatiel';
import { Etcd3, type IOptions } from 'etcd3';
import { createRetryInterceptor, type ServiceConfigJson } from 'grpc-retry-hedging';
import { FlakyServer } from 'grpc-retry-hedging/testing';

/** The method etcd3's `get` calls. */
export const ETCD_RANGE = 'etcdserverpb.KV/Range';

/** The protos etcd3 ships (rpc.proto imports kv.proto and auth.proto beside it). */
export const ETCD_PROTO_DIR = join(dirname(createRequire(import.meta.url).resolve('etcd3')), '..', 'proto');

/** Retries for every method of etcd's KV service. */
export function etcdServiceConfig(): ServiceConfigJson {
  return {
    methodConfig: [
      {
        name: [{ service: 'etcdserverpb.KV' }],
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.05s',
          maxBackoff: '0.5s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  };
}

/**
 * A flaky test server serving etcd's services as etcd3 loads them (`keepCase: true`: `create_revision`, not
 * `createRevision`). In your project this is your etcd cluster; in your tests it can be this server.
 */
export async function startEtcdBackend(): Promise<FlakyServer> {
  return FlakyServer.start({
    proto: join(ETCD_PROTO_DIR, 'rpc.proto'),
    includeDirs: [ETCD_PROTO_DIR],
    keepCase: true,
    serveFlakyTest: false,
    host: '127.0.0.1',
    port: 0,
  });
}

/**
 * The recipe's options: the interceptor on etcd3's gRPC clients, etcd3's own retries and circuit breaker off.
 * `hosts` are your etcd endpoints.
 */
export function etcdOptions(hosts: string, serviceConfig: ServiceConfigJson): IOptions {
  // recipe: etcd3
  return {
    hosts,
    grpcOptions: { interceptors: [createRetryInterceptor(serviceConfig)] },
    // etcd3's own fault handling off (noop from cockatiel): no retry around each call, no breaker per host
    faultHandling: { global: noop, host: () => noop },
  };
  // end recipe
}

/** What the example observed: the value read, and how each attempt of the Range call ended on the server. */
export interface Etcd3Result {
  value: string | null;
  /** Each attempt's status name, as the server saw it. */
  attempts: string[];
  /** Each attempt's `grpc-previous-rpc-attempts` header (undefined on the first). */
  previousRpcAttempts: Array<number | undefined>;
}

export async function main(print: (line: string) => void = console.log): Promise<Etcd3Result> {
  const server = await startEtcdBackend();
  server.scriptMethod(ETCD_RANGE, [
    { status: 'UNAVAILABLE' },
    { status: 'UNAVAILABLE' },
    { response: { kvs: [{ key: Buffer.from('foo'), value: Buffer.from('bar') }], count: 1 } },
  ]);
  const client = new Etcd3(etcdOptions(server.address, etcdServiceConfig()));
  try {
    const value = await client.get('foo').string();
    await server.waitFor(() => server.attemptsOf(ETCD_RANGE).every((a) => a.endedAt !== undefined));
    const seen = server.attemptsOf(ETCD_RANGE);
    const result = {
      value,
      attempts: seen.map((a) =>
        a.cancelled ? 'CANCELLED' : (status[a.endedWith ?? -1] ?? String(a.endedWith)),
      ),
      previousRpcAttempts: seen.map((a) => a.previousRpcAttempts),
    };
    print(`etcd3: get('foo') returned ${JSON.stringify(result.value)}`);
    print(`  server saw: ${result.attempts.join(', ')}`);
    return result;
  } finally {
    client.close();
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
