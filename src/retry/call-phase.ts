import type { StatusObject } from '@grpc/grpc-js';
import type { TimerHandle } from '../shared/clock.js';
import type { InterceptingCallInterface } from '../shared/grpc-types.js';
import type { Attempt } from './attempt.js';

/**
 * Where a call under a retry or hedging policy stands. Exactly one phase at a time; each holds only its own data.
 * The diagram of the moves is in ARCHITECTURE.md; {@link isLegalTransition} is its code.
 * @internal
 */
export type CallPhase =
  /** Created by grpc-js, `start` not called yet. The first attempt's call already exists (grpc-js made it). */
  | { readonly tag: 'not-started'; readonly firstCall: InterceptingCallInterface }
  /** One or more attempts are in flight (the call's AttemptSet holds them) and none has committed. */
  | {
      readonly tag: 'in-flight';
      /** The last failure of an attempt, the call's result if every attempt fails (hedging). */
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
    }
  /** One attempt won; everything goes to it and its status is the call's. */
  | {
      readonly tag: 'committed';
      readonly attempt: Attempt;
      /** Committed because the request outgrew the replay buffer, not by an answer of the server. */
      readonly byOverflow: boolean;
    }
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
