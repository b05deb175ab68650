/**
 * Calls that fail while the channel has no connection (the server went away): grpc-js gives them all one trailers
 * object, and nothing one call's retries add to it may reach another call.
 */
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, startHarness, unary } from '../helpers/harness.js';
import { captureWarnings } from '../helpers/warnings.js';

let server: FlakyServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('retried calls after the server has gone away', () => {
  it('each fail UNAVAILABLE with their own attempt count, and no nested-retries warning', async () => {
    const warnings = captureWarnings();
    server = await FlakyServer.start();
    const h = await startHarness(
      retryConfig({ maxAttempts: 3, initialBackoff: '0.01s', maxBackoff: '0.01s' }),
      {},
      server,
    );
    try {
      server.script('warm', [{}]);
      expect((await unary(h.client, 'warm')).code).toBe(status.OK);
      await server.stop();
      server = undefined;
      const first = await unary(h.client, 'gone-1', undefined, { deadlineMs: 5000 });
      const second = await unary(h.client, 'gone-2', undefined, { deadlineMs: 5000 });
      expect([first.code, second.code]).toEqual([status.UNAVAILABLE, status.UNAVAILABLE]);
      expect(first.trailers).not.toBe(second.trailers);
      expect(first.error?.metadata.get('grpc-previous-rpc-attempts')).toEqual(['2']);
      expect(second.error?.metadata.get('grpc-previous-rpc-attempts')).toEqual(['2']);
      expect(warnings.map((w) => w.code)).not.toContain('GRPC_RETRY_HEDGING_CHANNEL_RETRIES');
    } finally {
      await h.close();
    }
  });
});
