import type { CallOptions } from '@grpc/grpc-js';
import { Etcd3, GRPCUnavailableError, type IOptions } from 'etcd3';
import {
  createRetryInterceptor,
  type RetryEvent,
  retryOutcomeOf,
  withRetryOptions,
} from 'grpc-retry-hedging';
import type { FlakyServer } from 'grpc-retry-hedging/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ETCD_RANGE,
  etcdOptions,
  etcdServiceConfig,
  main,
  startEtcdBackend,
} from '../../examples/integrations/etcd3.js';

let server: FlakyServer;
const clients: Etcd3[] = [];

/**
 * A fresh etcd3 client (so a fresh interceptor) on the shared server, closed after the test: etcd3's default
 * circuit breaker, once open, would refuse a later case's calls on a shared client.
 */
function etcdClient(options: IOptions): Etcd3 {
  const client = new Etcd3(options);
  clients.push(client);
  return client;
}

/** The recipe, as the example builds it: the interceptor in grpcOptions, etcd3's fault handling off. */
function withRecipe(): Etcd3 {
  return etcdClient(etcdOptions(server.address, etcdServiceConfig()));
}

/** `get(key)` as a string; resolves with the value, or with the error it failed with. */
async function get(client: Etcd3, key: string, options?: CallOptions): Promise<unknown> {
  try {
    const builder = client.get(key);
    return await (options === undefined ? builder : builder.options(options)).string();
  } catch (error) {
    return error;
  }
}

describe('etcd3 client with the interceptor', () => {
  beforeAll(async () => {
    server = await startEtcdBackend();
  });
  beforeEach(() => server.reset());
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('the recipe: a Range that fails twice is answered by its third attempt', async () => {
    server.scriptMethod(ETCD_RANGE, [
      { status: 'UNAVAILABLE' },
      { status: 'UNAVAILABLE' },
      { response: { kvs: [{ key: Buffer.from('foo'), value: Buffer.from('bar') }], count: 1 } },
    ]);
    expect(await get(withRecipe(), 'foo')).toBe('bar');
    const attempts = server.attemptsOf<{ key: Buffer }>(ETCD_RANGE);
    expect(attempts.map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
    expect(attempts.map((a) => a.endedWith)).toEqual([14, 14, 0]);
    expect(attempts.map((a) => a.requests[0]?.key.toString())).toEqual(['foo', 'foo', 'foo']);

    // A Range that always fails: the policy's maxAttempts (4), and etcd3 tries no more.
    server.reset();
    server.scriptMethod(ETCD_RANGE, [{ status: 'UNAVAILABLE' }]);
    expect(await get(withRecipe(), 'foo')).toBeInstanceOf(GRPCUnavailableError);
    expect(server.attemptsOf(ETCD_RANGE)).toHaveLength(4);
  });

  it("with etcd3's own fault handling left on, the attempts multiply", async () => {
    server.scriptMethod(ETCD_RANGE, [{ status: 'UNAVAILABLE' }]);
    const client = etcdClient({
      hosts: server.address,
      grpcOptions: { interceptors: [createRetryInterceptor(etcdServiceConfig())] },
    });
    expect(await get(client, 'foo')).toBeInstanceOf(GRPCUnavailableError);
    // etcd3's global policy tries each call 3 times (cockatiel retry, no backoff), and each try is a new gRPC
    // call that the interceptor tries maxAttempts (4) times: 3 × 4 = 12. Its host breaker (3 consecutive
    // failures) opens on the third try, so it refuses this client's next calls for 5 s: a fresh client per case.
    const attempts = server.attemptsOf(ETCD_RANGE);
    expect(attempts).toHaveLength(12);
    // Each of etcd3's tries is a new call: the header restarts, so the server cannot tell them apart from calls.
    expect(attempts.map((a) => a.previousRpcAttempts)).toEqual([
      undefined,
      1,
      2,
      3,
      undefined,
      1,
      2,
      3,
      undefined,
      1,
      2,
      3,
    ]);
  });

  it('withRetryOptions({ enabled: false }) through .options(...) makes one attempt', async () => {
    server.scriptMethod(ETCD_RANGE, [{ status: 'UNAVAILABLE' }, {}]);
    expect(await get(withRecipe(), 'foo', withRetryOptions({ enabled: false }))).toBeInstanceOf(
      GRPCUnavailableError,
    );
    expect(server.attemptsOf(ETCD_RANGE)).toHaveLength(1);
  });

  it("retryOutcomeOf: etcd3's errors are its own (built from the message), so it does not tell; onEvent does", async () => {
    server.scriptMethod(ETCD_RANGE, [{ status: 'UNAVAILABLE' }]);
    const ends: RetryEvent[] = [];
    const onEvent = (e: RetryEvent) => e.type === 'call-end' && ends.push(e);
    const client = etcdClient({
      ...etcdOptions(server.address, etcdServiceConfig()),
      grpcOptions: { interceptors: [createRetryInterceptor(etcdServiceConfig(), { onEvent })] },
    });
    const error = await get(client, 'foo');
    expect(error).toBeInstanceOf(GRPCUnavailableError);
    expect(retryOutcomeOf(error)).toBeUndefined();
    expect(ends).toMatchObject([{ attempts: 4, reason: 'attempts-exhausted' }]);
  });

  it('the example runs', async () => {
    expect(await main(() => {})).toEqual({
      value: 'bar',
      attempts: ['UNAVAILABLE', 'UNAVAILABLE', 'OK'],
      previousRpcAttempts: [undefined, 1, 2],
    });
  });
});
