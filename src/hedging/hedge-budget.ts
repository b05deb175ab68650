import type { Clock } from '../retry/clock.js';
import { systemClock } from '../retry/clock.js';
import type { GatedAttemptKind, RetryGate } from '../retry/retry-gate.js';
import {
  checkClock,
  DEFAULT_MAX_EXTRA_LOAD,
  type HedgeBudgetOptions,
  resolveHedgeBudgetOptions,
} from './adaptive-hedging-options.js';
import { WindowedSum } from './windowed-sum.js';

/** Options of {@link HedgeBudget}. */
export interface HedgeBudgetConstructorOptions extends HedgeBudgetOptions {
  /** Hedges allowed as a share of calls, in [0, 1) (default 0.05). */
  maxExtraLoad?: number;
  /** Time source (default the system clock). */
  clock?: Clock;
}

/** Fixed-point scale: one hedge costs this many units; a call deposits maxExtraLoad × this. */
const UNIT = 1_000_000;
/** Deposits and withdrawals expire in ten steps over the ttl. */
const SLOTS = 10;

/**
 * A hedge budget: hedges beyond a call's first attempt are held to `maxExtraLoad` × calls, plus a floor of
 * `minPerSecond` so that low traffic can still hedge. It is Finagle's RetryBudget applied to hedges: every call
 * deposits `maxExtraLoad` of a hedge, every hedge withdraws one, both expire after `ttlMs`, and a reserve of
 * `minPerSecond × ttl` hedges is always there (what is drawn from it expires too, so it refills at `minPerSecond`).
 *
 * It is a {@link RetryGate} that only counts hedges: `allowAttempt('retry')` is always true and failures and
 * successes are ignored, so it composes with the config's A6 throttle (ask the throttle first — it spends
 * nothing — then the budget, which withdraws when it answers true). Share one budget per server (it is per
 * interceptor by default).
 */
export class HedgeBudget implements RetryGate {
  readonly name = 'hedge-budget';
  readonly maxExtraLoad: number;
  readonly minPerSecond: number;
  readonly ttlMs: number;
  private readonly clock: Clock;
  private readonly deposit: number;
  private readonly reserve: number;
  private readonly balance: WindowedSum;

  constructor(options: HedgeBudgetConstructorOptions = {}) {
    const where = 'HedgeBudget: options';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where} must be an object`);
    const { maxExtraLoad = DEFAULT_MAX_EXTRA_LOAD, clock, ...budget } = options;
    if (typeof maxExtraLoad !== 'number' || !(maxExtraLoad >= 0 && maxExtraLoad < 1)) {
      throw new RangeError(`${where}.maxExtraLoad must be a number in [0, 1), got ${String(maxExtraLoad)}`);
    }
    const resolved = resolveHedgeBudgetOptions(where, budget);
    this.maxExtraLoad = maxExtraLoad;
    this.minPerSecond = resolved.minPerSecond;
    this.ttlMs = resolved.ttlMs;
    this.clock = checkClock(where, clock) ?? systemClock;
    this.deposit = Math.round(maxExtraLoad * UNIT);
    this.reserve = Math.round(this.minPerSecond * (this.ttlMs / 1000) * UNIT);
    this.balance = new WindowedSum(this.ttlMs, SLOTS);
  }

  /** Hedges that could be sent now (whole ones). */
  get tokens(): number {
    return Math.max(0, Math.floor((this.reserve + this.balance.sum(this.clock.now())) / UNIT));
  }

  /** A call started: deposit `maxExtraLoad` of a hedge. */
  recordCall(): void {
    if (this.deposit > 0) this.balance.add(this.deposit, this.clock.now());
  }

  /** A hedge is allowed (and one is withdrawn) while the budget holds a whole one; retries always pass. */
  allowAttempt(kind: GatedAttemptKind): boolean {
    if (kind !== 'hedge') return true;
    const now = this.clock.now();
    if (this.reserve + this.balance.sum(now) < UNIT) return false;
    this.balance.add(-UNIT, now);
    return true;
  }

  /** Ignored: the budget counts calls and hedges, not outcomes. */
  recordFailure(): void {}

  /** Ignored: the budget counts calls and hedges, not outcomes. */
  recordSuccess(): void {}
}
