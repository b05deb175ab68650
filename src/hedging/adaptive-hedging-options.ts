/**
 * Options of adaptive hedging (the interceptor option `adaptiveHedging`), their defaults and their validation.
 * Defaults follow Finagle's BackupRequestFilter, except the budget's floor (see {@link DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND}).
 */
import { type Clock, isClock } from '../shared/clock.js';

/** Default extra load: hedges may add 5% to the calls, and the delay is the 95th latency percentile. */
export const DEFAULT_MAX_EXTRA_LOAD = 0.05;
/** Default length of the sliding latency window (Finagle: 3 × 10 s). */
export const DEFAULT_ADAPTIVE_WINDOW_MS = 30_000;
/** Default number of slices the window is rotated in. */
export const DEFAULT_ADAPTIVE_WINDOW_SLICES = 3;
/** Default interval between two recomputations of a method's delay (Finagle: 3 s). */
export const DEFAULT_RECOMPUTE_EVERY_MS = 3_000;
/** Default floor of the adaptive delay (Finagle's `minSendBackupAfterMs`). */
export const DEFAULT_MIN_HEDGING_DELAY_MS = 1;
/**
 * Default number of samples the window must hold before its percentile replaces the configured `hedgingDelay`.
 * With 100 samples the 95th percentile is backed by 5 observations above it.
 */
export const DEFAULT_MIN_SAMPLES = 100;
/** Default time-to-live of the budget's deposits and withdrawals (Finagle's RetryBudget: 10 s). */
export const DEFAULT_HEDGE_BUDGET_TTL_MS = 10_000;
/**
 * Default floor of the hedge budget: 3 hedges per second whatever the traffic (a reserve of 30 over the 10 s ttl).
 * With the delay at the p95, hedge demand is on average exactly the budget's share, so the floor is what absorbs
 * chance: 30 hedges are about three standard deviations of the demand at 200 calls per second, and in
 * `bench:adaptive` a floor of 1 left 2% of the calls unhedged (p99 at the slow tail) where 3 refused none.
 * Finagle's RetryBudget uses 10 per second (for retries at 20%); for hedges held to 5% that would double the load
 * at 200 calls per second whenever the delay is too short. Three adds at most one point above 300 calls per second.
 */
export const DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND = 3;

/** Options of the hedge budget inside {@link AdaptiveHedgingOptions}. */
export interface HedgeBudgetOptions {
  /** Hedges allowed per second whatever the traffic, so that low traffic can still hedge (default 3). */
  minPerSecond?: number;
  /** How long a call's deposit (and a hedge's withdrawal) counts, in ms (default 10 000; 1 000 to 60 000). */
  ttlMs?: number;
}

/** Options of {@link AdaptiveHedging}; every field is optional. */
export interface AdaptiveHedgingOptions {
  /**
   * Extra attempts allowed as a share of calls, in [0, 1) (default 0.05). The hedging delay is the latency
   * percentile 100 × (1 − maxExtraLoad) (0.05 → p95, 0.01 → p99), and the budget holds hedges to this share.
   */
  maxExtraLoad?: number;
  /** Length of the sliding latency window, ms (default 30 000). */
  windowMs?: number;
  /** Number of slices the window is kept in; the oldest is dropped as time moves on (default 3). */
  windowSlices?: number;
  /** A method's delay is recomputed at most this often, ms (default 3 000). */
  recomputeEveryMs?: number;
  /** Floor of the adaptive delay, ms (default 1). */
  minDelayMs?: number;
  /** Samples the window must hold before its percentile replaces the configured hedgingDelay (default 100). */
  minSamples?: number;
  /** The hedge budget: `true` (default) for the defaults, an options object, or `false` for none. */
  budget?: boolean | HedgeBudgetOptions;
  /** Time source (default the system clock); inject one for deterministic tests. */
  clock?: Clock;
}

/** {@link AdaptiveHedgingOptions} with every default filled in. @internal */
export interface ResolvedAdaptiveHedgingOptions {
  readonly maxExtraLoad: number;
  readonly windowMs: number;
  readonly windowSlices: number;
  readonly recomputeEveryMs: number;
  readonly minDelayMs: number;
  readonly minSamples: number;
  readonly budget: Required<HedgeBudgetOptions> | undefined;
}

const KNOWN = new Set([
  'maxExtraLoad',
  'windowMs',
  'windowSlices',
  'recomputeEveryMs',
  'minDelayMs',
  'minSamples',
  'budget',
  'clock',
]);
const KNOWN_BUDGET = new Set(['minPerSecond', 'ttlMs']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function check(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  valid: (n: number) => boolean,
  rule: string,
): number {
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== 'number' || !valid(value)) {
    throw new RangeError(`${where}.${name} must be ${rule}, got ${String(value)}`);
  }
  return value;
}

/** Checks the clock option: an object with now, setTimer and clearTimer. @internal */
export function checkClock(where: string, clock: unknown): Clock | undefined {
  if (clock === undefined) {
    return undefined;
  }
  if (!isClock(clock)) {
    throw new TypeError(`${where}.clock must be a Clock (an object with now, setTimer and clearTimer)`);
  }
  return clock;
}

/** Validates the hedge budget's options and fills in the defaults. @internal */
export function resolveHedgeBudgetOptions(where: string, options: unknown): Required<HedgeBudgetOptions> {
  if (options === undefined || options === true) {
    options = {};
  }
  if (!isPlainObject(options)) {
    throw new TypeError(`${where} must be an object, true or false`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_BUDGET.has(key)) {
      throw new TypeError(`${where}.${key} is not a known option`);
    }
  }
  return {
    minPerSecond: check(
      where,
      'minPerSecond',
      options.minPerSecond,
      DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND,
      (n) => Number.isFinite(n) && n >= 0,
      'a number >= 0',
    ),
    ttlMs: check(
      where,
      'ttlMs',
      options.ttlMs,
      DEFAULT_HEDGE_BUDGET_TTL_MS,
      (n) => Number.isInteger(n) && n >= 1_000 && n <= 60_000,
      'an integer from 1000 to 60000',
    ),
  };
}

/** Validates `true` or an {@link AdaptiveHedgingOptions} object and fills in the defaults. @internal */
export function resolveAdaptiveHedgingOptions(
  where: string,
  options: unknown,
): ResolvedAdaptiveHedgingOptions {
  if (options === true || options === undefined) {
    options = {};
  }
  if (!isPlainObject(options)) {
    throw new TypeError(`${where} must be true or an options object`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) {
      throw new TypeError(`${where}.${key} is not a known option`);
    }
  }
  const maxExtraLoad = check(
    where,
    'maxExtraLoad',
    options.maxExtraLoad,
    DEFAULT_MAX_EXTRA_LOAD,
    (n) => n >= 0 && n < 1,
    'a number in [0, 1)',
  );
  const windowMs = check(
    where,
    'windowMs',
    options.windowMs,
    DEFAULT_ADAPTIVE_WINDOW_MS,
    (n) => Number.isFinite(n) && n > 0,
    'a number of ms greater than 0',
  );
  const windowSlices = check(
    where,
    'windowSlices',
    options.windowSlices,
    DEFAULT_ADAPTIVE_WINDOW_SLICES,
    (n) => Number.isInteger(n) && n >= 1 && n <= 60,
    'an integer from 1 to 60',
  );
  const recomputeEveryMs = check(
    where,
    'recomputeEveryMs',
    options.recomputeEveryMs,
    DEFAULT_RECOMPUTE_EVERY_MS,
    (n) => Number.isFinite(n) && n >= 0,
    'a number of ms >= 0',
  );
  const minDelayMs = check(
    where,
    'minDelayMs',
    options.minDelayMs,
    DEFAULT_MIN_HEDGING_DELAY_MS,
    (n) => Number.isFinite(n) && n >= 0,
    'a number of ms >= 0',
  );
  const minSamples = check(
    where,
    'minSamples',
    options.minSamples,
    DEFAULT_MIN_SAMPLES,
    (n) => Number.isInteger(n) && n >= 1,
    'an integer >= 1',
  );
  const budget =
    options.budget === false ? undefined : resolveHedgeBudgetOptions(`${where}.budget`, options.budget);
  return { maxExtraLoad, windowMs, windowSlices, recomputeEveryMs, minDelayMs, minSamples, budget };
}
