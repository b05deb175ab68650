/** Inputs of the pure decision after a failure, for the decision's tests. */
import type { RetryPolicy } from '../../src/config/types.js';
import type { FailureDecisionInput } from '../../src/retry/retry-decision.js';
import { NO_HINT, type ServerHint } from '../../src/retry/server-hint.js';

export const UNAVAILABLE = 14;

/**
 * A failed first attempt of a call under `policy` at t = 1000, UNAVAILABLE, no hint, random 0.5 with A6 jitter (a
 * backoff of exactly initialBackoff), no deadline, room in the replay buffer, the gate allowing; `over` changes any.
 */
export function decisionInput(
  policy: RetryPolicy,
  over: Partial<FailureDecisionInput> = {},
): FailureDecisionInput {
  return {
    policy,
    failure: { code: UNAVAILABLE, hint: NO_HINT, timedOut: false },
    attemptsStarted: 1,
    attemptsInFlight: 0,
    backoff: undefined,
    jitter: 'a6',
    random: 0.5,
    now: 1000,
    deadline: Number.POSITIVE_INFINITY,
    deadlineAware: false,
    replay: () => 'fits',
    gate: () => 'allow',
    ...over,
  };
}

export const pushback = (delayMs: number): ServerHint => ({
  kind: 'retry-after',
  delayMs,
  source: 'pushback',
});
