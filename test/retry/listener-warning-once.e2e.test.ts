/**
 * A throwing per-call listener (`withRetryOptions({ onEvent })`) warns once, however many calls pass it: the
 * package's warnings come once per listener, never per call.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import { retryConfig, testClient, unary } from '../helpers/harness.js';
import { captureWarnings } from '../helpers/warnings.js';

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

const listenerErrors = (warnings: ReturnType<typeof captureWarnings>) =>
  warnings.filter((w) => w.code === 'GRPC_RETRY_HEDGING_LISTENER_ERROR');

describe('a throwing per-call listener', () => {
  it('warns once for one function passed to many calls, and once more for another function', async () => {
    const warnings = captureWarnings();
    const client = testClient(server.address, [createRetryInterceptor(retryConfig())]);
    let calls = 0;
    const listener = () => {
      calls += 1;
      throw new Error('boom');
    };
    try {
      for (let i = 0; i < 10; i++) {
        const outcome = await unary(client, `warn-once-${i}`, undefined, {
          callOptions: withRetryOptions({ onEvent: listener }),
        });
        expect(outcome.error).toBeUndefined(); // the call goes on
      }
      expect(calls).toBeGreaterThanOrEqual(10); // still called on every call
      expect(listenerErrors(warnings)).toHaveLength(1);

      const other = () => {
        throw new Error('bang');
      };
      await unary(client, 'warn-once-other', undefined, {
        callOptions: withRetryOptions({ onEvent: [other] }),
      });
      await unary(client, 'warn-once-other-2', undefined, {
        callOptions: withRetryOptions({ onEvent: [listener, other] }),
      });
      const errors = listenerErrors(warnings);
      expect(errors).toHaveLength(2);
      expect(errors[1]?.message).toMatch(/bang/);
    } finally {
      client.close();
    }
  });
});
