/**
 * waitFor and waitForAttempts give up before a test runner's 5 s, with their own message (first-hour audit), in
 * real time even when the test fakes the global timers (runners-and-fake-timers audit).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FlakyServer } from '../../src/testing/flaky-server.js';

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  vi.useRealTimers();
  await server.stop();
});

/** Real milliseconds, whatever the fakes do to `Date`. */
const realNow = performance.now.bind(performance);

describe('FlakyServer waits', () => {
  it('give up after 4 s by default, saying what they waited for', { timeout: 15_000 }, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      const start = realNow();
      const ended: number[] = [];
      const waited = server.waitFor(() => false).finally(() => ended.push(realNow() - start));
      const attempts = server.waitForAttempts('never', 2).finally(() => ended.push(realNow() - start));
      // Both handled from the start: the two reject within a tick of each other.
      await Promise.all([
        expect(waited).rejects.toThrow('FlakyServer.waitFor: condition not met within 4000 ms'),
        expect(attempts).rejects.toThrow(
          'FlakyServer.waitForAttempts: call id "never" has 0 of 2 attempts after 4000 ms',
        ),
      ]);
      for (const ms of ended) {
        expect(ms).toBeGreaterThanOrEqual(3_990);
        expect(ms).toBeLessThan(9_000);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
