import { type ByTarget, PerTarget } from '../shared/per-target.js';
import { guardedClockOption } from '../util/guarded-clock.js';
import { AdaptiveHedging, resolveAdaptiveHedging } from './adaptive-hedging-delay.js';
import type { AdaptiveHedgingOptions } from './adaptive-hedging-options.js';

/** How many targets an interceptor's own adaptive hedging learns delays for; past it, the least recently used go. */
export const MAX_ADAPTIVE_TARGETS = 100;

/** The interceptor option `adaptiveHedging`, resolved: one instance for every call, or the interceptor's own per target. */
export interface ResolvedAdaptiveHedging {
  /** An `AdaptiveHedging` you passed: one for every call, as given. */
  readonly shared: AdaptiveHedging | undefined;
  /** `true` or options: the interceptor's own, one per target. */
  readonly perTarget: ByTarget<AdaptiveHedging> | undefined;
}

/**
 * The interceptor option `adaptiveHedging` (see `resolveAdaptiveHedging`, whose errors it throws). An
 * `AdaptiveHedging` you built is used for every call, as given. With `true` or options, the interceptor makes its
 * own, one per target its calls go to: delays are learned per method, and clients of two servers that serve the
 * same methods with different latencies (two regions, a canary) would otherwise learn one delay from both, the
 * slower one's. Each target's has its own hedge budget too. Past {@link MAX_ADAPTIVE_TARGETS} targets, the one
 * used least recently is forgotten (its calls start again from the configured delay).
 * @internal
 */
export function resolveAdaptiveHedgingPerTarget(
  option: boolean | AdaptiveHedgingOptions | AdaptiveHedging | undefined,
  where: string,
  maxTargets = MAX_ADAPTIVE_TARGETS,
): ResolvedAdaptiveHedging {
  const made = resolveAdaptiveHedging(option, where);
  if (made === undefined || made === option) {
    return { shared: made, perTarget: undefined };
  }
  // `made` checked the options; it serves the first target. The others are made at their target's first call, with
  // the options `made` resolved and the clock guarded as `made`'s is (the same guard): the option's own clock would
  // be read raw there, and one that has broken since would throw at the call.
  const options = option as AdaptiveHedgingOptions | true;
  const resolved = made.options;
  const later: AdaptiveHedgingOptions = {
    ...resolved,
    budget: resolved.budget ?? false,
    clock: options === true ? undefined : guardedClockOption(where, 'clock', options.clock),
  };
  const make = () => new AdaptiveHedging(later, where);
  return { shared: undefined, perTarget: new PerTarget(make, maxTargets, { first: made }) };
}
