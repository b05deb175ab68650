import type { StatusObject } from '@grpc/grpc-js';
import type { Attempt } from './attempt.js';
import type { TimerHandle } from './clock.js';
import type { AttemptCancelReason } from './events.js';
import type { InterceptingCallInterface } from './grpc-types.js';
import type { FinishReason } from './retry-decision.js';

/**
 * Where a call under a retry or hedging policy stands. Exactly one phase at a time; each holds only its own data.
 *
 * ```
 * not-started ──start──▶ in-flight ◀──timer── waiting
 *                          │   │  └──failure──▶ waiting (retry backoff, or a hedge after a server delay)
 *                          │   └──headers / message / OK / overflow──▶ committed ──status──▶ ended
 *                          └──failure that ends the call──▶ ended
 * any phase ──cancel / deadline──▶ ended
 * ```
 * @internal
 */
export type CallPhase =
  /** Created by grpc-js, `start` not called yet. The first attempt's call already exists (grpc-js made it). */
  | { readonly tag: 'not-started'; readonly firstCall: InterceptingCallInterface }
  /** One or more attempts are in flight and none has committed. */
  | {
      readonly tag: 'in-flight';
      readonly live: Attempt[];
      /** Hedging: the timer of the next hedge, while one is due. */
      hedgeTimer: TimerHandle | undefined;
      /** Hedging: whether further hedges may still be sent. */
      hedging: boolean;
      /** Hedging: the last failure, the call's result if every attempt fails. */
      lastFailure: StatusObject | undefined;
    }
  /** No attempt in flight: waiting for the timer of the next attempt (a retry's backoff, or a delayed hedge). */
  | {
      readonly tag: 'waiting';
      readonly next: 'retry' | 'hedge';
      timer: TimerHandle | undefined;
      /** When the wait began (for the A96 retry_delay). */
      readonly since: number;
      readonly lastFailure: StatusObject;
      /** The replay buffer overflowed during the wait: the next attempt carries it once and is the last. */
      commitNext: boolean;
    }
  /** One attempt won; everything goes to it and its status is the call's. */
  | { readonly tag: 'committed'; readonly attempt: Attempt }
  /** The status has been decided; nothing more happens. */
  | { readonly tag: 'ended' };

export type CallPhaseTag = CallPhase['tag'];

/** Which phase may follow which; anything else is a bug, and the engine throws. @internal */
export function isLegalTransition(from: CallPhaseTag, to: CallPhaseTag): boolean {
  switch (from) {
    case 'not-started':
      return to === 'in-flight' || to === 'ended';
    case 'in-flight':
      return to !== 'not-started';
    case 'waiting':
      return to === 'in-flight' || to === 'ended';
    case 'committed':
      return to === 'ended';
    case 'ended':
      return false;
  }
}

const FINISH_TEXT: Readonly<Record<FinishReason, string>> = {
  'fatal-status': 'its status is not retryable',
  deadline: 'the call deadline passed',
  'do-not-retry': 'the server said not to retry',
  'attempts-exhausted': 'no attempt left',
  'replay-buffer': 'the replay buffer is full',
  'deadline-aware': 'the next backoff would outlast the deadline',
  throttled: 'the retry gate refused a retry',
};

/**
 * The call's status when a failure ends it: the attempt's own, except after a per-attempt timeout, whose
 * DEADLINE_EXCEEDED also says why no further attempt was made. @internal
 */
export function endStatus(
  status: StatusObject,
  reason: FinishReason,
  cancelReason: AttemptCancelReason | undefined,
): StatusObject {
  if (cancelReason !== 'per-attempt-timeout') {
    return status;
  }
  return { ...status, details: `${status.details}; ${FINISH_TEXT[reason]}` };
}
