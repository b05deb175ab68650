/**
 * The call's deadline at its edges, under fake time: a DEADLINE_EXCEEDED that grpc-js reports a millisecond before the
 * clock reads the deadline (hedging), and a retry or hedge timer that fires late, past the deadline, because the
 * event loop was held.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock as LateTimersClock } from '../adaptive/fake-clock.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';

describe("engine: hedging, a DEADLINE_EXCEEDED 1 ms before the clock reads the call's deadline", () => {
  const policy = hedgingPolicy({
    maxAttempts: 5,
    hedgingDelay: '0.04s',
    nonFatalStatusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'],
  });

  it('sends no further hedge: the call ends with that status once no attempt is live', () => {
    const h = engineCall(policy, { deadlineMs: 100 });
    h.clock.advance(80);
    expect(h.attempts).toHaveLength(3);
    // grpc-js's deadline timer of attempt 2 fires while Date.now() still reads 1 ms before the deadline.
    h.clock.advance(19);
    h.attempt(1).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.040s');
    expect(h.attempts).toHaveLength(3);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => e.reason)).not.toContain('non-fatal-status');
    expect(h.received.statuses).toEqual([]); // attempts 1 and 3 are still live
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.099s');
    h.attempt(2).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.019s');
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded,previous attempts: 2,current attempt: 0.019s',
    });
    expect(h.attempts).toHaveLength(3);
    expect(eventsOfType(h.events, 'hedge-sent')).toHaveLength(2);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("the call's other hedges are counted, whichever attempt reports the deadline last", () => {
    const h = engineCall(policy, { deadlineMs: 100 });
    h.clock.advance(99);
    expect(h.attempts).toHaveLength(3);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.099s');
    h.attempt(2).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.019s');
    h.attempt(1).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.059s,LB pick: 0.001s');
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded,previous attempts: 2,current attempt: 0.059s,LB pick: 0.001s',
    });
  });

  it('the live attempts may also end at the deadline, as grpc-js reports it then', () => {
    const h = engineCall(policy, { deadlineMs: 100 });
    h.clock.advance(99);
    h.attempt(1).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    h.clock.advance(1);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    h.attempt(2).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(3);
  });

  it('a DEADLINE_EXCEEDED well before the deadline still sends the next hedge at once (A6)', () => {
    const h = engineCall(policy, { deadlineMs: 100 });
    h.clock.advance(50);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'the server gave up');
    expect(h.attempts).toHaveLength(3);
    expect(eventsOfType(h.events, 'hedge-scheduled').map((e) => e.reason)).toContain('non-fatal-status');
  });
});

describe('engine: a timer that fires late, past the deadline (the event loop was held)', () => {
  /** A call under a clock whose timers fire late once the test moves the time on without firing them. */
  function lateCall(config: object) {
    const clock = new LateTimersClock(T0);
    const h = engineCall(config, { interceptor: { clock }, callOptions: { deadline: T0 + 60 } });
    /** The event loop is held until `ms` after the start; then the timers due meanwhile fire, late. */
    const holdUntil = (ms: number) => {
      clock.set(T0 + ms);
      clock.advance(0);
    };
    return { h, clock, holdUntil };
  }

  it('a retry whose backoff ends after the deadline is not sent: the call ends with DEADLINE_EXCEEDED', async () => {
    const { h, holdUntil } = lateCall(retryPolicy({ initialBackoff: '0.02s', maxBackoff: '0.02s' }));
    h.attempt(0).fail();
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([
      expect.objectContaining({ attempt: 2, delayMs: 20 }),
    ]);
    holdUntil(90);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while waiting to retry \(last attempt: UNAVAILABLE/);
  });

  it("a hedge whose timer fires after the deadline is not sent: the attempt's deadline status from grpc-js ends the call", async () => {
    const { h, holdUntil } = lateCall(hedgingPolicy({ hedgingDelay: '0.03s' }));
    holdUntil(90);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toEqual([]);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.090s');
    await h.settle();
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded after 0.090s',
    });
    expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
  });

  it("a hedge waited for with nothing in flight (the server's delay) is not sent after the deadline", async () => {
    const { h, holdUntil } = lateCall(hedgingPolicy({ hedgingDelay: '0.03s' }));
    h.attempt(0).fail(Status.UNAVAILABLE, { 'grpc-retry-pushback-ms': '20' });
    holdUntil(90);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while hedging \(last attempt: UNAVAILABLE/);
  });

  it('a late hedge timer defers its hedge past the pending I/O; when the clock passes the deadline meanwhile, the call ends', async () => {
    const { h, clock, holdUntil } = lateCall(hedgingPolicy({ hedgingDelay: '0.03s' }));
    holdUntil(45); // 15 ms late: the hedge waits for the I/O polled meanwhile (setImmediate)
    expect(h.attempts).toHaveLength(1);
    clock.set(T0 + 61); // that I/O took past the deadline
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.received.statuses).toEqual([]); // grpc-js's deadline timer of the attempt is due
    holdUntil(161); // it never came: the call ends by itself
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    expect(h.attempt(0).cancelled).toBeDefined();
  });

  it('a deferred hedge whose I/O took the clock to the deadline exactly: the deadline has come, the call ends', async () => {
    const { h, clock, holdUntil } = lateCall(hedgingPolicy({ hedgingDelay: '0.03s' }));
    holdUntil(45);
    clock.set(T0 + 60);
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    holdUntil(160);
    await h.settle();
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
  });

  it('a late hedge timer whose deferred hedge comes before the deadline still sends it', async () => {
    const { h, holdUntil } = lateCall(hedgingPolicy({ hedgingDelay: '0.03s' }));
    holdUntil(45);
    await h.settle();
    expect(h.attempts).toHaveLength(2);
    expect(h.received.statuses).toEqual([]);
  });

  it('a timer that fires late but before the deadline still sends its attempt', async () => {
    const { h, holdUntil } = lateCall(retryPolicy({ initialBackoff: '0.02s', maxBackoff: '0.02s' }));
    h.attempt(0).fail();
    holdUntil(59);
    await h.settle();
    expect(h.attempts).toHaveLength(2);
    expect(h.received.statuses).toEqual([]);
  });
});

describe('engine: a failure the policy would retry or hedge past, arriving once the deadline has passed', () => {
  it('retry: the call ends with DEADLINE_EXCEEDED, not with the failure a retry was meant to hide', () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 50 });
    h.clock.advance(50); // the server's UNAVAILABLE comes in before grpc-js's deadline timer has fired
    h.attempt(0).fail(Status.UNAVAILABLE, { 'x-replica': 'a' });
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while waiting to retry \(last attempt: UNAVAILABLE/);
    // Not the failed attempt's trailers, and no attempt answered, so no grpc-previous-rpc-attempts either.
    expect(h.status.metadata.get('x-replica')).toEqual([]);
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.DEADLINE_EXCEEDED, attempts: 1 }),
    ]);
  });

  it("retry: a DEADLINE_EXCEEDED then is the call's own status, kept as grpc-js gave it", () => {
    const h = engineCall(retryPolicy({ retryableStatusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'] }), {
      deadlineMs: 50,
    });
    h.clock.advance(50);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.050s');
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded after 0.050s',
    });
  });

  it('hedging, a further hedge to come: the call ends with DEADLINE_EXCEEDED while its other hedge is live', () => {
    const clock = new LateTimersClock(T0);
    const h = engineCall(hedgingPolicy({ maxAttempts: 3, hedgingDelay: '0.02s' }), {
      interceptor: { clock },
      callOptions: { deadline: T0 + 50 },
    });
    clock.advance(20);
    expect(h.attempts).toHaveLength(2);
    clock.set(T0 + 50); // the deadline's timer has not fired yet
    h.attempt(1).fail(Status.UNAVAILABLE);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/^Deadline exceeded while hedging \(last attempt: UNAVAILABLE/);
    expect(h.attempt(0).cancelled).toBeDefined();
    expect(h.attempts).toHaveLength(2);
  });

  it('hedging, no hedge left to send: the failure waits for the live hedges, as before the deadline', () => {
    const h = engineCall(hedgingPolicy({ maxAttempts: 3, hedgingDelay: '0.01s' }), { deadlineMs: 50 });
    h.clock.advance(20);
    expect(h.attempts).toHaveLength(3);
    h.clock.advance(30);
    h.attempt(1).fail(Status.UNAVAILABLE);
    expect(h.received.statuses).toEqual([]);
    h.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    h.attempt(2).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded');
    expect(h.status).toMatchObject({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
  });

  it("retry: the last attempt's failure then is the call's, as no retry was coming (grpc-js's too)", () => {
    const h = engineCall(retryPolicy({ maxAttempts: 2, initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      deadlineMs: 50,
    });
    h.attempt(0).fail();
    h.clock.advance(10);
    expect(h.attempts).toHaveLength(2);
    h.clock.advance(40);
    h.attempt(1).fail(Status.UNAVAILABLE, { 'x-replica': 'b' });
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(h.status.metadata.get('x-replica')).toEqual(['b']);
  });

  it("retry: a server's don't-retry pushback then is the call's failure too", () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 50 });
    h.clock.advance(50);
    h.attempt(0).fail(Status.UNAVAILABLE, { 'grpc-retry-pushback-ms': '-1' });
    expect(h.status.code).toBe(Status.UNAVAILABLE);
  });

  it('a fatal status then is still the call’s: no retry was asked for', () => {
    const h = engineCall(retryPolicy(), { deadlineMs: 50 });
    h.clock.advance(50);
    h.attempt(0).fail(Status.PERMISSION_DENIED);
    expect(h.status.code).toBe(Status.PERMISSION_DENIED);
  });
});

describe("engine: grpc-js's deadline diagnostic of a later attempt", () => {
  const retries = retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' });

  it("retry: the time is the current attempt's, and the attempts before it are counted", () => {
    const h = engineCall(retries, { deadlineMs: 100 });
    h.attempt(0).fail();
    h.clock.runNext();
    h.clock.advance(80);
    h.attempt(1).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.088s,LB pick: 0.001s');
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'Deadline exceeded,previous attempts: 1,current attempt: 0.088s,LB pick: 0.001s',
    });
  });

  it('a committed later attempt is relabelled too', () => {
    const h = engineCall(retries, { deadlineMs: 100 });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).headers();
    h.attempt(1).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.085s');
    expect(h.status.details).toBe('Deadline exceeded,previous attempts: 1,current attempt: 0.085s');
  });

  it("left as it is: the first attempt's, a server's own details, and another code", () => {
    const first = engineCall(retries, { deadlineMs: 100 });
    first.attempt(0).status(Status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.100s');
    expect(first.status.details).toBe('Deadline exceeded after 0.100s');

    const server = engineCall(retries, { deadlineMs: 100 });
    server.attempt(0).fail();
    server.clock.runNext();
    server.attempt(1).status(Status.DEADLINE_EXCEEDED, 'backend took too long');
    expect(server.status.details).toBe('backend took too long');

    const other = engineCall(retries, { deadlineMs: 100 });
    other.attempt(0).fail();
    other.clock.runNext();
    other.attempt(1).status(Status.INTERNAL, 'Deadline exceeded after 0.001s');
    expect(other.status).toMatchObject({ code: Status.INTERNAL, details: 'Deadline exceeded after 0.001s' });
  });
});

describe('engine: hedging with a hedgingDelay of 0s, a call whose deadline has passed when it starts', () => {
  const policy = hedgingPolicy({ maxAttempts: 3, hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] });

  // Found by differential testing against a bare grpc-js client: the two hedges went out with the first attempt,
  // after the deadline, and grpc-js's own status of the call ("Deadline exceeded after 0.000s,...") was reworded
  // as that of the third of three attempts.
  for (const deadlineMs of [0, -5]) {
    it(`deadline ${deadlineMs} ms from now: one attempt goes, and its deadline status is the call's`, () => {
      const h = engineCall(policy, { deadlineMs });
      expect(h.attempts).toHaveLength(1);
      expect(eventsOfType(h.events, 'hedge-sent')).toEqual([]);
      const details = 'Deadline exceeded after 0.000s,waiting for name resolution';
      h.attempt(0).status(Status.DEADLINE_EXCEEDED, details);
      expect(h.received.statuses).toHaveLength(1);
      expect(h.status).toMatchObject({ code: Status.DEADLINE_EXCEEDED, details });
      expect(h.attempts).toHaveLength(1);
      expect(h.clock.pendingTimers).toBe(0);
    });
  }
});
