import type { Clock } from '../shared/clock.js';
import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { checkNowSource, checkOptionsObject, numberInRange, rejectUnknownOptions } from './options.js';
import { SlidingWindow } from './sliding-window.js';

/** Options of {@link RetryBudget}. */
export interface RetryBudgetOptions {
  /**
   * Retries (and further hedges) allowed per call made, over the window: 0.2 means at most 20% more load.
   * In [0, 1000]. Default 0.2 (Finagle `percentCanRetry`, Linkerd `retryRatio`).
   */
  ratio?: number;
  /**
   * Retries allowed per second whatever the traffic, so that a client making few calls can still retry.
   * At least 0. Default 10 (Finagle `minRetriesPerSec`, Linkerd `minRetriesPerSecond`). The reserve is per budget:
   * a fleet of N clients with a budget each may send N × this many retries per second (see the README).
   */
  minRetriesPerSecond?: number;
  /** How long a deposit (a call) or a withdrawal (a retry) counts, in ms: 1,000 to 60,000. Default 10,000. */
  ttlMs?: number;
  /** Time source; only `now()` is used. Default: the system clock. */
  clock?: Pick<Clock, 'now'>;
}

const WHERE = 'RetryBudget';
const KNOWN_OPTIONS = ['ratio', 'minRetriesPerSecond', 'ttlMs', 'clock'] as const;
/** A retry withdraws this many units; a call deposits ratio × this many. Whole numbers keep sums exact. */
const UNITS_PER_RETRY = 1000;
/** Finagle's TokenRetryBudget divides the ttl into 10 slices. */
const BINS = 10;
const DEPOSITS = 0;

/**
 * A retry budget with Finagle/Linkerd semantics: over any window of `ttlMs`, retries and further hedges may number
 * at most `ratio` × the calls started in that window, plus `minRetriesPerSecond` × the window in seconds.
 *
 * It is a token bucket whose tokens expire: every call deposits `ratio` of a retry, every retry withdraws one, and
 * both are forgotten `ttlMs` later (in 10 steps). A standing reserve of `minRetriesPerSecond × ttl` retries
 * lets a quiet client retry at that rate. Unlike the A6 throttle it counts load, not failures, so it bounds the
 * extra load retries can add (1 + ratio, plus the reserve) whatever the servers answer.
 *
 * It is a {@link RetryGate}: pass it as the retry interceptor's `throttle` option. The engine deposits with
 * `recordCall()` when a call under a policy starts and withdraws with `allowAttempt()` before each retry or
 * further hedge. Share one instance between clients to give them one budget.
 */
export class RetryBudget implements RetryGate {
  readonly name = 'retry-budget';
  readonly ratio: number;
  readonly minRetriesPerSecond: number;
  readonly ttlMs: number;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly deposit: number;
  private readonly reserve: number;
  private readonly window: SlidingWindow;
  private deniedCount = 0;

  constructor(options?: RetryBudgetOptions) {
    checkOptionsObject(WHERE, options);
    const opts = options ?? {};
    rejectUnknownOptions(WHERE, opts, KNOWN_OPTIONS);
    this.ratio = numberInRange(WHERE, 'ratio', opts.ratio, 0.2, 0, 1000);
    this.minRetriesPerSecond = numberInRange(
      WHERE,
      'minRetriesPerSecond',
      opts.minRetriesPerSecond,
      10,
      0,
      Number.MAX_SAFE_INTEGER,
    );
    this.ttlMs = numberInRange(WHERE, 'ttlMs', opts.ttlMs, 10_000, 1000, 60_000);
    this.clock = checkNowSource(WHERE, 'clock', opts.clock) ?? { now: () => Date.now() };
    this.deposit = Math.round(this.ratio * UNITS_PER_RETRY);
    this.reserve = Math.round(this.minRetriesPerSecond * (this.ttlMs / 1000) * UNITS_PER_RETRY);
    this.window = new SlidingWindow(this.ttlMs, BINS, 1);
  }

  /** Retries that may be sent now (possibly fractional). */
  get tokens(): number {
    return this.balance(this.clock.now()) / UNITS_PER_RETRY;
  }

  /** How many retries or hedges this budget refused since it was made. */
  get denied(): number {
    return this.deniedCount;
  }

  /** {@link RetryGate}: a call started; deposit `ratio` of a retry. */
  recordCall(): void {
    if (this.deposit > 0) {
      this.window.add(this.clock.now(), DEPOSITS, this.deposit);
    }
  }

  /**
   * {@link RetryGate}: withdraw one retry if the budget holds one. Retries and hedges are charged alike.
   * @returns whether the attempt may be sent.
   */
  allowAttempt(_kind?: GatedAttemptKind): boolean {
    const now = this.clock.now();
    if (this.balance(now) < UNITS_PER_RETRY) {
      this.deniedCount += 1;
      return false;
    }
    this.window.add(now, DEPOSITS, -UNITS_PER_RETRY);
    return true;
  }

  /** {@link RetryGate}: failures do not change a budget (it counts load, not errors). */
  recordFailure(): void {}

  /** {@link RetryGate}: successes do not change a budget either. */
  recordSuccess(): void {}

  private balance(now: number): number {
    return this.reserve + this.window.sum(now, DEPOSITS);
  }
}
