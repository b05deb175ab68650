/**
 * An attempt whose deadline status never comes: an interceptor below the retry interceptor holds the attempt's
 * start (an auth interceptor awaiting a token) while the deadline passes, so grpc-js's deadline timer ends that
 * attempt before it has a listener and the status is lost. Found by an outside audit of interceptor stacks: the
 * call never ended (a retried call whose retry was held hung, where without the interceptor it would have ended
 * UNAVAILABLE). The engine now ends an uncommitted call itself 100 ms past its deadline (docs/configuration.md,
 * "Deadline and cancel"), and only then.
 *
 * A scripted attempt that is never answered is exactly that attempt, as the engine sees it.
 */
import { describe, expect, it } from 'vitest';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

describe('the deadline of an attempt whose status never comes', () => {
  it('retry: the first attempt held past the deadline; the call ends DEADLINE_EXCEEDED 100 ms after it', async () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 200 });
    h.clock.advance(299);
    await h.settle();
    expect(h.received.statuses).toEqual([]); // grpc-js's own status may still come until then
    h.clock.advance(1);
    await h.settle();
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempt(0).cancelled).toBeDefined(); // the held attempt is cancelled
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.DEADLINE_EXCEEDED, reason: 'deadline', attempts: 1 }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('retry: a retry held past the deadline ends the call, naming the failure it was retrying', async () => {
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), { deadlineMs: 200 });
    h.attempt(0).fail();
    h.clock.advance(10);
    expect(h.attempts).toHaveLength(2); // the retry went to the next interceptor, which holds it
    h.clock.advance(290);
    await h.settle();
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toBe(
      'Deadline exceeded while retrying (last failed attempt: UNAVAILABLE attempt 1 failed)',
    );
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('hedging: every attempt held; the call ends once, 100 ms past the deadline', async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.05s' }), { deadlineMs: 200 });
    h.clock.advance(120);
    expect(h.attempts).toHaveLength(3);
    h.clock.advance(180);
    await h.settle();
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts.every((a) => a.cancelled !== undefined)).toBe(true);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("grpc-js's deadline status, when it comes, is the call's: the watch ends nothing", async () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 200 });
    h.clock.advance(200);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.200s');
    await h.settle();
    h.clock.advance(1000);
    await h.settle();
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded after 0.200s',
    });
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('leaves no timer once the call commits, and none without a deadline', async () => {
    const withDeadline = engineCall(retryPolicy(), { deadlineMs: 60_000 });
    expect(withDeadline.clock.pendingTimers).toBe(1);
    withDeadline.attempt(0).succeed();
    expect(withDeadline.status.code).toBe(Status.OK);
    expect(withDeadline.clock.pendingTimers).toBe(0);
    const without = engineCall(retryPolicy());
    expect(without.clock.pendingTimers).toBe(0);
    without.clock.advance(10 * 60_000);
    await without.settle();
    expect(without.received.statuses).toEqual([]); // no deadline: nothing ends the call but its attempt
  });
});
