/**
 * The decision after a failure, around the call's deadline and A6's throttling count: the edges the table in
 * retry-decision.test.ts leaves out.
 */
import { describe, expect, it } from 'vitest';
import type { HedgingPolicy, RetryPolicy } from '../../src/config/types.js';
import {
  countsAgainstServer,
  decideAfterFailure,
  type FailureDecisionInput,
} from '../../src/retry/retry-decision.js';
import { NO_HINT } from '../../src/retry/server-hint.js';
import { decisionInput, pushback } from '../helpers/decision-input.js';

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;

const retry: RetryPolicy = {
  kind: 'retry',
  maxAttempts: 5,
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  backoffMultiplier: 2,
  retryableStatusCodes: [UNAVAILABLE],
};

const input = (over: Partial<FailureDecisionInput> = {}) => decisionInput(retry, over);

describe('a backoff that would outlast the deadline', () => {
  it('is still started by default, as A6 does: the deadline ends the call while it waits', () => {
    expect(decideAfterFailure(input({ deadline: 1050 }))).toMatchObject({ type: 'retry', delayMs: 100 });
  });

  it('ends the call at once when deadline-aware, also when it would end exactly at the deadline', () => {
    for (const deadline of [1050, 1100]) {
      expect(decideAfterFailure(input({ deadline, deadlineAware: true }))).toEqual({
        type: 'finish',
        reason: 'deadline-aware',
      });
    }
  });

  it('deadline-aware still retries when the backoff ends before the deadline', () => {
    expect(decideAfterFailure(input({ deadline: 1101, deadlineAware: true }))).toMatchObject({
      type: 'retry',
      delayMs: 100,
    });
  });

  it("deadline-aware weighs the server's pushback delay, not the backoff", () => {
    const failure = { code: UNAVAILABLE, hint: pushback(500), timedOut: false };
    expect(decideAfterFailure(input({ failure, deadline: 1400, deadlineAware: true }))).toEqual({
      type: 'finish',
      reason: 'deadline-aware',
    });
    expect(decideAfterFailure(input({ failure, deadline: 1600, deadlineAware: true }))).toMatchObject({
      type: 'retry',
      delayMs: 500,
      reason: 'pushback',
    });
  });
});

describe('a DEADLINE_EXCEEDED whose retry could not start before the deadline', () => {
  const deadlineRetry: RetryPolicy = { ...retry, retryableStatusCodes: [UNAVAILABLE, DEADLINE_EXCEEDED] };
  const failure = { code: DEADLINE_EXCEEDED, hint: NO_HINT, timedOut: false };
  const at = (over: Partial<FailureDecisionInput>) => decisionInput(deadlineRetry, { failure, ...over });

  it("ends the call with it, without the option: grpc-js's timer reports the call's own deadline a little early", () => {
    // The clock reads 1 ms before the deadline: a backoff of 100 ms would only wait for the deadline to end the call.
    expect(decideAfterFailure(at({ deadline: 1001 }))).toEqual({ type: 'finish', reason: 'deadline-aware' });
    expect(decideAfterFailure(at({ deadline: 1100 }))).toEqual({ type: 'finish', reason: 'deadline-aware' });
  });

  it("is retried when the backoff ends before the deadline (a server's own DEADLINE_EXCEEDED)", () => {
    expect(decideAfterFailure(at({ deadline: 1101 }))).toMatchObject({ type: 'retry', delayMs: 100 });
  });

  it('other codes keep A6 behaviour: the retry is scheduled and the deadline ends the wait', () => {
    expect(decideAfterFailure(decisionInput(deadlineRetry, { deadline: 1001 }))).toMatchObject({
      type: 'retry',
    });
  });
});

describe('a DEADLINE_EXCEEDED reported a millisecond before the clock reads the deadline', () => {
  const deadlineRetry: RetryPolicy = { ...retry, retryableStatusCodes: [UNAVAILABLE, DEADLINE_EXCEEDED] };
  const failure = { code: DEADLINE_EXCEEDED, hint: pushback(0), timedOut: false };

  it('ends the call even when the retry would go at once (a pushback of 0 ms)', () => {
    expect(decideAfterFailure(decisionInput(deadlineRetry, { failure, deadline: 1001 }))).toEqual({
      type: 'finish',
      reason: 'deadline-aware',
    });
    expect(decideAfterFailure(decisionInput(deadlineRetry, { failure, deadline: 1002 }))).toMatchObject({
      type: 'retry',
      delayMs: 0,
    });
  });
});

describe('a DEADLINE_EXCEEDED whose next hedge could not go before the deadline', () => {
  const hedging: HedgingPolicy = {
    kind: 'hedging',
    maxAttempts: 5,
    hedgingDelayMs: 40,
    nonFatalStatusCodes: [UNAVAILABLE, DEADLINE_EXCEEDED],
  };
  const failure = { code: DEADLINE_EXCEEDED, hint: NO_HINT, timedOut: false };
  const at = (over: Partial<FailureDecisionInput>) =>
    decideAfterFailure(decisionInput(retry, { policy: hedging, failure, attemptsStarted: 3, ...over }));

  it("stops hedging: grpc-js's timer reports the call's own deadline up to a millisecond before the clock reads it", () => {
    // Were the next hedge sent at once, it would go out at the deadline (the auditor's repro: 24 of 200 calls).
    expect(at({ deadline: 1001 })).toEqual({ type: 'stop-hedging', reason: 'deadline-aware' });
  });

  it("weighs the server's delay for the next hedge, as a retry weighs its backoff", () => {
    const delayed = { ...failure, hint: pushback(100) };
    expect(at({ failure: delayed, deadline: 1100 })).toEqual({
      type: 'stop-hedging',
      reason: 'deadline-aware',
    });
    expect(at({ failure: delayed, deadline: 1101 })).toEqual({
      type: 'hedge-after',
      delayMs: 100,
      reason: 'pushback',
    });
  });

  it("hedges at once when the deadline is further ahead: a server's DEADLINE_EXCEEDED, a per-attempt timeout", () => {
    expect(at({ deadline: 1002 })).toEqual({ type: 'hedge-now' });
    expect(at({ deadline: 1050, failure: { ...failure, timedOut: true } })).toEqual({ type: 'hedge-now' });
    expect(at({})).toEqual({ type: 'hedge-now' }); // no deadline
  });

  it('other codes keep A6 behaviour: a non-fatal status sends the next hedge at once', () => {
    expect(at({ deadline: 1001, failure: { ...failure, code: UNAVAILABLE } })).toEqual({ type: 'hedge-now' });
  });

  it('a do-not-retry hint and exhaustion still name themselves; the clock at the deadline finishes', () => {
    const stop = { kind: 'do-not-retry', reason: 'negative pushback -1', source: 'pushback' } as const;
    expect(at({ deadline: 1001, failure: { ...failure, hint: stop } })).toEqual({
      type: 'stop-hedging',
      reason: 'do-not-retry',
    });
    expect(at({ deadline: 1001, attemptsStarted: 5 })).toEqual({
      type: 'stop-hedging',
      reason: 'attempts-exhausted',
    });
    expect(at({ deadline: 1000 })).toEqual({ type: 'finish', reason: 'deadline' });
  });
});

describe('deadlineAwareBackoff under hedging: a server delay past the deadline', () => {
  const hedging: HedgingPolicy = {
    kind: 'hedging',
    maxAttempts: 5,
    hedgingDelayMs: 40,
    nonFatalStatusCodes: [UNAVAILABLE],
  };
  const failure = { code: UNAVAILABLE, hint: pushback(100), timedOut: false };
  const at = (over: Partial<FailureDecisionInput>) =>
    decideAfterFailure(decisionInput(retry, { policy: hedging, failure, deadlineAware: true, ...over }));

  it('stops hedging when no attempt is in flight, also when the wait would end exactly at the deadline', () => {
    expect(at({ deadline: 1100 })).toEqual({ type: 'stop-hedging', reason: 'deadline-aware' });
    expect(at({ deadline: 1050 })).toEqual({ type: 'stop-hedging', reason: 'deadline-aware' });
  });

  it('waits when the delay ends before the deadline, when an attempt is in flight, or without the option', () => {
    const after = { type: 'hedge-after', delayMs: 100, reason: 'pushback' };
    expect(at({ deadline: 1101 })).toEqual(after);
    expect(at({ deadline: 1100, attemptsInFlight: 1 })).toEqual(after);
    expect(at({ deadline: 1100, deadlineAware: false })).toEqual(after);
    expect(at({ deadline: 1001, failure: { ...failure, hint: NO_HINT } })).toEqual({ type: 'hedge-now' });
  });
});

describe('countsAgainstServer: a pushback that allows a retry', () => {
  it('does not count a non-retryable status against the server, whatever delay it asks for', () => {
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: pushback(10), timedOut: false })).toBe(
      false,
    );
    expect(countsAgainstServer(retry, { code: UNAVAILABLE, hint: pushback(10), timedOut: false })).toBe(true);
  });
});
