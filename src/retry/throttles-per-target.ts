import type { RetryThrottlingConfig } from '../config/types.js';
import { PerTarget } from '../shared/per-target.js';
import { RetryThrottle } from './retry-throttle.js';

/** How many targets an interceptor keeps a throttle for before it forgets some. */
export const MAX_THROTTLED_TARGETS = 1000;

/**
 * A6's retry throttling is per server name: one token bucket for every call to a server, and none shared with calls
 * to another. This is the interceptor's own throttle (the service config's `retryThrottling`): a
 * {@link RetryThrottle} per target its calls go to, so that one interceptor shared by clients of two servers does
 * not let an outage of one throttle the retries to the other. A throttle at full tokens that no call holds is the
 * same as a new one, so past {@link MAX_THROTTLED_TARGETS} targets those are forgotten first, then the least
 * recently used. (One a call holds is not: the failures of its calls in flight would go to a bucket nobody keeps.)
 * @throws as `new RetryThrottle(config)` does, at once (see `PerTarget`): a bad config fails where the interceptor is
 *   made, not at a call.
 * @internal
 */
export function throttlesPerTarget(
  config: RetryThrottlingConfig,
  maxTargets = MAX_THROTTLED_TARGETS,
): PerTarget<RetryThrottle> {
  return new PerTarget(() => new RetryThrottle(config), maxTargets, {
    idle: (throttle) => throttle.tokens === throttle.maxTokens,
  });
}
