/**
 * Two retry layers on one call path multiply attempts (each outer attempt is retried again). The inner interceptor
 * sees the outer one's `grpc-previous-rpc-attempts` on the metadata it is handed, and reports it once.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';
import { type CapturedWarning, captureWarnings } from '../helpers/warnings.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

let emitted: CapturedWarning[] = [];
afterEach(() => {
  vi.restoreAllMocks();
});

/** `n` failing attempts (a script's last entry repeats for later attempts). */
const down = (n: number) => Array.from({ length: n }, () => ({ status: 'UNAVAILABLE' as const }));

describe('nested retry layers', () => {
  it('two retry interceptors on one client: the attempts multiply, and each says so once (the outer one sees a layer inside it, the inner one a layer outside)', async () => {
    emitted = captureWarnings();
    const config = retryConfig({ maxAttempts: 2 });
    const client = testClient(server.address, [
      createRetryInterceptor(config),
      createRetryInterceptor(config),
    ]);
    try {
      server.script('nested-1', down(1));
      server.script('nested-2', down(1));
      expect((await unary(client, 'nested-1')).code).toBe(status.UNAVAILABLE);
      expect((await unary(client, 'nested-2')).code).toBe(status.UNAVAILABLE);
    } finally {
      client.close();
    }
    expect(server.attempts('nested-1')).toHaveLength(4);
    // The outer one's first attempt comes back with the inner one's count before the outer one retries.
    expect(emitted.map((w) => w.code)).toEqual([
      'GRPC_RETRY_HEDGING_CHANNEL_RETRIES',
      'GRPC_RETRY_HEDGING_NESTED_RETRIES',
    ]);
    expect(emitted[0]?.message).toContain('another retry layer runs inside this one');
    expect(emitted[1]?.message).toContain('another retry layer runs outside this one');
  });

  it('one retry interceptor: no warning, however many attempts a call makes', async () => {
    emitted = captureWarnings();
    const client = testClient(server.address, [createRetryInterceptor(retryConfig({ maxAttempts: 3 }))]);
    try {
      server.script('single', [...down(2), {}]);
      expect((await unary(client, 'single')).code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(server.attempts('single')).toHaveLength(3);
    expect(emitted).toEqual([]);
  });
});
