import type { Clock } from '../shared/clock.js';
import { systemClock } from '../shared/clock.js';
import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { RetryBudget } from '../throttle/retry-budget.js';
import {
  checkClock,
  DEFAULT_MAX_EXTRA_LOAD,
  type HedgeBudgetOptions,
  resolveHedgeBudgetOptions,
} from './adaptive-hedging-options.js';

/** Options of {@link HedgeBudget}. */
export interface HedgeBudgetConstructorOptions extends HedgeBudgetOptions {
  /** Hedges allowed as a share of calls, in [0, 1) (default 0.05). */
  maxExtraLoad?: number;
  /** Time source (default the system clock). */
  clock?: Clock;
}

/**
 * A hedge budget: hedges beyond a call's first attempt are held to `maxExtraLoad` × calls, plus a floor of
 * `minPerSecond` so that low traffic can still hedge. It is a {@link RetryBudget} (Finagle's RetryBudget: every
 * call deposits `maxExtraLoad` of a hedge, every hedge withdraws one, both expire after `ttlMs`, and a reserve of
 * `minPerSecond × ttl` hedges is always there) that counts hedges only.
 *
 * As a {@link RetryGate}: `allowAttempt('retry')` is always true and failures and successes are ignored, so it
 * composes with the config's A6 throttle (ask the throttle first — it spends nothing — then the budget, which
 * withdraws when it answers true). Share one budget per server (it is per interceptor by default).
 */
export class HedgeBudget implements RetryGate {
  readonly name = 'hedge-budget';
  readonly maxExtraLoad: number;
  readonly minPerSecond: number;
  readonly ttlMs: number;
  private readonly budget: RetryBudget;

  constructor(options: HedgeBudgetConstructorOptions = {}) {
    const where = 'HedgeBudget: options';
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`${where} must be an object`);
    }
    const { maxExtraLoad = DEFAULT_MAX_EXTRA_LOAD, clock, ...budget } = options;
    if (typeof maxExtraLoad !== 'number' || !(maxExtraLoad >= 0 && maxExtraLoad < 1)) {
      throw new RangeError(`${where}.maxExtraLoad must be a number in [0, 1), got ${String(maxExtraLoad)}`);
    }
    const resolved = resolveHedgeBudgetOptions(where, budget);
    this.maxExtraLoad = maxExtraLoad;
    this.minPerSecond = resolved.minPerSecond;
    this.ttlMs = resolved.ttlMs;
    this.budget = new RetryBudget({
      ratio: maxExtraLoad,
      minRetriesPerSecond: resolved.minPerSecond,
      ttlMs: resolved.ttlMs,
      clock: checkClock(where, clock) ?? systemClock,
    });
  }

  /** Hedges that could be sent now (whole ones). */
  get tokens(): number {
    return Math.max(0, Math.floor(this.budget.tokens));
  }

  /** Hedges refused since the budget was made. */
  get denied(): number {
    return this.budget.denied;
  }

  /** A call started: deposit `maxExtraLoad` of a hedge. */
  recordCall(): void {
    this.budget.recordCall();
  }

  /** A hedge is allowed (and one is withdrawn) while the budget holds a whole one; retries always pass. */
  allowAttempt(kind: GatedAttemptKind): boolean {
    return kind !== 'hedge' || this.budget.allowAttempt(kind);
  }

  /** Ignored: the budget counts calls and hedges, not outcomes. */
  recordFailure(): void {}

  /** Ignored: the budget counts calls and hedges, not outcomes. */
  recordSuccess(): void {}
}
