/**
 * A methodConfig `timeout` longer than a grpc-js server can time (about 24.8 days; the proto Duration allows up to
 * 10,000 years) is held at 2^31 - 1 - 1000 ms. Applied as it was, it reached the server as a grpc-timeout of 2^31 ms
 * or more, whose setTimeout fired at once: every call the server took a moment over ended DEADLINE_EXCEEDED.
 */

import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import { FLAKY, startHarness, unary } from '../helpers/harness.js';
import { oneEntryConfig } from '../helpers/service-configs.js';

let server: FlakyServer;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

const RETRY = {
  retryPolicy: {
    maxAttempts: 3,
    initialBackoff: '0.01s',
    maxBackoff: '0.01s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  },
};

describe('a config timeout past the longest timer', () => {
  for (const timeout of ['3000000s', '315576000000s']) {
    it(`${timeout}: the call runs to its answer`, async () => {
      const h = await startHarness(oneEntryConfig(FLAKY, RETRY, { timeout }), {}, server);
      try {
        const callId = `long-timeout-${timeout}`;
        server.script(callId, [{ status: status.UNAVAILABLE }, { delayMs: 50 }]);
        const outcome = await unary(h.client, callId);
        expect([outcome.code, outcome.error?.details]).toEqual([status.OK, undefined]);
        expect(server.attempts(callId)).toHaveLength(2);
      } finally {
        await h.close();
      }
    });
  }
});
