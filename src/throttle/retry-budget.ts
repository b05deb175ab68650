import type { Clock } from '../shared/clock.js';
import type { GatedAttemptKind, RetryGate } from '../shared/retry-gate.js';
import { guardedNowSourceOption } from '../util/guarded-clock.js';
import { guardedRandom } from '../util/guarded-random.js';
import { checkFunction, checkNumber, checkOptions, type Renames } from '../util/option-checks.js';
import { SlidingWindow } from './sliding-window.js';

/** Options of {@link RetryBudget}. */
export interface RetryBudgetOptions {
  /**
   * Retries (and further hedges) allowed per call made, over the window: 0.2 means at most 20% more load.
   * In [0, 1000]. Default 0.2 (Finagle `percentCanRetry`, Linkerd `retryRatio`). The same name and meaning as the
   * hedge budget's `maxExtraLoad`.
   */
  maxExtraLoad?: number | undefined;
  /**
   * A floor: retries allowed per second whatever the traffic. At least 0. Default 0. It is absolute and per
   * budget, so a fleet of N clients with a budget each may send N × minPerSecond retries per second however few
   * calls it makes: Finagle's and Linkerd's default of 10 let 10,000 light clients retry 100,000 times a second
   * against 8,000 calls (a metastable failure in the fleet simulation). Without it a client that makes few calls
   * can still retry: a budget holding a fraction of a retry lets one through with that probability.
   */
  minPerSecond?: number | undefined;
  /** How long a deposit (a call) or a withdrawal (a retry) counts, in ms: 1,000 to 60,000. Default 10,000. */
  ttlMs?: number | undefined;
  /**
   * Room for chance, in standard deviations: the budget holds this many standard deviations of the retries its
   * deposits pay for (√(maxExtraLoad × calls in the window), as for a Poisson count) on top of them. Demand that averages
   * exactly `maxExtraLoad` of the calls, as hedges do when a slow mode holds that share, goes over the deposits by
   * chance half the time and would then be refused; 3 lets it through all but about once in a thousand windows.
   * The room shrinks as a share of the calls as traffic grows (3 / √(maxExtraLoad × calls)). In [0, 10]. Default 0.
   */
  chanceSd?: number | undefined;
  /**
   * Time source; only `now()` is used. Default: the system clock. Read when the budget is made (a clock that
   * cannot read is refused then); later, a `now()` that throws or reads no finite number gives its last good
   * reading, warned once (`GRPC_RETRY_HEDGING_HOOK_ERROR`).
   */
  clock?: Pick<Clock, 'now'> | undefined;
  /**
   * Uniform random numbers in [0, 1) for the fractional retries (default Math.random); inject one for tests. A
   * draw that throws or falls outside [0, 1) is taken from Math.random instead, reported once
   * (`GRPC_RETRY_HEDGING_HOOK_ERROR`).
   */
  random?: (() => number) | undefined;
}

/**
 * The `random` of a budget that lets only whole retries through (the hedge budget's): 1 never falls under the
 * fraction of a retry held. The one draw outside [0, 1) taken as it is. @internal
 */
export const WHOLE_RETRIES_ONLY = (): number => 1;

/** Where option errors point: `RetryBudget: options.maxExtraLoad must be ...`. */
const WHERE = 'RetryBudget: options';
const KNOWN_OPTIONS = ['maxExtraLoad', 'minPerSecond', 'ttlMs', 'chanceSd', 'clock', 'random'] as const;
const RENAMED: Renames = {
  ratio: { now: 'maxExtraLoad', hint: "the hedge budget's name for the same share" },
  minRetriesPerSecond: {
    now: 'minPerSecond',
    hint: 'its default is now 0; see docs/overload.md, "How the floor scales"',
  },
};
/**
 * A retry withdraws this many units; a call deposits maxExtraLoad × this many. Whole numbers keep sums exact (up to
 * 2^53 units: 9 million calls in a window at the largest maxExtraLoad, 1,000), and a millionth of a retry keeps a
 * share such as 0.0004 or 0.0015 (p99.96, p99.85 hedging) as it is: in thousandths they read 0 and 0.002.
 */
const UNITS_PER_RETRY = 1_000_000;
/** Finagle's TokenRetryBudget divides the ttl into 10 slices. */
const BINS = 10;
/** The window's two counters: what the calls deposited, and what the retries withdrew. */
const PAID = 0;
const SPENT = 1;

/**
 * A retry budget (Finagle's and Linkerd's, made safe for fleets): over any window of `ttlMs`, retries and further
 * hedges number about `maxExtraLoad` × the calls started in that window (plus `minPerSecond` × the window in seconds,
 * and with `chanceSd`, that many standard deviations of the retries the calls paid for).
 *
 * It is a token bucket whose tokens expire: every call deposits `maxExtraLoad` of a retry, every retry withdraws one, and
 * both are forgotten `ttlMs` later (in 10 steps). When the budget holds less than one whole retry but more than
 * none, a retry goes with probability equal to the fraction held (and withdraws a whole one, leaving the budget
 * below zero): so a client that makes few calls can still retry — 20% of its failed calls with the default ratio —
 * and retries stay at `maxExtraLoad` of the calls in expectation, whatever the client's rate and however many clients
 * there are. Unlike the A6 throttle it counts load, not failures, so it bounds the extra load retries can add
 * (1 + maxExtraLoad) whatever the servers answer.
 *
 * It is a {@link RetryGate}: pass it as the retry interceptor's `gate` option. The engine deposits with
 * `recordCall()` when a call under a policy starts and withdraws with `allowAttempt()` before each retry or
 * further hedge. Share one instance between clients to give them one budget.
 */
export class RetryBudget implements RetryGate {
  readonly name = 'retry-budget';
  /** Retries allowed per call made (the option `maxExtraLoad`). */
  readonly maxExtraLoad: number;
  readonly minPerSecond: number;
  readonly ttlMs: number;
  readonly chanceSd: number;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly random: () => number;
  private readonly deposit: number;
  private readonly reserve: number;
  private readonly window: SlidingWindow;
  private deniedCount = 0;

  constructor(options?: RetryBudgetOptions) {
    const opts = checkOptions(WHERE, options, KNOWN_OPTIONS, RENAMED) as RetryBudgetOptions;
    this.maxExtraLoad = checkNumber(WHERE, 'maxExtraLoad', opts.maxExtraLoad, 0.2, { min: 0, max: 1000 });
    this.minPerSecond = checkNumber(WHERE, 'minPerSecond', opts.minPerSecond, 0, { min: 0 });
    this.ttlMs = checkNumber(WHERE, 'ttlMs', opts.ttlMs, 10_000, { min: 1000, max: 60_000, unit: 'ms' });
    this.chanceSd = checkNumber(WHERE, 'chanceSd', opts.chanceSd, 0, { min: 0, max: 10 });
    // Read from inside grpc-js callbacks (a gate's methods, a hedge budget's): a clock that throws or reads no
    // finite number is reported once and its last good reading used (src/util/guarded-clock.ts).
    this.clock = guardedNowSourceOption(WHERE, 'clock', opts.clock) ?? { now: () => Date.now() };
    const random = checkFunction<() => number>(
      WHERE,
      'random',
      opts.random,
      'a function returning a number in [0, 1)',
    );
    // As the interceptor's: a draw outside [0, 1) (or a throw) is one of Math.random's, warned once, so that it
    // can neither let every fractional retry through nor refuse them all.
    this.random =
      random === undefined || random === WHOLE_RETRIES_ONLY
        ? (random ?? Math.random)
        : guardedRandom(random, WHERE);
    this.deposit = Math.round(this.maxExtraLoad * UNITS_PER_RETRY);
    this.reserve = Math.round(this.minPerSecond * (this.ttlMs / 1000) * UNITS_PER_RETRY);
    this.window = new SlidingWindow(this.ttlMs, BINS, 2);
  }

  /** Retries that may be sent now (possibly fractional). */
  get tokens(): number {
    return this.balance(this.clock.now()) / UNITS_PER_RETRY;
  }

  /** How many retries or hedges this budget refused since it was made. */
  get denied(): number {
    return this.deniedCount;
  }

  /** {@link RetryGate}: a call started; deposit `maxExtraLoad` of a retry. */
  recordCall(): void {
    if (this.deposit > 0) {
      this.window.add(this.clock.now(), PAID, this.deposit);
    }
  }

  /**
   * {@link RetryGate}: withdraw one retry if the budget holds one, or, holding a fraction f of one, with
   * probability f. Retries and hedges are charged alike.
   * @returns whether the attempt may be sent.
   */
  allowAttempt(_kind?: GatedAttemptKind): boolean {
    const now = this.clock.now();
    const balance = this.balance(now);
    if (balance < UNITS_PER_RETRY && !(balance > 0 && this.random() * UNITS_PER_RETRY < balance)) {
      this.deniedCount += 1;
      return false;
    }
    this.window.add(now, SPENT, UNITS_PER_RETRY);
    return true;
  }

  /**
   * Gives back the retry (or hedge) {@link allowAttempt} just allowed, which did not go after all (a gate asked
   * after the budget refused it): the budget is as if it had not been asked. @internal
   */
  giveBack(): void {
    this.window.add(this.clock.now(), SPENT, -UNITS_PER_RETRY);
  }

  /** {@link RetryGate}: failures do not change a budget (it counts load, not errors). */
  recordFailure(): void {}

  /** {@link RetryGate}: successes do not change a budget either. */
  recordSuccess(): void {}

  private balance(now: number): number {
    const paid = this.window.sum(now, PAID);
    const balance = this.reserve + paid - this.window.sum(now, SPENT);
    if (this.chanceSd === 0) {
      return balance;
    }
    return balance + Math.floor(this.chanceSd * Math.sqrt(paid / UNITS_PER_RETRY) * UNITS_PER_RETRY);
  }
}
