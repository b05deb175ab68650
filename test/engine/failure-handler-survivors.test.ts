/**
 * What the failure handling of a call promises that the other suites leave unchecked
 * (src/retry/failure-handler.ts): the request-changed warning is given only for a request that changed, and a
 * per-attempt timeout whose `attempt-end` listener ends the call asks nothing more of the interceptor's gate.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatedAttemptKind, RetryGate } from '../../src/shared/retry-gate.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A gate that allows every attempt and records what it is asked and told. */
function recordingGate() {
  const seen = { asked: [] as GatedAttemptKind[], failures: 0, successes: 0 };
  const gate: RetryGate = {
    allowAttempt: (kind) => {
      seen.asked.push(kind);
      return true;
    },
    recordFailure: () => {
      seen.failures += 1;
    },
    recordSuccess: () => {
      seen.successes += 1;
    },
  };
  return { gate, seen };
}

describe('engine: a failure that ends the call gives no request-changed warning when the request did not change', () => {
  it('a status the policy does not retry', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy());
    h.attempt(0).fail(Status.INTERNAL);
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(h.attempts).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('the last attempt failing, with a streamed request left alone', () => {
    const warnings = captureWarnings();
    const h = engineCall(retryPolicy({ maxAttempts: 2 }), { type: 'client-stream' });
    h.call.sendMessageWithContext({ callback: () => {} }, Buffer.from('0'));
    h.call.halfClose();
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempt(1).messages.map(String)).toEqual(['0']);
    h.attempt(1).fail();
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(warnings).toEqual([]);
  });

  it('a hedging call whose last attempt fails with a fatal status', () => {
    const warnings = captureWarnings();
    const h = engineCall(hedgingPolicy({ maxAttempts: 2 }));
    h.attempt(0).fail(Status.INTERNAL);
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(warnings).toEqual([]);
  });
});

describe('engine: a per-attempt timeout whose attempt-end listener cancels the call', () => {
  it('ends the call CANCELLED; the timed-out attempt is not counted against the server, nor a retry asked for', async () => {
    const { gate, seen } = recordingGate();
    let cancel = () => {};
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), {
      start: false,
      interceptor: {
        gate,
        onEvent: (e) => e.type === 'attempt-end' && e.cancelReason === 'per-attempt-timeout' && cancel(),
      },
    });
    cancel = () => h.call.cancelWithStatus(Status.CANCELLED, 'by the application');
    h.start();
    h.clock.advance(1000);
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'by the application' });
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([]);
    expect(seen).toEqual({ asked: [], failures: 0, successes: 0 });
  });

  it('(without the listener, the same timeout counts against the server and asks for a retry)', () => {
    const { gate, seen } = recordingGate();
    const h = engineCall(retryPolicy({ perAttemptRecvTimeout: '1s' }), { interceptor: { gate } });
    h.clock.advance(1000);
    expect(eventsOfType(h.events, 'retry-scheduled')).toHaveLength(1);
    expect(seen).toEqual({ asked: ['retry'], failures: 1, successes: 0 });
  });
});
