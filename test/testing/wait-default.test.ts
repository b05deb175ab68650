/** waitFor and waitForAttempts give up before a test runner's 5 s, with their own message (first-hour audit). */
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

describe('FlakyServer waits', () => {
  it('give up after 4 s by default, saying what they waited for', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      const waited = expect(server.waitFor(() => false)).rejects.toThrow(
        'FlakyServer.waitFor: condition not met within 4000 ms',
      );
      const attempts = expect(server.waitForAttempts('never', 2)).rejects.toThrow(
        'FlakyServer.waitForAttempts: call id "never" has 0 of 2 attempts after 4000 ms',
      );
      await vi.advanceTimersByTimeAsync(3990);
      let settled = false;
      void Promise.race([waited, attempts]).then(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(20);
      await waited;
      await attempts;
    } finally {
      vi.useRealTimers();
    }
  });
});
