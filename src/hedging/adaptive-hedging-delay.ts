import { type Clock, systemClock } from '../shared/clock.js';
import type { HedgeDelaySource, HedgingDelayChoice } from '../shared/hedge-delay-source.js';
import { guardedClockOption } from '../util/guarded-clock.js';
import { checkFunctionArgument, checkNumberArgument, describeValue } from '../util/option-checks.js';
import {
  type AdaptiveHedgingOptions,
  type ResolvedAdaptiveHedgingOptions,
  resolveAdaptiveHedgingOptions,
} from './adaptive-hedging-options.js';
import { HedgeBudget } from './hedge-budget.js';
import { HedgeDelayTracker, type HedgeDelayTrackerConfig } from './hedge-delay-tracker.js';
import { LatencyWindow } from './latency-window.js';
import { StallHold } from './stall-hold.js';

export type { HedgingDelayChoice };

/** Quantiles of a method's first-attempt latencies over the reporting window, as {@link AdaptiveHedging.latencies} gives them. */
export interface FirstAttemptLatencies {
  /** Calls recorded in the window. */
  readonly count: number;
  /** Median, 95th and 99th percentile, ms (within 1%); a superseded first attempt counts with its time so far. */
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

interface MethodState {
  readonly tracker: HedgeDelayTracker;
  readonly window: LatencyWindow;
  /** When the method's last outcome was recorded (the clock's ms): the least recent are forgotten first. */
  recordedAt: number;
}

/**
 * Adaptive hedging: the delay before each further hedge is the latency quantile of the method's recent first
 * attempts that leaves 90% of maxExtraLoad of them above it (p95.5 by default), so that fewer than maxExtraLoad
 * of the calls send a hedge, as in Finagle's BackupRequestFilter and "The Tail at Scale"; and a
 * {@link HedgeBudget} holds hedges to `maxExtraLoad` of the calls. The tenth between the two is the budget's
 * margin: with the delay aimed at the budget's own share, demand equals deposits, any burst (the calls in flight
 * when the latencies shift) leaves it empty for its whole ttl, and chance then refuses the slow calls their hedge.
 *
 * The delay follows a shift of the latencies, up or down, within tens of calls: a change detector restarts the
 * window when the last calls disagree with the delay (see src/hedging/hedge-delay-tracker.ts for the estimate, its gap
 * rule for a fast path and a slow mode, and why not stochastic approximation). It is computed from what is known
 * exactly: the latency of a first attempt that answered, and "slower than its delay" for one a hedge superseded.
 * A method's delay starts at the configured `hedgingDelay` and moves once 1 / maxExtraLoad calls have answered.
 * Latencies are read in the clock's steps (`Clock.resolutionMs`: 1 ms for the system clock's `Date.now()`), and an
 * attempt one step above the fast path's top may have been a straggler (see the estimate).
 *
 * State is per method, for up to `maxMethods` of them (the least recently recorded are forgotten). A sliding
 * window of DDSketches (3 × 10 s by default, 1% relative accuracy) keeps the first-attempt latencies for reporting
 * ({@link latencies}); the delay does not depend on it. Nothing runs on a timer; time comes from the injected
 * clock, so the whole thing is deterministic under a fake one.
 *
 * Pass `adaptiveHedging: true`, an options object or an instance to `createRetryInterceptor`; build the instance
 * yourself to read {@link currentDelays} or hand it to the OpenTelemetry adapter.
 */
export class AdaptiveHedging implements HedgeDelaySource {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedAdaptiveHedgingOptions;
  /** The quantile the delay tracks: 1 − 0.9 × maxExtraLoad (0.955 by default). */
  readonly quantile: number;
  /** The hedge budget (a retry gate that only counts hedges), or undefined with `budget: false`. */
  readonly budget: HedgeBudget | undefined;
  private readonly clock: Clock;
  private readonly trackerConfig: HedgeDelayTrackerConfig;
  private readonly methods = new Map<string, MethodState>();
  /** Per method: whether its calls stall, and the hedges held meanwhile (with `holdInStalls`). */
  private readonly stalls = new Map<string, StallHold>();

  /**
   * @param options See {@link AdaptiveHedgingOptions}; `true` for the defaults.
   * @param where Where option errors point (internal: the interceptor names its own option).
   */
  constructor(options: AdaptiveHedgingOptions | true = {}, where = 'AdaptiveHedging: options') {
    this.options = resolveAdaptiveHedgingOptions(where, options);
    // Read from inside grpc-js callbacks (each answer's outcome, the hedge budget): guarded, so that a clock that
    // throws is reported once rather than thrown into grpc-js (src/util/guarded-clock.ts).
    this.clock =
      (options === true ? undefined : guardedClockOption(where, 'clock', options.clock)) ?? systemClock;
    const maxExtraLoad = this.options.maxExtraLoad;
    this.quantile = 1 - DELAY_SHARE_OF_LOAD * maxExtraLoad;
    this.trackerConfig = {
      exceedance: DELAY_SHARE_OF_LOAD * maxExtraLoad,
      recentCalls: this.options.recentCalls,
      shiftCalls: shiftCalls(maxExtraLoad),
      shiftRun: shiftRun(maxExtraLoad),
      shiftRatio: SHIFT_DOWN_RATIO,
      gapRatio: GAP_RATIO,
      minCalls: Math.ceil(1 / maxExtraLoad),
      resolutionMs: this.clock.resolutionMs ?? 0,
      minMs: this.options.minDelayMs,
      maxMs: this.options.maxDelayMs,
    };
    this.budget = this.options.budget
      ? new HedgeBudget({
          maxExtraLoad: this.options.maxExtraLoad,
          clock: this.clock,
          ...this.options.budget,
        })
      : undefined;
  }

  /**
   * The delay before the next hedge of a call to `method`: the method's adaptive delay once a call to it has been
   * recorded, otherwise `configuredDelayMs` (the policy's hedgingDelay).
   * @throws TypeError/RangeError when `configuredDelayMs` is not a finite number of ms, 0 or more.
   */
  delayFor(method: string, configuredDelayMs: number): HedgingDelayChoice {
    checkNumberArgument('AdaptiveHedging.delayFor', 'configuredDelayMs', configuredDelayMs, DELAY_MS_RULE);
    const state = this.methods.get(method);
    if (state !== undefined) {
      return { delayMs: state.tracker.delayMs, adaptive: true };
    }
    return { delayMs: configuredDelayMs, adaptive: false };
  }

  /**
   * Record how a call's first attempt fared, when the call commits: it was sent with hedging delay `delayUsedMs`
   * and got its first response after `latencyMs`; or, with `superseded`, it was still running after `latencyMs`
   * when a hedge won (its latency is at least that). Only the first attempt counts: it is the one whose
   * outliving the delay sends a hedge. Do not record a first attempt that failed: a fast failure would pull the
   * delay down. Non-finite or negative values are ignored, and so is a superseded attempt that had not outlived
   * its delay (it tells nothing). Whatever it records, the call answered: hedges of the method held behind a stall
   * are released ({@link answered}).
   * @throws TypeError when `method` is not a string (it keys the method's delay).
   */
  recordOutcome(method: string, delayUsedMs: number, latencyMs: number, superseded = false): void {
    checkMethodArgument('AdaptiveHedging.recordOutcome', method);
    this.answered(method);
    if (
      !(latencyMs >= 0) ||
      !Number.isFinite(latencyMs) ||
      !(delayUsedMs >= 0) ||
      !Number.isFinite(delayUsedMs)
    ) {
      return;
    }
    const now = this.clock.now();
    let state = this.methods.get(method);
    if (state === undefined) {
      if (this.methods.size >= this.options.maxMethods) {
        this.forgetLeastRecent();
      }
      state = {
        tracker: new HedgeDelayTracker(delayUsedMs, this.trackerConfig),
        window: new LatencyWindow(this.options.windowMs, this.options.windowBins),
        recordedAt: now,
      };
      this.methods.set(method, state);
    }
    state.recordedAt = now;
    state.tracker.record(delayUsedMs, latencyMs, superseded, now);
    state.window.record(latencyMs, now);
  }

  /**
   * `maxMethods` is reached: forgets the tenth of the methods recorded least recently (at least one), with their
   * stall holds unless hedges are held there. In a batch, so that a client past the limit sorts once per tenth.
   */
  private forgetLeastRecent(): void {
    const methods = this.methods;
    const count = Math.max(1, Math.ceil(this.options.maxMethods / 10));
    const oldest = [...methods].sort((a, b) => a[1].recordedAt - b[1].recordedAt).slice(0, count);
    for (const [method] of oldest) {
      methods.delete(method);
      if (this.stalls.get(method)?.heldCount === 0) {
        this.stalls.delete(method);
      }
    }
  }

  /**
   * A call to `method` answered (its commit, or a status its server sent with no response before it, fatal or
   * not), whether or not it has an outcome to record: hedges held behind a stall of the method's calls are
   * released. {@link recordOutcome} does this itself. For the engine. @internal
   */
  answered(method: string): void {
    this.stalls.get(method)?.answered();
  }

  /**
   * A hedge of a call to `method` came due (ask once per hedge). True when it should wait for the method's next
   * answer ({@link whenAnswered}): a second hedge came due with no call of the method having answered since the
   * first, so its calls stall, and a hedge would wait behind the same pause (see `holdInStalls`). Always false
   * with `holdInStalls: false`. For the engine. @internal
   */
  holdHedge(method: string): boolean {
    if (!this.options.holdInStalls) {
      return false;
    }
    return this.stallOf(method).hedgeDue();
  }

  /**
   * Calls `release` once at the next answer of a call to `method`; returns a function that forgets it.
   * For the engine. @internal
   */
  whenAnswered(method: string, release: () => void): () => void {
    checkFunctionArgument('AdaptiveHedging.whenAnswered', 'release', release);
    return this.stallOf(method).untilAnswer(release);
  }

  private stallOf(method: string): StallHold {
    let stall = this.stalls.get(method);
    if (stall === undefined) {
      if (this.stalls.size >= this.options.maxMethods) {
        this.forgetIdleStalls();
      }
      stall = new StallHold();
      this.stalls.set(method, stall);
    }
    return stall;
  }

  /**
   * As many stall holds as `maxMethods`: those of methods whose delay is not kept, with no hedge held, are
   * forgotten (a method whose hedges come due and whose calls never commit has a hold and no delay).
   */
  private forgetIdleStalls(): void {
    for (const [method, stall] of this.stalls) {
      if (stall.heldCount === 0 && !this.methods.has(method)) {
        this.stalls.delete(method);
      }
    }
  }

  /** Hedges of `method` held now, waiting for its next answer. */
  heldHedges(method: string): number {
    return this.stalls.get(method)?.heldCount ?? 0;
  }

  /** The adaptive delay of `method` in ms, or undefined while no call to it has been recorded. */
  delayOf(method: string): number | undefined {
    return this.methods.get(method)?.tracker.delayMs;
  }

  /** The adaptive delay of every method that has one (of those kept: see `maxMethods`), ms, by method path. */
  currentDelays(): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const [method, state] of this.methods) {
      out.set(method, state.tracker.delayMs);
    }
    return out;
  }

  /**
   * Quantiles of `method`'s first-attempt latencies over the reporting window (`windowMs`), for dashboards and
   * benchmarks; undefined when the window holds none.
   */
  latencies(method: string): FirstAttemptLatencies | undefined {
    const state = this.methods.get(method);
    if (state === undefined) {
      return undefined;
    }
    const snapshot = state.window.snapshot(this.clock.now());
    if (snapshot.count === 0) {
      return undefined;
    }
    return {
      count: snapshot.count,
      p50: snapshot.quantile(0.5),
      p95: snapshot.quantile(0.95),
      p99: snapshot.quantile(0.99),
    };
  }
}

/** A delay given to {@link AdaptiveHedging.delayFor}: finite ms, 0 or more. */
const DELAY_MS_RULE = { min: 0, unit: 'ms' } as const;

/** A method path argument: the key of the method's state, so a string. */
function checkMethodArgument(fn: string, method: unknown): void {
  if (typeof method !== 'string') {
    throw new TypeError(
      `${fn}: method must be a method path such as "/pkg.Service/Method", got ${describeValue(method)}`,
    );
  }
}

/** The share of maxExtraLoad the delay aims at; the rest is the hedge budget's margin (see the class comment). */
const DELAY_SHARE_OF_LOAD = 0.9;
/**
 * The number of last calls the shift detector looks at: 2.5 / maxExtraLoad (50 at 0.05), at least 20: enough that
 * the 2.5 calls expected above the delay are told apart from the 10 or more that a shift up puts there.
 */
function shiftCalls(maxExtraLoad: number): number {
  return Math.max(20, Math.ceil(2.5 / maxExtraLoad));
}
/**
 * Calls in a row whose first attempt outlived the delay that mark a shift up: the fewest that happen by chance
 * less than once in a million calls at the target share (5 at 0.05, 3 at 0.01, 9 at 0.2).
 */
function shiftRun(maxExtraLoad: number): number {
  return Math.max(2, Math.ceil(Math.log(1e-6) / Math.log(maxExtraLoad)));
}
/**
 * A shift down is when the last calls put no more than their expected share above delay / 4. A heavy continuous
 * tail (log-normal, σ = 1) puts 40% of the calls there, so this does not fire without a shift; a halving of the
 * latencies is left to the window's turnover.
 */
const SHIFT_DOWN_RATIO = 4;
/**
 * A gap is a factor of 2 between two recent latencies. On a continuous tail, even a log-normal one with σ = 1.5
 * (p99 / p50 = 33), the calls between q / 2 and q outnumber the gap rule's tolerance many times over.
 */
const GAP_RATIO = 2;

/** Whether `value` has the shape of an {@link AdaptiveHedging} (whichever module build made it). @internal */
export function isAdaptiveHedging(value: unknown): value is AdaptiveHedging {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v.delayFor === 'function' &&
    typeof v.recordOutcome === 'function' &&
    typeof v.currentDelays === 'function'
  );
}

/**
 * The interceptor option `adaptiveHedging`: `undefined`/`false` (off), `true` (defaults), an options object, or an
 * {@link AdaptiveHedging} you built (to share it or read its delays). Throws a TypeError/RangeError naming the
 * option when it is invalid.
 * @internal
 */
export function resolveAdaptiveHedging(
  option: boolean | AdaptiveHedgingOptions | AdaptiveHedging | undefined,
  where = 'createRetryInterceptor: options.adaptiveHedging',
): AdaptiveHedging | undefined {
  if (option === undefined || option === false) {
    return undefined;
  }
  if (isAdaptiveHedging(option)) {
    return option;
  }
  if (option !== true && (typeof option !== 'object' || option === null || Array.isArray(option))) {
    throw new TypeError(
      `${where} must be true, false, an options object or an AdaptiveHedging, got ${describeValue(option)}`,
    );
  }
  return new AdaptiveHedging(option, where);
}
