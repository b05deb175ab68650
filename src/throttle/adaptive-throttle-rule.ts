import {
  checkBooleanArgument,
  checkNumber,
  checkNumberArgument,
  checkOptions,
  describeValue,
  type NumberRule,
  type Renames,
} from '../util/option-checks.js';
import { SlidingWindow } from './sliding-window.js';

/**
 * The pure core of client-side adaptive throttling (Google SRE book, "Handling Overload"): the rejection
 * probability rule and the window it is computed over. It knows nothing of gRPC or of time sources; the
 * interceptor ({@link createAdaptiveThrottleInterceptor}) and the fleet simulation both drive it, with times in ms.
 */

/** Options of the adaptive throttling rule. */
export interface AdaptiveThrottleRuleOptions {
  /**
   * The multiplier K: the client sends up to K times as many requests as the backend accepts before it starts to
   * reject locally. Lower is more aggressive. At least 1. Default 2 (the SRE book and grpc-go).
   */
  k?: number | undefined;
  /**
   * How long requests and accepts are remembered, in ms: 1,000 to 600,000. Default 1,000. The SRE book uses two
   * minutes and grpc-go's RLS throttler 30 s; but after an outage the share of calls let through at most doubles
   * per window (local rejections count as requests), so recovery takes several windows: in the fleet simulation
   * (BENCHMARKS.md) goodput came back 17.5 s after a 20 s outage with 10 s, 54 s with 30 s, and had not 55 s
   * after it with 2 min; with 1 s, 1.5 s. The protection a long window gave comes from rejecting retries instead
   * (see `retries`): with 1 s and retries rejected, 0.46 attempts per call reached the servers during the outage
   * (0.88 with 10 s and the bare SRE rule).
   */
  windowMs?: number | undefined;
  /** Bins the window is divided into (how finely old counts expire): 1 to 1,000. Default 100 (grpc-go). */
  windowBins?: number | undefined;
  /**
   * Added to the denominator: P = (requests − K × accepts) / (requests + padding). Keeps a client that has seen
   * few requests from rejecting: with padding 8 (grpc-go), one failed request gives P = 1/9 rather than 1/2.
   * At least 1 (no division by zero). Default 8.
   */
  padding?: number | undefined;
  /**
   * Upper bound on the rejection probability of first attempts, in (0, 1]. Default 1 (the bare SRE rule). Because
   * local rejections count as requests, a client that rejected almost everything during an outage keeps rejecting
   * after it: the let-through share at most doubles per window. A cap of 0.5 keeps at least half going to the
   * backend, which bounds that to about one window, at the price of never shedding more than half the calls.
   */
  maxRejectionProbability?: number | undefined;
  /**
   * What happens to attempts after the first (retries and hedges: they carry `grpc-previous-rpc-attempts`) while
   * the rule rejects (its probability is above 0, i.e. the backend accepts less than 1/K of the requests).
   * `'reject-while-throttling'` (default): all are rejected, so no call makes more than one attempt into an
   * overloaded or failing backend, and attempts per call stay at or below 1 however short the window. First
   * attempts still go with probability 1 − P, which is how the throttle learns that the backend is back.
   * `'same-probability'`: the SRE rule as written, every attempt rejected with probability P.
   */
  retries?: AdaptiveThrottleRetries | undefined;
}

/** How the throttle treats attempts after the first (see {@link AdaptiveThrottleRuleOptions.retries}). */
export type AdaptiveThrottleRetries = 'reject-while-throttling' | 'same-probability';

const RETRIES_VALUES: readonly AdaptiveThrottleRetries[] = ['reject-while-throttling', 'same-probability'];

function retriesOption(where: string, value: unknown): AdaptiveThrottleRetries {
  if (value === undefined) {
    return DEFAULT_ADAPTIVE_THROTTLE_RULE.retries;
  }
  if (!RETRIES_VALUES.includes(value as AdaptiveThrottleRetries)) {
    throw new RangeError(
      `${where}.retries must be ${RETRIES_VALUES.map((v) => `'${v}'`).join(' or ')}, got ${describeValue(value)}`,
    );
  }
  return value as AdaptiveThrottleRetries;
}

/** Resolved options of the rule. */
export interface AdaptiveThrottleRuleConfig {
  readonly k: number;
  readonly windowMs: number;
  readonly windowBins: number;
  readonly padding: number;
  readonly maxRejectionProbability: number;
  readonly retries: AdaptiveThrottleRetries;
}

export const DEFAULT_ADAPTIVE_THROTTLE_RULE: AdaptiveThrottleRuleConfig = Object.freeze({
  k: 2,
  windowMs: 1_000,
  windowBins: 100,
  padding: 8,
  maxRejectionProbability: 1,
  retries: 'reject-while-throttling',
});

/** Options of the rule renamed before 1.0. @internal */
export const ADAPTIVE_THROTTLE_RENAMED_OPTIONS: Renames = { bins: { now: 'windowBins' } };

/** The option names of the rule, which the interceptor's options include. @internal */
export const ADAPTIVE_THROTTLE_RULE_OPTIONS = [
  'k',
  'windowMs',
  'windowBins',
  'padding',
  'maxRejectionProbability',
  'retries',
] as const;

/** The ranges of the rule's numbers, for its options and for {@link rejectionProbability}'s arguments. */
const K_RULE: NumberRule = { min: 1, max: 1000 };
const WINDOW_MS_RULE: NumberRule = { min: 1000, max: 600_000, unit: 'ms' };
const WINDOW_BINS_RULE: NumberRule = { min: 1, max: 1000, integer: true };
const PADDING_RULE: NumberRule = { min: 1, max: 1e9 };
const MAX_REJECTION_PROBABILITY_RULE: NumberRule = { min: 0, max: 1, minExclusive: true };
/** Counts over a window (requests, accepts). */
const COUNT_RULE: NumberRule = { min: 0 };

/** Validate rule options (`where` is the options' path in errors); unknown keys are left to the caller. */
export function resolveAdaptiveThrottleRule(
  where: string,
  options: AdaptiveThrottleRuleOptions | undefined,
): AdaptiveThrottleRuleConfig {
  const o = options ?? {};
  const d = DEFAULT_ADAPTIVE_THROTTLE_RULE;
  return {
    k: checkNumber(where, 'k', o.k, d.k, K_RULE),
    windowMs: checkNumber(where, 'windowMs', o.windowMs, d.windowMs, WINDOW_MS_RULE),
    windowBins: checkNumber(where, 'windowBins', o.windowBins, d.windowBins, WINDOW_BINS_RULE),
    padding: checkNumber(where, 'padding', o.padding, d.padding, PADDING_RULE),
    maxRejectionProbability: checkNumber(
      where,
      'maxRejectionProbability',
      o.maxRejectionProbability,
      d.maxRejectionProbability,
      MAX_REJECTION_PROBABILITY_RULE,
    ),
    retries: retriesOption(where, o.retries),
  };
}

/**
 * The SRE rule: the probability of rejecting a new request locally, max(0, (requests − k·accepts) /
 * (requests + padding)), for counts taken over the window before that request.
 *
 * @throws TypeError when an argument is not a number (NaN included); RangeError when it is out of range: counts
 *   must be finite and 0 or more, and `k`, `padding` and `maxRejectionProbability` have the ranges of the options `k`,
 *   `padding` and `maxRejectionProbability`.
 */
export function rejectionProbability(
  requests: number,
  accepts: number,
  k: number,
  padding: number,
  maxRejectionProbability = 1,
): number {
  return probabilityOf(
    checkArgument('requests', requests, COUNT_RULE),
    checkArgument('accepts', accepts, COUNT_RULE),
    checkArgument('k', k, K_RULE),
    checkArgument('padding', padding, PADDING_RULE),
    checkArgument('maxRejectionProbability', maxRejectionProbability, MAX_REJECTION_PROBABILITY_RULE),
  );
}

/** {@link rejectionProbability} for values known to be valid (a resolved rule and a window's counts). */
function probabilityOf(
  requests: number,
  accepts: number,
  k: number,
  padding: number,
  maxRejectionProbability: number,
): number {
  const p = (requests - k * accepts) / (requests + padding);
  return p > 0 ? Math.min(p, maxRejectionProbability) : 0;
}

/**
 * An argument of {@link rejectionProbability}, checked as {@link checkNumber} checks an option
 * (`rejectionProbability: k must be ...`); a left-out one is an error too (`got nothing`).
 */
function checkArgument(name: string, value: unknown, rule: NumberRule): number {
  return checkNumberArgument('rejectionProbability', name, value, rule);
}

/** A time given to an {@link AdaptiveThrottleState} method: any finite number of ms. */
const TIME_RULE: NumberRule = { unit: 'ms' };
/** The uniform draw given to {@link AdaptiveThrottleState.decide}. */
const RANDOM_RULE: NumberRule = { min: 0, max: 1, maxExclusive: true };

/** Where errors of the {@link AdaptiveThrottleState} constructor point. */
const STATE_WHERE = 'AdaptiveThrottleState: config';
const REQUESTS = 0;
const ACCEPTS = 1;

/**
 * The throttling state of one target: requests and accepts over a sliding window.
 *
 * - {@link decide} before each request: it rejects with the rule's probability, and a rejected request counts as
 *   a request (the SRE book: this keeps rejecting while the backend stays overloaded).
 * - {@link recordResponse} when a request that was let through gets an answer: a request, and an accept when the
 *   backend accepted it.
 */
export class AdaptiveThrottleState {
  /** The rule, its options resolved (left-out ones take their defaults). */
  readonly config: AdaptiveThrottleRuleConfig;
  private readonly window: SlidingWindow;

  /**
   * @param config The rule's options (see {@link AdaptiveThrottleRuleOptions}), checked as
   *   {@link createAdaptiveThrottleInterceptor} checks them; left out: the defaults.
   * @throws TypeError when `config` is not an object or has an unknown key, or an option has the wrong type;
   *   RangeError when a number is out of range.
   */
  constructor(config: AdaptiveThrottleRuleOptions = DEFAULT_ADAPTIVE_THROTTLE_RULE) {
    checkAdaptiveThrottleRuleOptions(STATE_WHERE, config);
    this.config = resolveAdaptiveThrottleRule(STATE_WHERE, config);
    this.window = new SlidingWindow(this.config.windowMs, this.config.windowBins, 2);
  }

  /**
   * Requests counted over the window ending at `nowMs` (let through and answered, or rejected locally).
   * @throws as {@link decide} does for `nowMs`: a time that is not a finite number would stop the window for good.
   */
  requests(nowMs: number): number {
    checkNumberArgument('AdaptiveThrottleState.requests', 'nowMs', nowMs, TIME_RULE);
    return this.window.sum(nowMs, REQUESTS);
  }

  /** Requests the backend accepted over the window ending at `nowMs`. @throws as {@link requests} does. */
  accepts(nowMs: number): number {
    checkNumberArgument('AdaptiveThrottleState.accepts', 'nowMs', nowMs, TIME_RULE);
    return this.window.sum(nowMs, ACCEPTS);
  }

  /** The probability that a request made at `nowMs` is rejected locally. @throws as {@link requests} does. */
  probability(nowMs: number): number {
    checkNumberArgument('AdaptiveThrottleState.probability', 'nowMs', nowMs, TIME_RULE);
    return this.probabilityAt(nowMs);
  }

  /** {@link probability} without checking `nowMs` (for {@link decideAt}). */
  private probabilityAt(nowMs: number): number {
    return probabilityOf(
      this.window.sum(nowMs, REQUESTS),
      this.window.sum(nowMs, ACCEPTS),
      this.config.k,
      this.config.padding,
      this.config.maxRejectionProbability,
    );
  }

  /**
   * Decide a request made at `nowMs`: `random` is uniform in [0, 1); `retry` when it is an attempt after the first.
   * Returns the probability it was rejected with when rejected (and counts it as a request), or -1 when it may go.
   * @throws TypeError when `nowMs` or `random` is not a number (NaN and a left-out `random` included) or `retry` is
   *   given and not a boolean; RangeError when `nowMs` is infinite or `random` is outside [0, 1) (a draw that could
   *   never fall under the probability would let every request go).
   */
  decide(nowMs: number, random: number, retry = false): number {
    checkNumberArgument('AdaptiveThrottleState.decide', 'nowMs', nowMs, TIME_RULE);
    checkNumberArgument('AdaptiveThrottleState.decide', 'random', random, RANDOM_RULE);
    checkBooleanArgument('AdaptiveThrottleState.decide', 'retry', retry);
    return this.decideAt(nowMs, random, retry);
  }

  /** {@link decide} without checking `nowMs` (the interceptor's clock, read inside grpc-js's calls). @internal */
  decideAt(nowMs: number, random: number, retry: boolean): number {
    const p = this.probabilityAt(nowMs);
    if (retry && p > 0 && this.config.retries === 'reject-while-throttling') {
      this.window.add(nowMs, REQUESTS, 1);
      return 1;
    }
    if (p > 0 && random < p) {
      this.window.add(nowMs, REQUESTS, 1);
      return p;
    }
    return -1;
  }

  /**
   * A request that was let through was answered at `nowMs`; `accepted` when the backend accepted it.
   * @throws TypeError when `nowMs` is not a number or `accepted` not a boolean; RangeError for an infinite `nowMs`.
   */
  recordResponse(nowMs: number, accepted: boolean): void {
    checkNumberArgument('AdaptiveThrottleState.recordResponse', 'nowMs', nowMs, TIME_RULE);
    checkBooleanArgument('AdaptiveThrottleState.recordResponse', 'accepted', accepted);
    this.recordResponseAt(nowMs, accepted);
  }

  /** {@link recordResponse} without checking its arguments (for the interceptor, as {@link decideAt}). @internal */
  recordResponseAt(nowMs: number, accepted: boolean): void {
    this.window.add(nowMs, REQUESTS, 1);
    if (accepted) {
      this.window.add(nowMs, ACCEPTS, 1);
    }
  }
}

/** Reject unknown keys of a rule options object (for callers that take only the rule). @internal */
export function checkAdaptiveThrottleRuleOptions(where: string, options: unknown): void {
  checkOptions(where, options, ADAPTIVE_THROTTLE_RULE_OPTIONS, ADAPTIVE_THROTTLE_RENAMED_OPTIONS);
}
