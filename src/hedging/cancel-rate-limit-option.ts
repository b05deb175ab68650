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
 * - a {@link CancelRateLimiter}: that one limiter for every cancel, whatever the connection;
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
