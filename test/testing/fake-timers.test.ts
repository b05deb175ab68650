/**
 * The flaky server runs in real time in a test that fakes the global timers and `Date` (runners-and-fake-timers
 * audit): its waits give up, scripted delays end and `stop()` returns without the test advancing fake time. The
 * fakes are those grpc-js itself works under (setImmediate and nextTick stay real).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CALL_ID_METADATA_KEY, FlakyServer } from '../../src/testing/index.js';
import { type FlakyClient, testClient } from '../helpers/harness.js';

const GLOBAL_TIMER_FAKES: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
};

/** Real milliseconds, whatever the fakes do to `Date`. */
const realNow = performance.now.bind(performance);

function unaryCall(client: FlakyClient, callId: string): Promise<grpc.ServiceError | null> {
  const metadata = new grpc.Metadata();
  metadata.set(CALL_ID_METADATA_KEY, callId);
  return new Promise((resolve) => {
    client.Unary({ payload: 'x' }, metadata, (error: grpc.ServiceError | null) => resolve(error));
  });
}

let server: FlakyServer;
let client: FlakyClient;
beforeAll(async () => {
  server = await FlakyServer.start();
  client = testClient(server.address);
});
afterEach(() => {
  vi.useRealTimers();
  server.reset();
});
afterAll(async () => {
  client.close();
  await server.stop();
});

describe('the flaky server under fake global timers', () => {
  it('waitFor gives up after its timeout in real time, with its message', async () => {
    vi.useFakeTimers(GLOBAL_TIMER_FAKES);
    const start = realNow();
    await expect(server.waitFor(() => false, 100)).rejects.toThrow(
      'FlakyServer.waitFor: condition not met within 100 ms',
    );
    expect(realNow() - start).toBeLessThan(2_000);
  });

  it('a scripted delay ends, and waitForAttempts sees the attempt', async () => {
    vi.useFakeTimers(GLOBAL_TIMER_FAKES);
    server.script('delayed', [{ delayMs: 50 }]);
    const start = realNow();
    const outcome = unaryCall(client, 'delayed');
    const attempts = await server.waitForAttempts('delayed', 1, 2_000);
    expect(attempts).toHaveLength(1);
    expect(await outcome).toBeNull();
    const took = realNow() - start;
    expect(took).toBeGreaterThanOrEqual(45);
    expect(took).toBeLessThan(2_000);
  });

  it('stop() cancels what is still running after its grace, and returns', async () => {
    const own = await FlakyServer.start();
    const ownClient = testClient(own.address);
    try {
      own.script('hangs', [{ delayMs: 60_000 }]);
      const outcome = unaryCall(ownClient, 'hangs');
      await own.waitForAttempts('hangs', 1);
      vi.useFakeTimers(GLOBAL_TIMER_FAKES);
      const start = realNow();
      await own.stop(100);
      expect(realNow() - start).toBeLessThan(2_000);
      expect((await outcome)?.code).toBeDefined();
      expect(own.attempts('hangs')[0]?.cutOffByStop).toBe(true);
    } finally {
      vi.useRealTimers();
      ownClient.close();
    }
  });
});
