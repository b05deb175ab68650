import type { CancelLimits } from '../shared/cancel-limiter.js';
import { describeValue } from '../util/option-checks.js';
import {
  type CancelRateLimiter,
  type CancelRateLimiterOptions,
  checkCancelRateLimiterOptions,
  isCancelRateLimiter,
} from './cancel-rate-limiter.js';
import { oneLimiterForAll, sharedPerConnectionLimits } from './connection-cancel-limiters.js';

/**
 * The interceptor option `cancelRateLimit`:
 * - `undefined`/`true`: a limiter with the defaults per connection, shared with every interceptor of the process
 *   whose limit has the same settings (see {@link sharedPerConnectionLimits});
 * - an options object: the same, with those settings;
 * - a {@link CancelRateLimiter} (any object with a `tryCancel` method and a `loserCapMs` > 0): that one limiter for
 *   every cancel, whatever the connection;
 * - `false`: no limit (every loser cancelled at once), returned as undefined.
 * @internal
 */
export function resolveCancelLimits(
  option: boolean | CancelRateLimiterOptions | CancelRateLimiter | undefined,
  where = 'createRetryInterceptor: options.cancelRateLimit',
): CancelLimits | undefined {
  if (option === false) {
    return undefined;
  }
  if (isCancelRateLimiter(option)) {
    // Taken by its shape (a CancelRateLimiter of another copy of the package is one too): the engine arms a timer
    // with its cap, which Node would read as 1 ms if it were not a number.
    const cap: unknown = option.loserCapMs;
    if (typeof cap !== 'number' || !(cap > 0 && Number.isFinite(cap))) {
      throw new TypeError(
        `${where}.loserCapMs must be a number > 0 (ms) on a limiter given as the option, got ${describeValue(cap)}`,
      );
    }
    return oneLimiterForAll(option);
  }
  if (
    option !== undefined &&
    option !== true &&
    (typeof option !== 'object' || option === null || Array.isArray(option))
  ) {
    throw new TypeError(
      `${where} must be true, false, an options object or a CancelRateLimiter, got ${describeValue(option)}`,
    );
  }
  return sharedPerConnectionLimits(
    checkCancelRateLimiterOptions(option === true ? undefined : option, where),
  );
}
