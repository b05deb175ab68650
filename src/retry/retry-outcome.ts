import type { Metadata } from '@grpc/grpc-js';
import type { CallEndReason } from './events.js';

/**
 * What the retry interceptor did for one call, read from the call's error or status with {@link retryOutcomeOf}:
 * the same figures as the call's `call-end` event, for code that has the error in hand and no event listener.
 */
export interface RetryOutcome {
  /** Attempts sent, the original and its hedges included; 0 for a call that ended before it started. */
  readonly attempts: number;
  /**
   * Why the call got no further attempt, for a call that failed (see {@link CallEndReason}): `fatal-status` (its
   * policy does not retry that code), `attempts-exhausted`, `deadline`, `throttled`, `committed` (the server had
   * answered, which A6 never retries), ... Undefined for a call that succeeded, and for one the caller cancelled
   * with no earlier reason.
   */
  readonly reason?: CallEndReason;
}

/**
 * The outcomes, by the trailers' Metadata object the call's status carried. grpc-js builds a call's error from its
 * status with the same Metadata object (`error.metadata`), and hands the status itself to `'status'` listeners, so
 * either one finds it; nothing is added to what goes over the wire or to the error. Weak: an outcome lives as long
 * as the application keeps the error or status. Kept on `globalThis` under a `Symbol.for` key, so that the ESM and
 * the CJS build loaded in one process share it: an interceptor made by a CommonJS library, read by an ESM
 * application's `retryOutcomeOf`.
 */
const OUTCOMES: unique symbol = Symbol.for('grpc-retry-hedging.retry-outcomes');
const processWide = globalThis as { [OUTCOMES]?: WeakMap<Metadata, RetryOutcome> };
processWide[OUTCOMES] ??= new WeakMap<Metadata, RetryOutcome>();
const outcomes = processWide[OUTCOMES];

/**
 * Keeps `outcome` for the status whose trailers are `trailers`.
 * @internal
 */
export function recordRetryOutcome(trailers: Metadata, outcome: RetryOutcome): void {
  outcomes.set(trailers, outcome);
}

/**
 * What the retry interceptor did for the call that ended with `errorOrStatus`: a grpc-js `ServiceError` (the
 * callback's or the `'error'` event's) or a `StatusObject` (the `'status'` event's).
 *
 * ```ts
 * client.getUser(request, (error, user) => {
 *   if (error) console.error(error.message, retryOutcomeOf(error)); // { attempts: 3, reason: 'attempts-exhausted' }
 * });
 * ```
 *
 * Undefined when the interceptor kept no outcome for it: a call that succeeded at its first attempt (kept only for
 * calls that failed or made more than one attempt, so that a call that needs nothing pays nothing), a call whose
 * method has no retry or hedging policy (or `withRetryOptions({ enabled: false })`), a call through no retry
 * interceptor, or a status whose trailers an interceptor outside this one replaced.
 */
export function retryOutcomeOf(errorOrStatus: unknown): RetryOutcome | undefined {
  if (typeof errorOrStatus !== 'object' || errorOrStatus === null) {
    return undefined;
  }
  let trailers: unknown;
  try {
    trailers = (errorOrStatus as { metadata?: unknown }).metadata;
  } catch {
    return undefined; // a getter that throws, a revoked proxy: no outcome, rather than an error in an error handler
  }
  return typeof trailers === 'object' && trailers !== null ? outcomes.get(trailers as Metadata) : undefined;
}
