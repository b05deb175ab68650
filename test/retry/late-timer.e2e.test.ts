/**
 * The event loop is held (a GC pause, a long handler) from a backoff's start until past the call's deadline: the
 * backoff timer then fires late, and the retry it would send must not go out after the deadline.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRetryOptions } from '../../src/retry/call-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { FlakyServer } from '../../src/testing/index.js';
import { eventsOf, retryConfig, sleep, startHarness, unary } from '../helpers/harness.js';

let server: FlakyServer;
let n = 0;
const id = () => `late-timer-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

describe('a backoff timer that fires after the deadline (the event loop was held)', () => {
  it('sends no retry: the call ends with DEADLINE_EXCEEDED and the server sees one attempt', async () => {
    const h = await startHarness(retryConfig({ initialBackoff: '0.1s', maxBackoff: '0.1s' }), {}, server);
    try {
      // The channel connects first, so that the first attempt's failure comes well before the deadline.
      const warm = id();
      server.script(warm, [{}]);
      expect((await unary(h.client, warm)).code).toBe(status.OK);
      let held = 0;
      // A loaded machine may answer the first attempt too late for the scenario: that try does not count.
      for (let i = 0; i < 4 && held < 2; i++) {
        const c = id();
        server.script(c, [{ status: status.UNAVAILABLE }, {}, {}]);
        const deadline = Date.now() + 200;
        const events: RetryEvent[] = [];
        const onEvent = (e: RetryEvent) => {
          events.push(e);
          if (e.type === 'retry-scheduled' && Date.now() < deadline - 50) {
            held += 1;
            // Busy from the start of the 100 ms backoff (its timer is armed) until 20 ms past the deadline.
            setImmediate(() => {
              while (Date.now() < deadline + 20) {
                // held
              }
            });
          }
        };
        const out = await unary(h.client, c, undefined, {
          callOptions: withRetryOptions({ onEvent }, { deadline }),
        });
        expect(out.code).toBe(status.DEADLINE_EXCEEDED);
        await sleep(20);
        if (eventsOf(events, 'retry-scheduled').length > 0) {
          expect(eventsOf(events, 'attempt-start').map((e) => e.attempt)).toEqual([1]);
          expect(server.attempts(c)).toHaveLength(1);
        }
      }
      expect(held).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
  });
});
