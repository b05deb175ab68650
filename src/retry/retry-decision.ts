/**
 * The retry and hedging rules of A6 (and what goes past it) as pure functions: what a call does after one of its
 * attempts failed, and whether a further hedge may go. The call state machine only carries their results out.
 */
import { status as Status, type StatusObject } from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import type { GateVerdict } from '../shared/retry-gate.js';
import { type BackoffState, initialBackoffState, type JitterStrategy, nextBackoff } from './backoff.js';
import type { AttemptCancelReason, CallEndReason } from './events.js';
import type { ReplayVerdict } from './replay-buffer.js';
import type { ServerHint } from './server-hint.js';

/** One failed attempt of a call that has not committed. */
export interface AttemptFailure {
  readonly code: number;
  readonly hint: ServerHint;
  /** The attempt hit its per-attempt receive timeout: it counts as retryable whatever its code. */
  readonly timedOut: boolean;
  /**
   * The attempt hit a message-size limit (see `isMessageSizeRejection`): a resend fails alike, so it is fatal
   * whatever its code, and it says nothing of the server's health.
   */
  readonly sizeRejected?: boolean;
  /**
   * The load-balancing policy dropped the attempt before it left the client (see `isLoadBalancerDrop`): never
   * resent, whatever its code (a retrying call ends; a hedged call sends no further hedge while the attempts in
   * flight may still answer), and it says nothing of the server's health.
   */
  readonly dropped?: boolean;
}

/** Everything the decision after a failure depends on. */
export interface FailureDecisionInput {
  readonly policy: CallPolicy;
  readonly failure: AttemptFailure;
  /** Attempts sent so far, the failed one included. */
  readonly attemptsStarted: number;
  /** Attempts still in flight, the failed one not included (hedging: the next hedge may go beside them). */
  readonly attemptsInFlight: number;
  /** Where the backoff stands (retry policies); undefined before the first retry. */
  readonly backoff: BackoffState | undefined;
  readonly jitter: JitterStrategy;
  /** One uniform random number in [0, 1), used for the jitter. */
  readonly random: number;
  readonly now: number;
  /** The call's deadline (ms since the epoch), `Infinity` for none. */
  readonly deadline: number;
  /**
   * Opt-in: end at once rather than start a backoff that would end after the deadline (under hedging, a server's
   * delay for the next hedge with no attempt in flight, which the call waits out as a retry waits out its backoff).
   */
  readonly deadlineAware: boolean;
  /**
   * Whether a further attempt can resend what the application sent (the replay buffer holds it, and it is still
   * what was written); asked only once every other rule allows a retry.
   */
  readonly replay: () => ReplayVerdict;
  /** The retry gate's verdict; asked last, and only when the retry would otherwise go (a budget spends here). */
  readonly gate: () => GateVerdict;
}

/** Why the decision ends a call with a failure (the `reason` of its `call-end` event; `committed` is the call's, never the decision's). */
export type FinishReason = Exclude<CallEndReason, 'committed'>;

export type FailureDecision =
  /** End the call with the failure (for a timed-out attempt: DEADLINE_EXCEEDED saying so). */
  | { readonly type: 'finish'; readonly reason: FinishReason }
  /** Send a retry after `delayMs`; the backoff moves on to `backoff`. */
  | {
      readonly type: 'retry';
      readonly delayMs: number;
      readonly reason: 'backoff' | 'pushback' | 'retry-info';
      readonly backoff: BackoffState;
    }
  /** Send the next hedge now (a non-fatal status). */
  | { readonly type: 'hedge-now' }
  /** Send the next hedge after the server's delay instead of the hedging delay. */
  | { readonly type: 'hedge-after'; readonly delayMs: number; readonly reason: 'pushback' | 'retry-info' }
  /** Send no further hedge; the call ends with the last failure once no attempt is in flight. */
  | {
      readonly type: 'stop-hedging';
      /** `throttled`: an adaptive throttle below rejected the attempt locally (the failure handler's decision). */
      readonly reason: 'do-not-retry' | 'attempts-exhausted' | 'deadline-aware' | 'throttled' | 'lb-drop';
    };

/** The decisions after a failure that only a hedging policy makes. */
export type HedgeFailureDecision = Extract<
  FailureDecision,
  { type: 'hedge-now' | 'hedge-after' | 'stop-hedging' }
>;

/** Whether a status code is retryable (retry policy) or non-fatal (hedging policy). */
export function isRetryableCode(policy: CallPolicy, code: number): boolean {
  const codes = policy.kind === 'retry' ? policy.retryableStatusCodes : policy.nonFatalStatusCodes;
  return codes.includes(code);
}

/**
 * A6 throttling: whether a failure counts against the server. A retryable (non-fatal) code, a per-attempt
 * timeout, or a do-not-retry pushback trailer takes a token; a message-size rejection or a load balancer's drop,
 * which never reached the server, takes none.
 */
export function countsAgainstServer(policy: CallPolicy, failure: AttemptFailure): boolean {
  if (failure.sizeRejected || failure.dropped) {
    return false;
  }
  return (
    failure.timedOut ||
    isRetryableCode(policy, failure.code) ||
    (failure.hint.kind === 'do-not-retry' && failure.hint.source === 'pushback')
  );
}

/** What to do after an attempt of an uncommitted call failed. */
export function decideAfterFailure(input: FailureDecisionInput): FailureDecision {
  const { policy, failure } = input;
  if (failure.dropped) {
    return policy.kind === 'hedging' ? { type: 'stop-hedging', reason: 'lb-drop' } : finish('lb-drop');
  }
  const retryable = !failure.sizeRejected && (failure.timedOut || isRetryableCode(policy, failure.code));
  if (!retryable) {
    // The call's own deadline, reported by grpc-js as the attempt's DEADLINE_EXCEEDED (up to a tick before the
    // clock reads it): the deadline ended the call, not a status the policy chose to treat as fatal.
    const deadlineReached =
      failure.code === Status.DEADLINE_EXCEEDED && input.now + EARLY_DEADLINE_MS >= input.deadline;
    return finish(deadlineReached ? 'deadline' : 'fatal-status');
  }
  if (policy.kind === 'hedging') {
    return decideHedging(input);
  }

  const hint = failure.hint;
  if (hint.kind === 'do-not-retry') {
    return finish('do-not-retry');
  }
  if (input.attemptsStarted >= policy.maxAttempts) {
    return finish('attempts-exhausted');
  }
  // A retry was coming, but the call's own deadline has passed (a server's DEADLINE_EXCEEDED is retried like any
  // listed code while it is ahead): the call ends for its deadline.
  if (input.now >= input.deadline) {
    return finish('deadline');
  }
  let delayMs: number;
  let reason: 'backoff' | 'pushback' | 'retry-info';
  let backoff: BackoffState;
  if (hint.kind === 'retry-after') {
    delayMs = hint.delayMs;
    reason = hint.source;
    backoff = initialBackoffState(policy);
  } else {
    const step = nextBackoff(
      policy,
      input.jitter,
      input.backoff ?? initialBackoffState(policy),
      input.random,
    );
    delayMs = step.delayMs;
    reason = 'backoff';
    backoff = step.state;
  }
  if (deadlineOutruns(input, delayMs) || (input.deadlineAware && input.now + delayMs >= input.deadline)) {
    return finish('deadline-aware');
  }
  const replay = input.replay();
  if (replay !== 'fits') {
    return finish(REPLAY_FINISH[replay]);
  }
  if (input.gate() !== 'allow') {
    return finish('throttled');
  }
  return { type: 'retry', delayMs, reason, backoff };
}

function decideHedging(input: FailureDecisionInput): FailureDecision {
  const hint = input.failure.hint;
  if (hint.kind === 'do-not-retry') {
    return { type: 'stop-hedging', reason: 'do-not-retry' };
  }
  if (input.attemptsStarted >= input.policy.maxAttempts) {
    return { type: 'stop-hedging', reason: 'attempts-exhausted' };
  }
  if (input.now >= input.deadline) {
    return finish('deadline');
  }
  const delayMs = hint.kind === 'retry-after' ? hint.delayMs : 0;
  // With no attempt in flight the call would wait out the server's delay with nothing to answer it, as a retry waits
  // out its backoff: under deadlineAwareBackoff, a wait that would end after the deadline is not begun either.
  const awareWaitPastDeadline =
    input.deadlineAware &&
    hint.kind === 'retry-after' &&
    input.attemptsInFlight === 0 &&
    input.now + delayMs >= input.deadline;
  if (deadlineOutruns(input, delayMs) || awareWaitPastDeadline) {
    return { type: 'stop-hedging', reason: 'deadline-aware' };
  }
  if (hint.kind === 'retry-after') {
    return { type: 'hedge-after', delayMs: hint.delayMs, reason: hint.source };
  }
  return { type: 'hedge-now' };
}

/**
 * How long before `Date.now()` reads the call's deadline grpc-js may report it: its deadline timer runs on the event
 * loop's clock, and that clock and `Date.now()` count whole milliseconds apart.
 */
const EARLY_DEADLINE_MS = 1;

/**
 * A DEADLINE_EXCEEDED that the next attempt, `delayMs` from now (a retry's backoff or pushback, a hedge's server
 * delay, 0 for a hedge sent at once), cannot outrun: it would not start before the deadline, counting the deadline
 * as reached up to {@link EARLY_DEADLINE_MS} early. Such a failure ends the call with it, whether or not
 * `deadlineAware` asks for this: most often it is the call's own deadline, reported by grpc-js's timer a little
 * before the clock reads it, and a further attempt would only go out at the deadline. A DEADLINE_EXCEEDED well
 * before the deadline (the server's own, a per-attempt timeout) is retried or hedged like any listed code.
 */
function deadlineOutruns(input: FailureDecisionInput, delayMs: number): boolean {
  return (
    input.failure.code === Status.DEADLINE_EXCEEDED &&
    input.now + Math.max(delayMs, EARLY_DEADLINE_MS) >= input.deadline
  );
}

/** Whether a further hedge may be sent now. */
export interface HedgeSendInput {
  readonly maxAttempts: number;
  readonly attemptsStarted: number;
  /** Attempts in flight: while one is, a hedge the hedge budget refuses is asked for again later. */
  readonly liveAttempts: number;
  readonly replay: () => ReplayVerdict;
  /** The gates' verdict, naming who refused; asked last (a budget spends when it allows). */
  readonly gate: () => GateVerdict;
}

export type HedgeSendDecision =
  | { readonly type: 'send' }
  /** The hedge budget is empty for now and an attempt is still in flight: ask again one hedging delay later. */
  | { readonly type: 'wait-for-budget' }
  | {
      readonly type: 'stop';
      readonly reason:
        | 'attempts-exhausted'
        | 'replay-buffer'
        | 'request-changed'
        | 'request-unserializable'
        | 'throttled';
    };

/** The rules for sending the next hedge: attempts left, room in the replay buffer, then the gates. */
export function decideHedgeSend(input: HedgeSendInput): HedgeSendDecision {
  if (input.attemptsStarted >= input.maxAttempts) {
    return { type: 'stop', reason: 'attempts-exhausted' };
  }
  const replay = input.replay();
  if (replay !== 'fits') {
    return { type: 'stop', reason: REPLAY_FINISH[replay] };
  }
  const verdict = input.gate();
  if (verdict === 'allow') {
    return { type: 'send' };
  }
  if (verdict === 'refused-by-hedge-budget' && input.liveAttempts > 0) {
    return { type: 'wait-for-budget' };
  }
  return { type: 'stop', reason: 'throttled' };
}

/** Why no further attempt can resend the request, as a finish or stop reason. */
const REPLAY_FINISH = {
  full: 'replay-buffer',
  changed: 'request-changed',
  unserializable: 'request-unserializable',
} as const satisfies Record<Exclude<ReplayVerdict, 'fits'>, FinishReason>;

/** The finish reason for a replay verdict that lets no further attempt go. */
export function replayFinishReason(
  verdict: Exclude<ReplayVerdict, 'fits'>,
): (typeof REPLAY_FINISH)[keyof typeof REPLAY_FINISH] {
  return REPLAY_FINISH[verdict];
}

const FINISH_TEXT: Readonly<Record<FinishReason, string>> = {
  'fatal-status': 'its status is not retryable',
  deadline: 'the call deadline passed',
  'do-not-retry': 'the server said not to retry',
  'attempts-exhausted': 'no attempt left',
  'replay-buffer': 'the replay buffer is full',
  'request-changed': 'a request message changed after it was written, so a resend would carry other data',
  'request-unserializable': 'a request message cannot be serialized',
  'deadline-aware': 'the next backoff would outlast the deadline',
  throttled: 'a retry was refused (by the retry gate or an adaptive throttle)',
  'lb-drop': 'the load balancer dropped the call',
  'start-failed': 'the next attempt could not be started',
};

/**
 * The call's status when a failure ends it: the attempt's own, except after a per-attempt timeout, whose
 * DEADLINE_EXCEEDED also says why no further attempt was made.
 */
export function finishStatus(
  status: StatusObject,
  reason: FinishReason,
  cancelReason: AttemptCancelReason | undefined,
): StatusObject {
  if (cancelReason !== 'per-attempt-timeout') {
    return status;
  }
  return { ...status, details: `${status.details}; ${FINISH_TEXT[reason]}` };
}

function finish(reason: FinishReason): FailureDecision {
  return { type: 'finish', reason };
}
