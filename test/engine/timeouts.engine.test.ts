import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';

describe('engine: the method timeout becomes the deadline', () => {
  it('"0.3s" means 300 ms: every attempt carries a deadline 300 ms from the call start', () => {
    const h = engineCall(retryPolicy({}, { timeout: '0.3s' }));
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempts.map((a) => a.options.deadline)).toEqual([T0 + 300, T0 + 300]);
  });

  it('"1.500s" is 1500 ms, and a sooner caller deadline wins', () => {
    const later = engineCall(retryPolicy({}, { timeout: '1.500s' }), { deadlineMs: 5000 });
    expect(later.attempt(0).options.deadline).toBe(T0 + 1500);
    const sooner = engineCall(retryPolicy({}, { timeout: '1.500s' }), { deadlineMs: 200 });
    expect(sooner.attempt(0).options.deadline).toBe(T0 + 200);
  });

  it('is one deadline over all attempts: a backoff past it ends the call with DEADLINE_EXCEEDED', () => {
    const h = engineCall(retryPolicy({}, { timeout: '0.15s' }));
    h.attempt(0).fail();
    h.clock.advance(120);
    h.attempt(1).fail();
    h.clock.advance(30);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(2);
  });

  it.each([
    ['a string', 'abc'],
    ['an object', {}],
    ['NaN', Number.NaN],
    ['an invalid Date', new Date(Number.NaN)],
  ])('leaves a caller deadline that is no time (%s) to grpc-js, as without the timeout', (_, deadline) => {
    const config = { methodConfig: [{ name: [{ service: 'test.Svc' }], timeout: '0.3s' }] };
    const passThrough = engineCall(config, { callOptions: { deadline } });
    expect(passThrough.attempt(0).options.deadline).toBe(deadline);
    const retried = engineCall(retryPolicy({}, { timeout: '0.3s' }), { callOptions: { deadline } });
    // (the engine hands attempts a copy of a Date: compared by what it says)
    expect(String(retried.attempt(0).options.deadline)).toBe(String(deadline));
  });

  it('applies to a method without a retry or hedging policy too (pass-through)', () => {
    const config = {
      methodConfig: [{ name: [{ service: 'test.Svc' }], timeout: '0.2s', waitForReady: true }],
    };
    const h = engineCall(config);
    expect(h.attempts).toHaveLength(1);
    expect(h.attempt(0).options.deadline).toBe(T0 + 200);
    expect(h.attempt(0).metadata?.getOptions().waitForReady).toBe(true);
    expect(h.events).toEqual([]);
  });
});

describe('engine: waitForReady', () => {
  it('goes on every attempt, retries and hedges alike', () => {
    const retry = engineCall(retryPolicy({}, { waitForReady: true }));
    retry.attempt(0).fail();
    retry.clock.runNext();
    expect(retry.attempts.map((a) => a.metadata?.getOptions().waitForReady)).toEqual([true, true]);
    const hedge = engineCall(hedgingPolicy({ hedgingDelay: '0s' }, { waitForReady: false }));
    expect(hedge.attempts.map((a) => a.metadata?.getOptions().waitForReady)).toEqual([false, false, false]);
  });

  it("yields to the application's own per-call value, and keeps its other metadata options", () => {
    for (const config of [retryPolicy({}, { waitForReady: false }), timeoutOnlyConfig(false)]) {
      const h = engineCall(config, { metadata: new Metadata({ waitForReady: true, corked: true }) });
      expect(h.attempt(0).metadata?.getOptions()).toMatchObject({ waitForReady: true, corked: true });
      const unset = engineCall(config, { metadata: new Metadata({ corked: true }) });
      expect(unset.attempt(0).metadata?.getOptions()).toMatchObject({ waitForReady: false, corked: true });
    }
  });

  it('is left as grpc-js has it when the config does not say', () => {
    const h = engineCall(retryPolicy());
    expect(h.attempt(0).metadata?.getOptions().waitForReady).toBeUndefined();
  });
});

describe('engine: perAttemptRecvTimeout', () => {
  const policy = (extra: Record<string, unknown> = {}) =>
    retryPolicy({ maxAttempts: 3, perAttemptRecvTimeout: '0.05s', ...extra });

  it('cancels a silent attempt (the server sees the cancel), then retries after the backoff', async () => {
    const h = engineCall(policy());
    h.clock.advance(49);
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.clock.advance(1);
    expect(h.attempt(0).cancelled).toMatchObject({ code: Status.DEADLINE_EXCEEDED });
    expect(h.attempt(0).cancelled?.details).toMatch(/per-attempt receive timeout \(50 ms\) hit on attempt 1/);
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([
      expect.objectContaining({ attempt: 2, delayMs: 100 }),
    ]);
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(2);
    await h.settle();
    expect(eventsOfType(h.events, 'attempt-end')[0]).toMatchObject({
      attempt: 1,
      cancelReason: 'per-attempt-timeout',
    });
  });

  it('a timed-out attempt reports its end at once: before its retry, and the last one before call-end', async () => {
    const h = engineCall(policy({ maxAttempts: 2 }));
    h.clock.advance(50); // attempt 1 times out; backoff 100
    h.clock.advance(100);
    h.clock.advance(50); // attempt 2 times out: none left
    const order = () => h.events.map((e) => e.type + ('attempt' in e ? e.attempt : ''));
    const expected = [
      'call-start',
      'attempt-start1',
      'attempt-end1',
      'retry-scheduled2',
      'attempt-start2',
      'attempt-end2',
      'call-end',
    ];
    expect(order()).toEqual(expected);
    expect(eventsOfType(h.events, 'attempt-end')).toEqual(
      [1, 2].map((attempt) =>
        expect.objectContaining({
          attempt,
          committed: false,
          cancelReason: 'per-attempt-timeout',
          code: Status.DEADLINE_EXCEEDED,
          details: expect.stringMatching(
            new RegExp(`per-attempt receive timeout \\(50 ms\\) hit on attempt ${attempt}`),
          ),
        }),
      ),
    );
    await h.settle(); // grpc-js's own report of the cancel comes later, and is not a second end
    expect(order()).toEqual(expected);
  });

  it('an attempt-end listener that cancels the call on a timed-out attempt stops its retry', async () => {
    let cancel = () => {};
    const h = engineCall(policy(), {
      interceptor: { onEvent: (e) => e.type === 'attempt-end' && cancel() },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'from the listener');
    h.clock.advance(50);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([]);
    expect(h.attempts).toHaveLength(1);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('when no attempt is left, the call ends with DEADLINE_EXCEEDED naming the limit and the attempt', () => {
    const h = engineCall(policy());
    h.clock.advance(50); // attempt 1 times out; backoff 100
    h.clock.advance(100);
    h.clock.advance(50); // attempt 2 times out; backoff 200
    h.clock.advance(200);
    h.clock.advance(50); // attempt 3 times out
    expect(h.attempts).toHaveLength(3);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(
      /per-attempt receive timeout \(50 ms\) hit on attempt 3; no attempt left/,
    );
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("a request that outgrows the replay buffer during the backoff: the timeout's status says why no retry went", async () => {
    // As when the wait ends and finds the buffer full: "...; the replay buffer is full".
    const h = engineCall(policy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 100 } });
    h.call.sendMessage(Buffer.alloc(10));
    h.clock.advance(50); // attempt 1 times out; backoff 100
    h.call.sendMessage(Buffer.alloc(100)); // overflows while nothing is in flight
    await h.settle();
    expect(h.attempts).toHaveLength(1);
    expect(h.status).toMatchObject({
      code: Status.DEADLINE_EXCEEDED,
      details: 'per-attempt receive timeout (50 ms) hit on attempt 1; the replay buffer is full',
    });
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.DEADLINE_EXCEEDED, reason: 'replay-buffer' }),
    ]);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('stops when the attempt receives headers (which commit the call)', () => {
    const h = engineCall(policy(), { type: 'server-stream' });
    h.clock.advance(40);
    h.attempt(0).headers();
    h.clock.advance(1000);
    expect(h.attempt(0).cancelled).toBeUndefined();
    h.attempt(0).message('late but fine');
    h.attempt(0).status(Status.OK);
    expect(h.status.code).toBe(Status.OK);
  });

  it('counts against the throttle, and may have an empty retryableStatusCodes', () => {
    const h = engineCall({
      ...policy({ retryableStatusCodes: [] }),
      retryThrottling: { maxTokens: 2, tokenRatio: 1 },
    });
    h.clock.advance(50); // 2 -> 1: not above half
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toMatch(/a retry was refused \(by the retry gate/);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
  });

  it('a status before the timer is handled as usual (a non-retryable code ends the call)', () => {
    const h = engineCall(policy());
    h.clock.advance(10);
    h.attempt(0).fail(Status.NOT_FOUND);
    expect(h.status.code).toBe(Status.NOT_FOUND);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('the call deadline still bounds everything', () => {
    const h = engineCall(policy({ maxAttempts: 5 }), { deadlineMs: 120 });
    h.clock.advance(50); // timeout, backoff 100 would end past the deadline
    h.clock.advance(70);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(1);
  });

  it('covers client streaming and bidi until the first response headers or message', () => {
    for (const type of ['client-stream', 'bidi'] as const) {
      const h = engineCall(policy(), { type });
      h.call.sendMessage('a');
      h.clock.advance(50);
      expect(h.attempt(0).cancelled, type).toBeDefined();
      h.clock.advance(100);
      expect(h.attempt(1).messages, type).toEqual(['a']);
      h.attempt(1).headers();
      h.clock.advance(1000);
      expect(h.attempt(1).cancelled, type).toBeUndefined();
    }
  });
});

function timeoutOnlyConfig(waitForReady: boolean) {
  return { methodConfig: [{ name: [{ service: 'test.Svc' }], waitForReady }] };
}
