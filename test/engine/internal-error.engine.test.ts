/**
 * A broken invariant of the engine (an illegal phase change) throws under vitest, so that a bug fails the tests,
 * but never in production: there the call ends with INTERNAL and an `internal-error` event names the move,
 * because an exception thrown inside a grpc-js callback would escape as an uncaught exception.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallPhase } from '../../src/retry/call-phase.js';
import { engineChecks } from '../../src/retry/engine-checks.js';
import { engineCall, eventsOfType, retryPolicy, Status } from '../helpers/engine.js';

/** Reaches the engine's one place of phase changes, as a bug inside it would. */
function forceTransition(call: unknown, next: CallPhase): boolean {
  return (call as { transition(next: CallPhase): boolean }).transition(next);
}

const WAITING: CallPhase = {
  tag: 'waiting',
  next: 'retry',
  timer: undefined,
  since: 0,
  lastFailure: { code: Status.UNAVAILABLE, details: '', metadata: undefined as never },
};

describe('an illegal phase change', () => {
  const strict = engineChecks.strict;
  afterEach(() => {
    engineChecks.strict = strict;
  });

  it('throws under vitest (strict checks are on here)', () => {
    expect(strict).toBe(true);
    const call = engineCall(retryPolicy(), { type: 'unary' });
    call.attempt(0).headers();
    expect(() => forceTransition(call.call, WAITING)).toThrow(/no transition from committed to waiting/);
  });

  it('in production ends an in-flight call with INTERNAL, cancels its attempt and reports it', async () => {
    engineChecks.strict = false;
    const call = engineCall(retryPolicy(), { type: 'unary' });
    expect(forceTransition(call.call, { tag: 'not-started', firstCall: call.attempt(0) })).toBe(false);
    await call.settle();
    expect(call.status.code).toBe(Status.INTERNAL);
    expect(call.status.details).toMatch(/internal error: no transition from in-flight to not-started/);
    expect(call.attempt(0).cancelled).toBeDefined();
    const [event] = eventsOfType(call.events, 'internal-error');
    expect(event?.message).toBe('no transition from in-flight to not-started');
    expect(call.clock.pendingTimers).toBe(0);
  });

  it('in production, after the call ended, changes nothing and does not end it twice', async () => {
    engineChecks.strict = false;
    const call = engineCall(retryPolicy(), { type: 'unary' });
    call.call.cancelWithStatus(Status.CANCELLED, 'by the caller');
    expect(() => forceTransition(call.call, WAITING)).not.toThrow();
    await call.settle();
    expect(call.received.statuses).toHaveLength(1);
    expect(call.status.code).toBe(Status.CANCELLED);
    expect(eventsOfType(call.events, 'internal-error')).toHaveLength(1);
    expect(eventsOfType(call.events, 'call-end')).toHaveLength(1);
  });
});
