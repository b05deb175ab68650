import type { RetryPolicy } from '../config/types.js';

/** The parts of a retry policy that shape its backoff. */
export type BackoffPolicy = Pick<RetryPolicy, 'initialBackoffMs' | 'maxBackoffMs' | 'backoffMultiplier'>;

/** What a jitter kind gets to compute the delay before one retry. */
interface JitterInput {
  readonly policy: BackoffPolicy;
  /** The un-randomized delay: `min(initialBackoff * multiplier^(n-1), maxBackoff)`. */
  readonly capped: number;
  /** The delay chosen for the previous retry (initialBackoff before the first). */
  readonly previousMs: number;
  /** Uniform in [0, 1). */
  readonly r: number;
}

interface JitterKind {
  /** The delay before the retry. */
  delay(input: JitterInput): number;
  /** The largest delay it can give before retry n, for worst-case estimates (`check`). */
  max(policy: BackoffPolicy, capped: number): number;
  /** For `check`'s report: what it does to the capped backoff, and which bound the worst case uses. */
  readonly text: { readonly range: string; readonly bound: string };
}

/**
 * Every jitter kind, in one table: adding a kind is adding an entry here (and a line to the docs of
 * {@link JitterStrategy}). With `base(n) = min(initialBackoff * backoffMultiplier^(n-1), maxBackoff)` for retry n
 * (counted since the start of the call or since the last server pushback) and `r` uniform in [0, 1):
 */
const JITTER_KINDS = {
  /** gRPC A6 (as revised in 2024): `base(n) * (0.8 + 0.4 r)`, i.e. ±20% around the capped value. */
  a6: {
    delay: ({ capped, r }) => capped * (0.8 + 0.4 * r),
    max: (_policy, capped) => capped * 1.2,
    text: { range: 'then jittered × 0.8 to × 1.2', bound: 'each × 1.2 jitter upper bound' },
  },
  /** Brooker, "Exponential Backoff and Jitter": `base(n) * r`, anywhere between 0 and the capped value. */
  full: {
    delay: ({ capped, r }) => capped * r,
    max: (_policy, capped) => capped,
    text: {
      range: 'then jittered × 0 to × 1 (full jitter)',
      bound: 'each at its capped value, the full-jitter upper bound',
    },
  },
  /** `base(n) / 2 + base(n) / 2 * r`: at least half the capped value. */
  equal: {
    delay: ({ capped, r }) => capped / 2 + (capped / 2) * r,
    max: (_policy, capped) => capped,
    text: {
      range: 'then jittered × 0.5 to × 1 (equal jitter)',
      bound: 'each at its capped value, the equal-jitter upper bound',
    },
  },
  /**
   * `min(maxBackoff, initialBackoff + (3 * previous - initialBackoff) * r)`: grows from the previous delay rather
   * than from n, so `backoffMultiplier` is not used.
   */
  decorrelated: {
    delay: ({ policy, previousMs, r }) => {
      const low = policy.initialBackoffMs;
      const high = Math.max(low, previousMs * 3);
      return Math.min(policy.maxBackoffMs, low + (high - low) * r);
    },
    max: (policy) => policy.maxBackoffMs,
    text: {
      range:
        'decorrelated jitter: between initialBackoff and 3 × the previous delay, capped; the multiplier is unused',
      bound: 'each at maxBackoff, the decorrelated-jitter upper bound',
    },
  },
} satisfies Record<string, JitterKind>;

/**
 * How the exponential backoff is randomized: `'a6'` (default; ±20%), `'full'`, `'equal'` or `'decorrelated'`.
 * See the formulas in docs/configuration.md ("Jitter strategies").
 */
export type JitterStrategy = keyof typeof JITTER_KINDS;

/** Every {@link JitterStrategy}. */
export const JITTER_STRATEGIES: readonly JitterStrategy[] = Object.freeze(
  Object.keys(JITTER_KINDS) as JitterStrategy[],
);

/** Whether `value` names a jitter kind. @internal */
export function isJitterStrategy(value: unknown): value is JitterStrategy {
  return typeof value === 'string' && Object.hasOwn(JITTER_KINDS, value);
}

/** How `check` describes a jitter kind. @internal */
export function jitterText(jitter: JitterStrategy): { readonly range: string; readonly bound: string } {
  return JITTER_KINDS[jitter].text;
}

/** The un-randomized delay before retry `retryNumber` (1-based): the cap applies before any jitter. @internal */
export function cappedBackoffMs(policy: BackoffPolicy, retryNumber: number): number {
  const exponential = policy.initialBackoffMs * policy.backoffMultiplier ** (retryNumber - 1);
  return Math.min(exponential, policy.maxBackoffMs);
}

/** The largest delay a strategy can produce before retry n: what a worst-case estimate must assume. @internal */
export function maxBackoffMs(
  policy: BackoffPolicy,
  retryNumber: number,
  jitter: JitterStrategy = 'a6',
): number {
  return JITTER_KINDS[jitter].max(policy, cappedBackoffMs(policy, retryNumber));
}

/** Where a call's backoff stands: retries since the start or the last pushback, and the last delay. @internal */
export interface BackoffState {
  readonly retryNumber: number;
  readonly previousMs: number;
}

/** The state before the first retry, and after a server pushback or retry hint (A6: restart from initialBackoff). */
export function initialBackoffState(policy: BackoffPolicy): BackoffState {
  return { retryNumber: 0, previousMs: policy.initialBackoffMs };
}

/**
 * The delay before the next retry, and the state after it: a pure function of the policy, the jitter kind, the
 * state and one uniform random number `r` in [0, 1). @internal
 */
export function nextBackoff(
  policy: BackoffPolicy,
  jitter: JitterStrategy,
  state: BackoffState,
  r: number,
): { readonly delayMs: number; readonly state: BackoffState } {
  const retryNumber = state.retryNumber + 1;
  const delayMs = JITTER_KINDS[jitter].delay({
    policy,
    capped: cappedBackoffMs(policy, retryNumber),
    previousMs: state.previousMs,
    r,
  });
  return { delayMs, state: { retryNumber, previousMs: delayMs } };
}
