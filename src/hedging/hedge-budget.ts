import type { Clock } from '../shared/clock.js';
import { systemClock } from '../shared/clock.js';
import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { RetryBudget, WHOLE_RETRIES_ONLY } from '../throttle/retry-budget.js';
import { guardedClockOption } from '../util/guarded-clock.js';
import { checkNumber, checkOptions } from '../util/option-checks.js';
import {
  DEFAULT_ADAPTIVE_HEDGING_MAX_EXTRA_LOAD,
  HEDGE_BUDGET_KEYS,
  type HedgeBudgetOptions,
  resolveHedgeBudgetOptions,
} from './adaptive-hedging-options.js';

/**
 * The hedge budget sends only whole hedges: a random number of 1 never falls under the fraction of a hedge held,
 * so it holds hedges to a hard cap (its floor absorbs chance; see DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND).
 */
const WHOLE_HEDGES_ONLY = WHOLE_RETRIES_ONLY;

/** Options of {@link HedgeBudget}. */
export interface HedgeBudgetConstructorOptions extends HedgeBudgetOptions {
  /** Hedges allowed as a share of calls, in [0, 1) (default 0.05). */
  maxExtraLoad?: number | undefined;
  /** Time source (default the system clock), guarded as `AdaptiveHedgingOptions.clock` is. */
  clock?: Clock | undefined;
}

/**
 * A hedge budget: hedges beyond a call's first attempt are held to `maxExtraLoad` × calls, plus a floor of
 * `minPerSecond` so that low traffic can still hedge, plus room for chance (`chanceSd` standard deviations of the
 * hedges paid for) so that demand averaging `maxExtraLoad` is not refused whenever chance puts it above. It is a
 * {@link RetryBudget} (Finagle's RetryBudget: every call deposits `maxExtraLoad` of a hedge, every hedge withdraws
 * one, both expire after `ttlMs`, and a reserve of `minPerSecond × ttl` hedges is always there) that counts hedges
 * only.
 *
 * As a {@link RetryGate}: `allowAttempt('retry')` is always true and failures and successes are ignored, so it
 * composes with the config's A6 throttle or another gate: the engine asks the budget first (so that a gate that
 * spends when it allows, a retry budget, is not charged for a hedge the budget refuses), then the gate, and gives
 * the budget's withdrawal back ({@link refund}) when the gate refuses. Share one budget per server (it is per
 * interceptor by default).
 */
export class HedgeBudget implements RetryGate {
  readonly name = 'hedge-budget';
  readonly maxExtraLoad: number;
  readonly minPerSecond: number;
  readonly ttlMs: number;
  readonly chanceSd: number;
  private readonly budget: RetryBudget;

  constructor(options: HedgeBudgetConstructorOptions = {}) {
    const where = 'HedgeBudget: options';
    const o = checkOptions(where, options, ['maxExtraLoad', 'clock', ...HEDGE_BUDGET_KEYS]);
    const maxExtraLoad = checkNumber(
      where,
      'maxExtraLoad',
      o.maxExtraLoad,
      DEFAULT_ADAPTIVE_HEDGING_MAX_EXTRA_LOAD,
      {
        min: 0,
        max: 1,
        maxExclusive: true,
      },
    );
    const { maxExtraLoad: _load, clock, ...budget } = o;
    const resolved = resolveHedgeBudgetOptions(where, budget);
    this.maxExtraLoad = maxExtraLoad;
    this.minPerSecond = resolved.minPerSecond;
    this.ttlMs = resolved.ttlMs;
    this.chanceSd = resolved.chanceSd;
    this.budget = new RetryBudget({
      maxExtraLoad,
      minPerSecond: resolved.minPerSecond,
      ttlMs: resolved.ttlMs,
      chanceSd: resolved.chanceSd,
      clock: guardedClockOption(where, 'clock', clock) ?? systemClock,
      random: WHOLE_HEDGES_ONLY,
    });
  }

  /** Hedges that could be sent now (whole ones). */
  get tokens(): number {
    return Math.max(0, Math.floor(this.budget.tokens));
  }

  /**
   * Refusals since the budget was made: a hedge the call asks for again one delay later counts each time it is
   * refused (the `throttled` event comes once per hedge), and those it let go with nothing in flight do not count
   * (see {@link spendIfHeld}).
   */
  get denied(): number {
    return this.budget.denied - this.letThrough;
  }

  /** Hedges that went though the budget held none: each replaced attempts that failed, with nothing in flight. */
  private letThrough = 0;

  /**
   * A hedge with nothing in flight goes in any case (it replaces attempts that failed): spend one on it if the
   * budget holds one, and do not count it as refused if not.
   * @internal
   */
  spendIfHeld(): void {
    if (!this.budget.allowAttempt('hedge')) {
      this.letThrough += 1;
    }
  }

  /**
   * The hedge {@link allowAttempt} just allowed did not go (the interceptor's gate, asked after the budget, refused
   * it): its withdrawal is given back, so that a budget is charged only for the hedges sent.
   * @internal
   */
  refund(): void {
    this.budget.giveBack();
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
