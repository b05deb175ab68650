/**
 * Options of adaptive hedging (the interceptor option `adaptiveHedging`), their defaults and their validation.
 * Defaults follow Finagle's BackupRequestFilter, except the budget's floor (see {@link DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND}).
 */

import type { Clock } from '../shared/clock.js';
import {
  checkBoolean,
  checkNumber,
  checkOptions,
  describeValue,
  type Renames,
} from '../util/option-checks.js';

/** Default extra load: hedges may add 5% to the calls; the delay aims at 4.5% of them (the 95.5th latency percentile). */
export const DEFAULT_ADAPTIVE_HEDGING_MAX_EXTRA_LOAD = 0.05;
/** Default length of the sliding latency window kept for reporting (Finagle: 3 × 10 s). */
export const DEFAULT_ADAPTIVE_HEDGING_WINDOW_MS = 30_000;
/** Default number of bins the reporting window is rotated in. */
export const DEFAULT_ADAPTIVE_HEDGING_WINDOW_BINS = 3;
/** Default floor of the adaptive delay (Finagle's `minSendBackupAfterMs`). */
export const DEFAULT_ADAPTIVE_HEDGING_MIN_DELAY_MS = 1;
/** Default ceiling of the adaptive delay. */
export const DEFAULT_ADAPTIVE_HEDGING_MAX_DELAY_MS = 60_000;
/**
 * The default number of recent calls the delay is the quantile of: 20 / maxExtraLoad (400 at 0.05), so that about
 * 20 of them lie above it (the quantile's count is then known within about a fifth); at least 20 and at most
 * 10,000. A shift of the latencies restarts the window (the shift detector, in AdaptiveHedging), so its length sets the
 * precision, not the time to follow a shift.
 */
export function defaultRecentCalls(maxExtraLoad: number): number {
  return Math.min(10_000, Math.max(20, Math.ceil(20 / maxExtraLoad)));
}
/**
 * Default number of methods whose delay is kept (see {@link AdaptiveHedgingOptions.maxMethods}): about 7 KB each, so
 * a client whose hedging policy covers paths without end (a proxy forwarding whatever it is asked) stays under 7 MB.
 */
export const DEFAULT_MAX_ADAPTIVE_METHODS = 1_000;
/** Default time-to-live of the budget's deposits and withdrawals (Finagle's RetryBudget: 10 s). */
export const DEFAULT_HEDGE_BUDGET_TTL_MS = 10_000;
/**
 * Default floor of the hedge budget: 3 hedges per second whatever the traffic (a reserve of 30 over the 10 s ttl),
 * so that a client with little traffic can hedge at all. Finagle's RetryBudget uses 10 per second (for retries at
 * 20%); for hedges held to 5% that would double the load at 200 calls per second whenever the delay is too short.
 * Chance is the room's job ({@link DEFAULT_HEDGE_BUDGET_CHANCE_SD}), not the floor's: the floor is a smaller share of
 * the calls the more there are, and at 350 calls per second it left the budget empty for seconds in
 * `simulate:adaptive`.
 */
export const DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND = 3;
/**
 * Default room for chance of the hedge budget, in standard deviations of the hedges its deposits pay for (see
 * RetryBudgetOptions.chanceSd). Where a slow mode holds maxExtraLoad of the calls, every one of them is worth a
 * hedge and demand averages the deposits exactly: by chance it is above them half the time, and the floor alone
 * (a smaller share of the calls as traffic grows) left the budget empty for seconds, refusing slow calls their
 * hedge. Three standard deviations is 30 hedges over 10 s at 200 calls/s (1.5% of the calls), 0.5% at 2,000.
 */
export const DEFAULT_HEDGE_BUDGET_CHANCE_SD = 3;

/** Options of the hedge budget inside {@link AdaptiveHedgingOptions}. */
export interface HedgeBudgetOptions {
  /** Hedges allowed per second whatever the traffic, so that low traffic can still hedge (default 3). */
  minPerSecond?: number | undefined;
  /** How long a call's deposit (and a hedge's withdrawal) counts, in ms (default 10 000; 1 000 to 60 000). */
  ttlMs?: number | undefined;
  /**
   * Room for chance: the budget also holds this many standard deviations of the hedges the calls paid for,
   * √(maxExtraLoad × calls in the ttl), so that demand averaging maxExtraLoad is not refused by chance (default 3;
   * 0 to 10; 0 holds hedges to the deposits and the floor alone).
   */
  chanceSd?: number | undefined;
}

/** {@link HedgeBudgetOptions} with every default filled in (`AdaptiveHedging.options.budget`). */
export type ResolvedHedgeBudgetOptions = {
  readonly [K in keyof HedgeBudgetOptions]-?: Exclude<HedgeBudgetOptions[K], undefined>;
};

/** Options of {@link AdaptiveHedging}; every field is optional. */
export interface AdaptiveHedgingOptions {
  /**
   * Extra attempts allowed as a share of calls, in (0, 1) (default 0.05). The hedging delay tracks the latency
   * quantile 1 − 0.9 × maxExtraLoad of first attempts (0.05 → p95.5, 0.01 → p99.1), so that a little under this
   * share of calls sends a hedge, and the budget holds hedges to this share; the tenth between them is the budget's
   * margin.
   */
  maxExtraLoad?: number | undefined;
  /**
   * How many recent calls the delay is the latency quantile of, an integer from 10 to 100,000 (default
   * 20 / maxExtraLoad, kept between 20 and 10,000: 400 at 0.05). A shift of the latencies is detected within tens of calls and restarts this window,
   * so a longer one is more precise without being slower to follow a shift.
   */
  recentCalls?: number | undefined;
  /** Floor of the adaptive delay, ms (default 1). */
  minDelayMs?: number | undefined;
  /** Ceiling of the adaptive delay, ms (default 60 000). */
  maxDelayMs?: number | undefined;
  /** Length of the sliding window of first-attempt latencies kept for reporting ({@link AdaptiveHedging.latencies}), ms (default 30 000). */
  windowMs?: number | undefined;
  /** Number of bins that window is kept in; the oldest is dropped as time moves on (default 3). */
  windowBins?: number | undefined;
  /** The hedge budget: `true` (default) for the defaults, an options object, or `false` for none. */
  budget?: boolean | HedgeBudgetOptions | undefined;
  /**
   * Hold a hedge that comes due while the method's calls stall (default true): when a second hedge comes due with
   * no call of the method having answered since the first, every call in flight waits behind the same pause (of
   * the server, the connection or the network), and a hedge would wait there too. It, and the hedges due after it,
   * go at the method's next answer if their calls are still waiting. Each held hedge is a `hedge-held` event.
   */
  holdInStalls?: boolean | undefined;
  /**
   * How many methods' delays are kept, an integer from 1 to 1,000,000 (default 1,000). When a new method would
   * pass it, the tenth of the methods recorded least recently are forgotten: their next calls hedge at the policy's
   * `hedgingDelay` again until their delay is learned anew. Only a client whose hedging policy covers method paths
   * without end (a proxy, a default `name: [{}]` entry) reaches it.
   */
  maxMethods?: number | undefined;
  /**
   * Time source (default the system clock); inject one for deterministic tests. Read when the `AdaptiveHedging`
   * is made (a clock that cannot read is refused then); later, a `now()` that throws or reads no finite number
   * gives its last good reading, warned once (`GRPC_RETRY_HEDGING_HOOK_ERROR`).
   */
  clock?: Clock | undefined;
}

/** {@link AdaptiveHedgingOptions} with every default filled in: what `AdaptiveHedging.options` holds. */
export interface ResolvedAdaptiveHedgingOptions {
  readonly maxExtraLoad: number;
  readonly recentCalls: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly windowMs: number;
  readonly windowBins: number;
  readonly budget: ResolvedHedgeBudgetOptions | undefined;
  readonly holdInStalls: boolean;
  readonly maxMethods: number;
}

const KNOWN = [
  'maxExtraLoad',
  'recentCalls',
  'minDelayMs',
  'maxDelayMs',
  'windowMs',
  'windowBins',
  'budget',
  'holdInStalls',
  'maxMethods',
  'clock',
];
/** The options of a hedge budget. @internal */
export const HEDGE_BUDGET_KEYS: readonly string[] = ['minPerSecond', 'ttlMs', 'chanceSd'];
const RENAMED: Renames = {
  windowSlices: { now: 'windowBins' },
  minSamples: {
    now: 'recentCalls',
    hint: 'the delay is the quantile of the recent calls; minSamples is gone',
  },
  recomputeEveryMs: {
    now: 'recentCalls',
    hint: 'the delay moves after every call; recomputeEveryMs is gone',
  },
  step: { now: 'recentCalls', hint: 'the delay is the quantile of the recent calls, not a stepped estimate' },
};

/** Validates the hedge budget's options at `path` and fills in the defaults. @internal */
export function resolveHedgeBudgetOptions(path: string, options: unknown): ResolvedHedgeBudgetOptions {
  if (options === true) {
    options = {};
  }
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TypeError(`${path} must be an object, true or false, got ${describeValue(options)}`);
  }
  const o = checkOptions(
    path,
    options,
    HEDGE_BUDGET_KEYS,
    undefined,
    `it takes the budget's options (${HEDGE_BUDGET_KEYS.join(', ')}), not an instance: adaptive hedging makes its own budget`,
  );
  return {
    minPerSecond: checkNumber(path, 'minPerSecond', o.minPerSecond, DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND, {
      min: 0,
    }),
    ttlMs: checkNumber(path, 'ttlMs', o.ttlMs, DEFAULT_HEDGE_BUDGET_TTL_MS, {
      min: 1_000,
      max: 60_000,
      integer: true,
      unit: 'ms',
    }),
    chanceSd: checkNumber(path, 'chanceSd', o.chanceSd, DEFAULT_HEDGE_BUDGET_CHANCE_SD, { min: 0, max: 10 }),
  };
}

/** Validates `true` or an {@link AdaptiveHedgingOptions} object at `path` and fills in the defaults. @internal */
export function resolveAdaptiveHedgingOptions(
  path: string,
  options: unknown,
): ResolvedAdaptiveHedgingOptions {
  if (options === true) {
    options = {};
  }
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TypeError(`${path} must be true or an options object, got ${describeValue(options)}`);
  }
  const o = checkOptions(path, options, KNOWN, RENAMED);
  const maxExtraLoad = checkNumber(
    path,
    'maxExtraLoad',
    o.maxExtraLoad,
    DEFAULT_ADAPTIVE_HEDGING_MAX_EXTRA_LOAD,
    {
      min: 0,
      max: 1,
      minExclusive: true,
      maxExclusive: true,
    },
  );
  const recentCalls = checkNumber(path, 'recentCalls', o.recentCalls, defaultRecentCalls(maxExtraLoad), {
    min: 10,
    max: 100_000,
    integer: true,
  });
  const minDelayMs = checkNumber(path, 'minDelayMs', o.minDelayMs, DEFAULT_ADAPTIVE_HEDGING_MIN_DELAY_MS, {
    min: 0,
    minExclusive: true,
    unit: 'ms',
  });
  const maxDelayMs = checkNumber(
    path,
    'maxDelayMs',
    o.maxDelayMs,
    Math.max(DEFAULT_ADAPTIVE_HEDGING_MAX_DELAY_MS, minDelayMs),
    { min: minDelayMs, unit: 'ms, at least minDelayMs' },
  );
  const windowMs = checkNumber(path, 'windowMs', o.windowMs, DEFAULT_ADAPTIVE_HEDGING_WINDOW_MS, {
    min: 0,
    minExclusive: true,
    unit: 'ms',
  });
  const windowBins = checkNumber(path, 'windowBins', o.windowBins, DEFAULT_ADAPTIVE_HEDGING_WINDOW_BINS, {
    min: 1,
    max: 60,
    integer: true,
  });
  const budget = o.budget === false ? undefined : resolveHedgeBudgetOptions(`${path}.budget`, o.budget);
  const holdInStalls = checkBoolean(path, 'holdInStalls', o.holdInStalls, true);
  const maxMethods = checkNumber(path, 'maxMethods', o.maxMethods, DEFAULT_MAX_ADAPTIVE_METHODS, {
    min: 1,
    max: 1_000_000,
    integer: true,
  });
  return {
    maxExtraLoad,
    recentCalls,
    minDelayMs,
    maxDelayMs,
    windowMs,
    windowBins,
    budget,
    holdInStalls,
    maxMethods,
  };
}
