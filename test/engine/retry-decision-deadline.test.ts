/**
 * The decision after a failure, around the call's deadline and A6's throttling count: the edges the table in
 * retry-decision.test.ts leaves out.
 */
import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../src/config/types.js';
import {
  countsAgainstServer,
  decideAfterFailure,
  type FailureDecisionInput,
} from '../../src/retry/retry-decision.js';
import { decisionInput, pushback } from '../helpers/decision-input.js';

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;

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

describe('countsAgainstServer: a pushback that allows a retry', () => {
  it('does not count a non-retryable status against the server, whatever delay it asks for', () => {
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: pushback(10), timedOut: false })).toBe(
      false,
    );
    expect(countsAgainstServer(retry, { code: UNAVAILABLE, hint: pushback(10), timedOut: false })).toBe(true);
  });
});
