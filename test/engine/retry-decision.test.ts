import { describe, expect, it } from 'vitest';
import type { HedgingPolicy, RetryPolicy } from '../../src/config/types.js';
import { initialBackoffState } from '../../src/retry/backoff.js';
import type { ReplayVerdict } from '../../src/retry/replay-buffer.js';
import {
  countsAgainstServer,
  decideAfterFailure,
  decideHedgeSend,
  type FailureDecision,
  type FailureDecisionInput,
  type HedgeSendInput,
} from '../../src/retry/retry-decision.js';
import { NO_HINT, type ServerHint } from '../../src/retry/server-hint.js';
import { decisionInput, pushback } from '../helpers/decision-input.js';

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;

const retry: RetryPolicy = {
  kind: 'retry',
  maxAttempts: 3,
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  backoffMultiplier: 2,
  retryableStatusCodes: [UNAVAILABLE, DEADLINE_EXCEEDED],
};
const hedging: HedgingPolicy = {
  kind: 'hedging',
  maxAttempts: 3,
  hedgingDelayMs: 50,
  nonFatalStatusCodes: [UNAVAILABLE],
};

const input = (over: Partial<FailureDecisionInput> = {}) => decisionInput(retry, over);
const retryInfo = (delayMs: number): ServerHint => ({ kind: 'retry-after', delayMs, source: 'retry-info' });
const stop: ServerHint = { kind: 'do-not-retry', reason: 'negative pushback -1', source: 'pushback' };

describe('decideAfterFailure: retry policy', () => {
  it('retries a retryable code after the backoff, and advances the backoff', () => {
    const first = decideAfterFailure(input());
    expect(first).toEqual({
      type: 'retry',
      delayMs: 100,
      reason: 'backoff',
      backoff: { retryNumber: 1, previousMs: 100 },
    });
    const second = decideAfterFailure(
      input({ attemptsStarted: 2, backoff: (first as Extract<FailureDecision, { type: 'retry' }>).backoff }),
    );
    expect(second).toMatchObject({ type: 'retry', delayMs: 200 });
  });

  it('uses the random number for the jitter', () => {
    expect(decideAfterFailure(input({ random: 0 }))).toMatchObject({ delayMs: 80 });
  });

  it('a server hint sets the delay and resets the backoff, whatever its source', () => {
    const advanced = { retryNumber: 3, previousMs: 400 };
    expect(
      decideAfterFailure(
        input({ backoff: advanced, failure: { code: UNAVAILABLE, hint: pushback(300), timedOut: false } }),
      ),
    ).toEqual({
      type: 'retry',
      delayMs: 300,
      reason: 'pushback',
      backoff: initialBackoffState(retry),
    });
    expect(
      decideAfterFailure(input({ failure: { code: UNAVAILABLE, hint: retryInfo(2500), timedOut: false } })),
    ).toMatchObject({
      delayMs: 2500,
      reason: 'retry-info',
    });
  });

  it.each([
    [
      'a non-retryable code',
      { failure: { code: INVALID_ARGUMENT, hint: pushback(10), timedOut: false } },
      'fatal-status',
    ],
    ['the deadline passed', { now: 1000, deadline: 1000 }, 'deadline'],
    ['a do-not-retry hint', { failure: { code: UNAVAILABLE, hint: stop, timedOut: false } }, 'do-not-retry'],
    ['no attempt left', { attemptsStarted: 3 }, 'attempts-exhausted'],
    [
      'a do-not-retry hint once the deadline passed (no retry was coming)',
      { failure: { code: UNAVAILABLE, hint: stop, timedOut: false }, now: 1000, deadline: 1000 },
      'do-not-retry',
    ],
    [
      'no attempt left once the deadline passed',
      { attemptsStarted: 3, now: 1000, deadline: 1000 },
      'attempts-exhausted',
    ],
    [
      'a backoff past the deadline (deadline-aware)',
      { deadline: 1050, deadlineAware: true },
      'deadline-aware',
    ],
    ['a full replay buffer', { replay: (): ReplayVerdict => 'full' }, 'replay-buffer'],
    [
      'a request message that changed after it was written',
      { replay: (): ReplayVerdict => 'changed' },
      'request-changed',
    ],
    [
      'a request message that does not serialize',
      { replay: (): ReplayVerdict => 'unserializable' },
      'request-unserializable',
    ],
    ['the gate refuses', { gate: () => 'refused-by-gate' }, 'throttled'],
  ] as const)('finishes when %s', (_name, over, reason) => {
    expect(decideAfterFailure(input(over as Partial<FailureDecisionInput>))).toEqual({
      type: 'finish',
      reason,
    });
  });

  it("retries a server's DEADLINE_EXCEEDED while the call's deadline is ahead", () => {
    expect(
      decideAfterFailure(
        input({ failure: { code: DEADLINE_EXCEEDED, hint: NO_HINT, timedOut: false }, deadline: 5000 }),
      ).type,
    ).toBe('retry');
  });

  it('a timed-out attempt is retryable whatever its code', () => {
    const policy = { ...retry, retryableStatusCodes: [] };
    expect(
      decideAfterFailure(
        input({ policy, failure: { code: DEADLINE_EXCEEDED, hint: NO_HINT, timedOut: true } }),
      ).type,
    ).toBe('retry');
  });

  it('a message-size rejection is fatal whatever the retryable codes, and does not count against the server', () => {
    const RESOURCE_EXHAUSTED = 8;
    const policy = { ...retry, retryableStatusCodes: [RESOURCE_EXHAUSTED] };
    const failure = { code: RESOURCE_EXHAUSTED, hint: NO_HINT, timedOut: false, sizeRejected: true };
    expect(decideAfterFailure(input({ policy, failure }))).toEqual({
      type: 'finish',
      reason: 'fatal-status',
    });
    expect(countsAgainstServer(policy, failure)).toBe(false);
    expect(countsAgainstServer(policy, { ...failure, sizeRejected: false })).toBe(true);
    const hedgingFailure = decideAfterFailure(
      input({ policy: { ...hedging, nonFatalStatusCodes: [RESOURCE_EXHAUSTED] }, failure }),
    );
    expect(hedgingFailure).toEqual({ type: 'finish', reason: 'fatal-status' });
  });

  it("a load balancer's drop is never resent, whatever the codes, and does not count against the server", () => {
    const failure = { code: UNAVAILABLE, hint: NO_HINT, timedOut: false, dropped: true };
    const policy = { ...retry, retryableStatusCodes: [UNAVAILABLE] };
    expect(decideAfterFailure(input({ policy, failure }))).toEqual({ type: 'finish', reason: 'lb-drop' });
    // Before the other rules: a code the policy does not list, or a pushback asking for a retry, changes nothing.
    const retryAfter = { kind: 'retry-after', delayMs: 5, source: 'pushback' } as const;
    expect(decideAfterFailure(input({ policy: { ...retry, retryableStatusCodes: [] }, failure }))).toEqual({
      type: 'finish',
      reason: 'lb-drop',
    });
    expect(decideAfterFailure(input({ policy, failure: { ...failure, hint: retryAfter } }))).toEqual({
      type: 'finish',
      reason: 'lb-drop',
    });
    // A hedged call sends no further hedge; the attempts in flight may still answer.
    const hedged = { ...hedging, nonFatalStatusCodes: [UNAVAILABLE] };
    expect(decideAfterFailure(input({ policy: hedged, failure }))).toEqual({
      type: 'stop-hedging',
      reason: 'lb-drop',
    });
    expect(decideAfterFailure(input({ policy: { ...hedging, nonFatalStatusCodes: [] }, failure }))).toEqual({
      type: 'stop-hedging',
      reason: 'lb-drop',
    });
    expect(countsAgainstServer(policy, failure)).toBe(false);
    expect(countsAgainstServer(policy, { ...failure, dropped: false })).toBe(true);
  });

  it('a DEADLINE_EXCEEDED the policy does not retry is the deadline once the call reached it (a tick early counts)', () => {
    const policy = { ...retry, retryableStatusCodes: [UNAVAILABLE] };
    const failure = { code: DEADLINE_EXCEEDED, hint: NO_HINT, timedOut: false };
    const at = (deadline: number) => decideAfterFailure(input({ policy, failure, now: 1000, deadline }));
    expect(at(1000)).toEqual({ type: 'finish', reason: 'deadline' });
    expect(at(1001)).toEqual({ type: 'finish', reason: 'deadline' });
    expect(at(1002)).toEqual({ type: 'finish', reason: 'fatal-status' });
    // another status at the deadline is the status's doing
    const invalid = { code: INVALID_ARGUMENT, hint: NO_HINT, timedOut: false };
    expect(decideAfterFailure(input({ policy, failure: invalid, deadline: 1000 }))).toEqual({
      type: 'finish',
      reason: 'fatal-status',
    });
    expect(decideAfterFailure(input({ policy: hedging, failure, now: 1000, deadline: 1000 }))).toEqual({
      type: 'finish',
      reason: 'deadline',
    });
  });

  it('asks the gate last, and only when everything else allows the retry', () => {
    let asked = 0;
    const gate = () => {
      asked += 1;
      return 'allow' as const;
    };
    decideAfterFailure(input({ attemptsStarted: 3, gate }));
    decideAfterFailure(input({ replay: () => 'full', gate }));
    expect(asked).toBe(0);
    decideAfterFailure(input({ gate }));
    expect(asked).toBe(1);
  });
});

describe('decideAfterFailure: hedging policy', () => {
  const h = (over: Partial<FailureDecisionInput> = {}) =>
    decideAfterFailure(input({ policy: hedging, ...over }));
  it('a non-fatal status sends the next hedge now', () => {
    expect(h()).toEqual({ type: 'hedge-now' });
  });
  it('a fatal status finishes', () => {
    expect(h({ failure: { code: INVALID_ARGUMENT, hint: NO_HINT, timedOut: false } })).toEqual({
      type: 'finish',
      reason: 'fatal-status',
    });
  });
  it('a hint delays the next hedge; do-not-retry stops hedging', () => {
    expect(h({ failure: { code: UNAVAILABLE, hint: retryInfo(70), timedOut: false } })).toEqual({
      type: 'hedge-after',
      delayMs: 70,
      reason: 'retry-info',
    });
    expect(h({ failure: { code: UNAVAILABLE, hint: stop, timedOut: false } })).toEqual({
      type: 'stop-hedging',
      reason: 'do-not-retry',
    });
  });
  it('no attempt left stops hedging (the call waits for those in flight)', () => {
    expect(h({ attemptsStarted: 3 })).toEqual({ type: 'stop-hedging', reason: 'attempts-exhausted' });
  });
});

describe('decideHedgeSend', () => {
  const base: HedgeSendInput = {
    maxAttempts: 3,
    attemptsStarted: 1,
    liveAttempts: 1,
    replay: () => 'fits',
    gate: () => 'allow',
  };
  it('sends while attempts are left, the buffer fits and the gate allows', () => {
    expect(decideHedgeSend(base)).toEqual({ type: 'send' });
    expect(decideHedgeSend({ ...base, attemptsStarted: 3 })).toEqual({
      type: 'stop',
      reason: 'attempts-exhausted',
    });
    expect(decideHedgeSend({ ...base, replay: () => 'full' })).toEqual({
      type: 'stop',
      reason: 'replay-buffer',
    });
    expect(decideHedgeSend({ ...base, replay: () => 'changed' })).toEqual({
      type: 'stop',
      reason: 'request-changed',
    });
    expect(decideHedgeSend({ ...base, gate: () => 'refused-by-gate' })).toEqual({
      type: 'stop',
      reason: 'throttled',
    });
  });
  it('an empty hedge budget is asked again later while an attempt is in flight; with none, hedging stops', () => {
    expect(decideHedgeSend({ ...base, gate: () => 'refused-by-hedge-budget' })).toEqual({
      type: 'wait-for-budget',
    });
    expect(decideHedgeSend({ ...base, liveAttempts: 0, gate: () => 'refused-by-hedge-budget' })).toEqual({
      type: 'stop',
      reason: 'throttled',
    });
    // The interceptor's gate (A6 throttle) refusing is final even with attempts in flight.
    expect(decideHedgeSend({ ...base, liveAttempts: 2, gate: () => 'refused-by-gate' })).toEqual({
      type: 'stop',
      reason: 'throttled',
    });
  });
  it('asks the gates last, once everything else allows the hedge', () => {
    let asked = 0;
    const gate = () => {
      asked += 1;
      return 'allow' as const;
    };
    decideHedgeSend({ ...base, attemptsStarted: 3, gate });
    decideHedgeSend({ ...base, replay: () => 'full', gate });
    expect(asked).toBe(0);
    decideHedgeSend({ ...base, gate });
    expect(asked).toBe(1);
  });
});

describe('countsAgainstServer (A6 throttling)', () => {
  it('counts retryable codes, timeouts and do-not-retry pushbacks, not other codes or RetryInfo refusals', () => {
    expect(countsAgainstServer(retry, { code: UNAVAILABLE, hint: NO_HINT, timedOut: false })).toBe(true);
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: NO_HINT, timedOut: false })).toBe(
      false,
    );
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: stop, timedOut: false })).toBe(true);
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: NO_HINT, timedOut: true })).toBe(true);
    const over: ServerHint = { kind: 'do-not-retry', reason: 'over the cap', source: 'retry-info' };
    expect(countsAgainstServer(retry, { code: INVALID_ARGUMENT, hint: over, timedOut: false })).toBe(false);
    expect(countsAgainstServer(hedging, { code: UNAVAILABLE, hint: NO_HINT, timedOut: false })).toBe(true);
  });
});
