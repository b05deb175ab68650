/**
 * A test that freezes `Date` and keeps the real timers (`vi.useFakeTimers({ toFake: ['Date'] })`, as
 * `vi.setSystemTime`, mockdate and timekeeper do): a call's deadline still bounds all its attempts, as it does
 * under grpc-js's own retries (runners-and-fake-timers audit: 4 attempts and about 1.3 s for a 300 ms deadline,
 * against grpc-js's 1 attempt at 300 ms).
 */
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/index.js';
import { FlakyServer } from '../../src/testing/flaky-server.js';
import { callMetadata, FLAKY, type FlakyClient, testClient } from '../helpers/harness.js';

const grpcJsPackage = createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string };

const CONFIG = {
  methodConfig: [
    {
      name: [{ service: FLAKY }],
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.01s',
        maxBackoff: '0.01s',
        backoffMultiplier: 1,
        retryableStatusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'],
      },
    },
  ],
};

const realNow = performance.now.bind(performance);

/**
 * grpc-js's own retries under a frozen Date: 1.14 ends the call at its deadline; 1.10.10 (the oldest grpc-js the
 * package supports, which CI also runs) spins at 100% CPU and never returns, so the comparison runs on 1.14 and
 * later only, and the interceptor's side on every version.
 */
const [major = 0, minor = 0] = (grpcJsPackage.version as string).split('.').map(Number);
const builtInSurvivesFrozenDate = major > 1 || (major === 1 && minor >= 14);

let server: FlakyServer;
let withInterceptor: FlakyClient;
let builtIn: FlakyClient;
beforeAll(async () => {
  server = await FlakyServer.start();
  withInterceptor = testClient(server.address, [createRetryInterceptor(CONFIG)]);
  builtIn = testClient(server.address, [], {
    'grpc.enable_retries': 1,
    'grpc.service_config': JSON.stringify(CONFIG),
  });
});
afterEach(() => {
  vi.useRealTimers();
  server.reset();
});
afterAll(async () => {
  withInterceptor.close();
  builtIn.close();
  await server.stop();
});

/** A unary call to an attempt that answers after 2 s, with a 300 ms deadline read off the frozen Date. */
function slowCall(client: FlakyClient, callId: string): Promise<{ code: number; ms: number }> {
  server.script(callId, [{ delayMs: 2_000 }]);
  const start = realNow();
  return new Promise((resolve) => {
    client.Unary(
      { payload: 'x' },
      callMetadata(callId),
      { deadline: Date.now() + 300 },
      (error: grpc.ServiceError | null) => resolve({ code: error?.code ?? 0, ms: realNow() - start }),
    );
  });
}

describe('a frozen Date with real timers', () => {
  it('the deadline bounds every attempt, as under grpc-js own retries', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const [ours, theirs] = await Promise.all([
      slowCall(withInterceptor, 'ours'),
      builtInSurvivesFrozenDate ? slowCall(builtIn, 'theirs') : undefined,
    ]);
    if (theirs !== undefined) {
      expect(theirs.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(server.attempts('theirs')).toHaveLength(1);
    }
    expect(ours.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(server.attempts('ours')).toHaveLength(1);
    // 300 ms each, with room for a loaded machine; before, ours took about 1.3 s.
    expect(ours.ms).toBeLessThan(900);
  });
});
