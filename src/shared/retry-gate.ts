/**
 * The retry gate: whatever decides whether one more attempt (a retry or a further hedge) may be sent.
 *
 * It is a structural interface, so any object with these methods plugs in through the interceptor's `gate`
 * option, whichever module build (ESM or CJS) made it. {@link RetryThrottle} (A6 token bucket) implements it;
 * retry budgets and circuit breakers can too.
 */

/** Why an attempt beyond the first is wanted. */
export type GatedAttemptKind = 'retry' | 'hedge';

/**
 * What the engine's gates said of one more attempt, naming who refused: the interceptor's gate (A6 throttle, a
 * retry budget, your own), or adaptive hedging's hedge budget (which the call asks again later). @internal
 */
export type GateVerdict = 'allow' | 'refused-by-gate' | 'refused-by-hedge-budget';

export interface RetryGate {
  /**
   * May one more attempt of this kind be sent now? Returning true may spend from the gate (a budget withdraws);
   * the engine asks only when it is about to send the attempt.
   */
  allowAttempt(kind: GatedAttemptKind): boolean;
  /**
   * An attempt failed in a way that counts against the server: a retryable (retry policy) or non-fatal (hedging
   * policy) status, a do-not-retry server hint, or an attempt that hit its per-attempt timeout.
   */
  recordFailure(): void;
  /** A call under a policy ended with OK. */
  recordSuccess(): void;
  /** A call under a policy started (a budget deposits here). Optional. */
  recordCall?(): void;
  /** Short name for events and traces, e.g. `"retry-throttle"` or `"retry-budget"`. Optional. */
  readonly name?: string | undefined;
  /** Tokens (or budget) left, for events; optional. */
  readonly tokens?: number | undefined;
}

/**
 * Whether `value` has the shape of a {@link RetryGate}: what the `gate` option takes. It needs the methods
 * `allowAttempt`, `recordFailure` and `recordSuccess`, and `recordCall`, when it has one, must be a method too.
 */
export function isRetryGate(value: unknown): value is RetryGate {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const gate = value as Record<string, unknown>;
  return (
    typeof gate.allowAttempt === 'function' &&
    typeof gate.recordFailure === 'function' &&
    typeof gate.recordSuccess === 'function' &&
    (gate.recordCall === undefined || typeof gate.recordCall === 'function')
  );
}
