import { type Clock, systemClock } from '../shared/clock.js';
import type { HedgeDelaySource, HedgingDelayChoice } from '../shared/hedge-delay-source.js';
import {
  type AdaptiveHedgingOptions,
  checkClock,
  type ResolvedAdaptiveHedgingOptions,
  resolveAdaptiveHedgingOptions,
} from './adaptive-hedging-options.js';
import { HedgeBudget } from './hedge-budget.js';
import { LatencyWindow } from './latency-window.js';

export type { HedgingDelayChoice };

interface MethodState {
  readonly window: LatencyWindow;
  /** The method's adaptive delay; NaN while the window holds too few samples. */
  delayMs: number;
  /** When the delay is next recomputed (ms since the epoch). */
  recomputeAt: number;
}

/**
 * Adaptive hedging: the delay before each further hedge is the latency percentile 100 × (1 − maxExtraLoad) of
 * the method's recent attempts (p95 by default), as Finagle's BackupRequestFilter and "The Tail at Scale" do,
 * and a {@link HedgeBudget} holds hedges to `maxExtraLoad` of the calls.
 *
 * State is per method: a sliding window (3 × 10 s by default) of DDSketch quantile sketches (1% relative
 * accuracy), whose percentile is recomputed at most every `recomputeEveryMs` (3 s), when a delay is asked for.
 * Until the window holds `minSamples` latencies the configured `hedgingDelay` is used. Nothing runs on a timer;
 * time comes from the injected clock, so the whole thing is deterministic under a fake one.
 *
 * Pass `adaptiveHedging: true`, an options object or an instance to `createRetryInterceptor`; build the instance
 * yourself to read {@link currentDelays} or hand it to the OpenTelemetry adapter.
 */
export class AdaptiveHedging implements HedgeDelaySource {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedAdaptiveHedgingOptions;
  /** The quantile the delay is read at: 1 − maxExtraLoad. */
  readonly quantile: number;
  /** The hedge budget (a retry gate that only counts hedges), or undefined with `budget: false`. */
  readonly budget: HedgeBudget | undefined;
  private readonly clock: Clock;
  private readonly methods = new Map<string, MethodState>();

  constructor(options: AdaptiveHedgingOptions | true = {}) {
    const where = 'AdaptiveHedging: options';
    this.options = resolveAdaptiveHedgingOptions(where, options);
    this.clock = (options === true ? undefined : checkClock(where, options.clock)) ?? systemClock;
    this.quantile = 1 - this.options.maxExtraLoad;
    this.budget = this.options.budget
      ? new HedgeBudget({
          maxExtraLoad: this.options.maxExtraLoad,
          clock: this.clock,
          ...this.options.budget,
        })
      : undefined;
  }

  /**
   * The delay before the next hedge of a call to `method`: the method's adaptive delay once its window holds
   * enough samples, otherwise `configuredDelayMs` (the policy's hedgingDelay).
   */
  delayFor(method: string, configuredDelayMs: number): HedgingDelayChoice {
    const state = this.methods.get(method);
    if (state !== undefined) {
      const delayMs = this.refresh(state, this.clock.now());
      if (!Number.isNaN(delayMs)) {
        return { delayMs, adaptive: true };
      }
    }
    return { delayMs: configuredDelayMs, adaptive: false };
  }

  /**
   * Record the latency of one attempt of `method`, in ms. Record attempts that succeeded and attempts superseded
   * by a winner (with the time they had run when cancelled), not fast failures, which would pull the delay down.
   * Negative and non-finite values are ignored.
   */
  record(method: string, latencyMs: number): void {
    if (!(latencyMs >= 0) || latencyMs === Number.POSITIVE_INFINITY) {
      return;
    }
    const now = this.clock.now();
    let state = this.methods.get(method);
    if (state === undefined) {
      state = {
        window: new LatencyWindow(this.options.windowMs, this.options.windowSlices),
        delayMs: Number.NaN,
        recomputeAt: now + this.options.recomputeEveryMs,
      };
      this.methods.set(method, state);
    }
    state.window.record(latencyMs, now);
  }

  /** The adaptive delay of `method` in ms, or undefined while its window holds too few samples. */
  delayOf(method: string): number | undefined {
    const state = this.methods.get(method);
    if (state === undefined) {
      return undefined;
    }
    const delayMs = this.refresh(state, this.clock.now());
    return Number.isNaN(delayMs) ? undefined : delayMs;
  }

  /** The adaptive delay of every method that has one, ms, by method path. */
  currentDelays(): ReadonlyMap<string, number> {
    const now = this.clock.now();
    const out = new Map<string, number>();
    for (const [method, state] of this.methods) {
      const delayMs = this.refresh(state, now);
      if (!Number.isNaN(delayMs)) {
        out.set(method, delayMs);
      }
    }
    return out;
  }

  /** Recompute the method's delay when it is due; returns the delay in force (NaN: too few samples). */
  private refresh(state: MethodState, now: number): number {
    if (now < state.recomputeAt) {
      return state.delayMs;
    }
    state.recomputeAt = now + this.options.recomputeEveryMs;
    const snapshot = state.window.snapshot(now);
    state.delayMs =
      snapshot.count >= this.options.minSamples
        ? Math.max(this.options.minDelayMs, snapshot.quantile(this.quantile))
        : Number.NaN;
    return state.delayMs;
  }
}

/** Whether `value` has the shape of an {@link AdaptiveHedging} (whichever module build made it). @internal */
export function isAdaptiveHedging(value: unknown): value is AdaptiveHedging {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v.delayFor === 'function' &&
    typeof v.record === 'function' &&
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
    throw new TypeError(`${where} must be true, false, an options object or an AdaptiveHedging`);
  }
  try {
    return new AdaptiveHedging(option);
  } catch (error) {
    if (error instanceof Error) {
      error.message = error.message.replace('AdaptiveHedging: options', where);
    }
    throw error;
  }
}
