import type { RetryThrottlingConfig } from '../config/types.js';
import { RetryThrottle } from './retry-throttle.js';

/** How many targets an interceptor keeps a throttle for before it forgets the ones that hold nothing. */
export const MAX_THROTTLED_TARGETS = 1000;

/**
 * A6's retry throttling is per server name: one token bucket for every call to a server, and none shared with calls
 * to another. This is the interceptor's own throttle (the service config's `retryThrottling`), one
 * {@link RetryThrottle} per target the calls go to (the channel's target, as grpc-js names it), so that one
 * interceptor shared by clients of two servers does not let an outage of one throttle the retries to the other.
 *
 * A throttle at full tokens is the same as a new one, so past {@link MAX_THROTTLED_TARGETS} targets those are
 * forgotten first; if none is full, the oldest goes (its target starts afresh, with all its tokens).
 * @internal
 */
export class ThrottlesPerTarget {
  private readonly throttles = new Map<string, RetryThrottle>();

  /** @throws as `new RetryThrottle(config)` does: a bad config fails where the interceptor is made, not at a call. */
  constructor(
    private readonly config: RetryThrottlingConfig,
    private readonly maxTargets = MAX_THROTTLED_TARGETS,
  ) {
    new RetryThrottle(config);
  }

  /** The throttle of `target`, made on first use. */
  for(target: string): RetryThrottle {
    let throttle = this.throttles.get(target);
    if (throttle === undefined) {
      if (this.throttles.size >= this.maxTargets) {
        this.forget();
      }
      throttle = new RetryThrottle(this.config);
      this.throttles.set(target, throttle);
    }
    return throttle;
  }

  /** Targets with a throttle now. */
  get size(): number {
    return this.throttles.size;
  }

  private forget(): void {
    for (const [target, throttle] of this.throttles) {
      if (throttle.tokens === throttle.maxTokens) {
        this.throttles.delete(target);
      }
    }
    if (this.throttles.size >= this.maxTargets) {
      const oldest = this.throttles.keys().next().value as string;
      this.throttles.delete(oldest);
    }
  }
}
