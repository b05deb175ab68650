import type { StatusObject } from '@grpc/grpc-js';
import type { Attempt } from './attempt.js';
import type { TimerHandle } from './clock.js';
import type { InterceptingCallInterface } from './grpc-types.js';

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
