/**
 * grpc-js's own retries under the interceptor (a retry or hedging policy left in the channel's
 * `grpc.service_config`) retry each of its attempts again. grpc-js puts `grpc-previous-rpc-attempts` into what its
 * later attempts return; the interceptor sees it in a failed attempt's trailers and reports it once.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
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
afterEach(() => {
  vi.restoreAllMocks();
});

const CODE = 'GRPC_RETRY_HEDGING_CHANNEL_RETRIES';
const down = (n: number) => Array.from({ length: n }, () => ({ status: 'UNAVAILABLE' as const }));
/** grpc-js's own retries on: the channel option these tests pass to override the harness's default of 0. */
const RETRIES_ON = { 'grpc.enable_retries': 1 };

describe('retries of grpc-js under the interceptor', () => {
  it("a retry policy in the channel's service config: the attempts multiply, and the interceptor says so once", async () => {
    const emitted: CapturedWarning[] = captureWarnings();
    const config = retryConfig({ maxAttempts: 3 });
    const client = testClient(server.address, [createRetryInterceptor(config)], {
      ...RETRIES_ON,
      'grpc.service_config': JSON.stringify(config),
    });
    try {
      server.script('below-1', down(9));
      server.script('below-2', down(9));
      expect((await unary(client, 'below-1')).code).toBe(status.UNAVAILABLE);
      expect((await unary(client, 'below-2')).code).toBe(status.UNAVAILABLE);
    } finally {
      client.close();
    }
    expect(server.attempts('below-1')).toHaveLength(9);
    expect(emitted.map((w) => w.code)).toEqual([CODE]);
    expect(emitted[0]?.message).toContain('another retry layer runs inside this one');
    expect(emitted[0]?.message).toContain("grpc-js's own retries");
    expect(emitted[0]?.message).toContain('createChannelOptions(config)');
  });

  it("grpc-js's own retries that succeed below: the interceptor says so too, from the answer's headers", async () => {
    const emitted: CapturedWarning[] = captureWarnings();
    const config = retryConfig({ maxAttempts: 3 });
    const client = testClient(server.address, [createRetryInterceptor(config)], {
      ...RETRIES_ON,
      'grpc.service_config': JSON.stringify(config),
    });
    try {
      server.script('below-ok', [{ status: 'UNAVAILABLE' }, { status: 'UNAVAILABLE' }, {}]);
      expect((await unary(client, 'below-ok')).code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(server.attempts('below-ok')).toHaveLength(3);
    expect(emitted.map((w) => w.code)).toEqual([CODE]);
  });

  it('the same config split by createChannelOptions: maxAttempts attempts, no warning', async () => {
    const emitted: CapturedWarning[] = captureWarnings();
    const config = retryConfig({ maxAttempts: 3 });
    const client = testClient(server.address, [createRetryInterceptor(config)], {
      ...RETRIES_ON,
      ...createChannelOptions(config),
    });
    try {
      server.script('split', down(3));
      expect((await unary(client, 'split')).code).toBe(status.UNAVAILABLE);
    } finally {
      client.close();
    }
    expect(server.attempts('split')).toHaveLength(3);
    expect(emitted).toEqual([]);
  });

  it('a server that echoes the header it was sent is no retry layer: no warning', async () => {
    const emitted: CapturedWarning[] = captureWarnings();
    const client = testClient(server.address, [createRetryInterceptor(retryConfig({ maxAttempts: 3 }))]);
    try {
      server.script('echo', [
        { status: 'UNAVAILABLE' },
        { status: 'UNAVAILABLE', trailers: { 'grpc-previous-rpc-attempts': '1' } },
        { status: 'UNAVAILABLE', trailers: { 'grpc-previous-rpc-attempts': '2' } },
      ]);
      expect((await unary(client, 'echo')).code).toBe(status.UNAVAILABLE);
    } finally {
      client.close();
    }
    expect(server.attempts('echo')).toHaveLength(3);
    expect(emitted).toEqual([]);
  });
});
