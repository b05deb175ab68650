import type { CancelLimiter } from '../shared/cancel-limiter.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { checkClock } from './adaptive-hedging-options.js';

/**
 * Default sustained rate of attempt cancellations, per second. Node.js's HTTP/2 server (nghttp2 1.61 in Node 20)
 * answers more than 33 RST_STREAMs a second, after a burst of 1,000, with GOAWAY; 25 leaves a quarter of the rate
 * for the cancellations this package does not limit (the application's own cancels, deadlines).
 */
export const DEFAULT_CANCEL_RATE_PER_SECOND = 25;
/** Default burst of cancellations: half the guard's 1,000, so that a burst of application cancels still fits. */
export const DEFAULT_CANCEL_BURST = 500;
/**
 * Default cap on how long a loser that could not be cancelled may run, for calls without a deadline: 30 s, after
 * which it is cancelled whatever the rate.
 */
export const DEFAULT_UNCANCELLED_LOSER_CAP_MS = 30_000;

/** Options of {@link CancelRateLimiter}. */
export interface CancelRateLimiterOptions {
  /** Sustained cancellations per second (default 25). */
  ratePerSecond?: number;
  /** Cancellations allowed at once after a quiet period (default 500). */
  burst?: number;
  /**
   * For calls without a deadline: a loser left running because the limiter refused to cancel it is cancelled
   * after this many ms anyway (default 30 000), so that nothing runs for ever.
   */
  loserCapMs?: number;
  /** Time source (default the system clock). */
  clock?: Clock;
}

/**
 * A token bucket over the cancellations of losing attempts (each one an HTTP/2 RST_STREAM), so that hedging at a
 * high rate does not trip the server's rapid-reset guard and get the connection torn down, failing every call on
 * it. When {@link tryCancel} says no, the engine lets the loser run to completion and discards its result; it
 * still ends at the call's deadline, or after {@link loserCapMs} when the call has none.
 *
 * The guard counts per connection; one limiter serves one interceptor (one channel in practice). Share one
 * between interceptors whose clients share a connection.
 */
export class CancelRateLimiter implements CancelLimiter {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly loserCapMs: number;
  private readonly clock: Clock;
  private available: number;
  private refilledAt: number;

  constructor(options: CancelRateLimiterOptions = {}) {
    const where = 'CancelRateLimiter: options';
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`${where} must be an object`);
    }
    for (const key of Object.keys(options)) {
      if (!['ratePerSecond', 'burst', 'loserCapMs', 'clock'].includes(key)) {
        throw new TypeError(`${where}.${key} is not a known option`);
      }
    }
    const {
      ratePerSecond = DEFAULT_CANCEL_RATE_PER_SECOND,
      burst = DEFAULT_CANCEL_BURST,
      loserCapMs = DEFAULT_UNCANCELLED_LOSER_CAP_MS,
    } = options;
    if (typeof ratePerSecond !== 'number' || !Number.isFinite(ratePerSecond) || ratePerSecond < 0) {
      throw new RangeError(`${where}.ratePerSecond must be a number >= 0, got ${String(ratePerSecond)}`);
    }
    if (!Number.isInteger(burst) || burst < 1) {
      throw new RangeError(`${where}.burst must be an integer >= 1, got ${String(burst)}`);
    }
    if (typeof loserCapMs !== 'number' || !Number.isFinite(loserCapMs) || loserCapMs <= 0) {
      throw new RangeError(
        `${where}.loserCapMs must be a number of ms greater than 0, got ${String(loserCapMs)}`,
      );
    }
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.loserCapMs = loserCapMs;
    this.clock = checkClock(where, options.clock) ?? systemClock;
    this.available = burst;
    this.refilledAt = this.clock.now();
  }

  /** Cancellations that could be made now. */
  get tokens(): number {
    this.refill();
    return this.available;
  }

  /** May a losing attempt be cancelled now? True spends one cancellation. */
  tryCancel(): boolean {
    this.refill();
    if (this.available < 1) {
      return false;
    }
    this.available -= 1;
    return true;
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = now - this.refilledAt;
    if (elapsed <= 0) {
      if (elapsed < 0) {
        this.refilledAt = now; // the clock went back: start counting again from here
      }
      return;
    }
    this.refilledAt = now;
    this.available = Math.min(this.burst, this.available + (elapsed * this.ratePerSecond) / 1000);
  }
}

/** Whether `value` has the shape of a {@link CancelRateLimiter}. @internal */
export function isCancelRateLimiter(value: unknown): value is CancelRateLimiter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>).tryCancel === 'function'
  );
}

/**
 * The interceptor option `cancelRateLimit`: `undefined`/`true` (a limiter with the defaults), `false` (cancel
 * every loser at once, as before), an options object, or a {@link CancelRateLimiter} to share.
 * @internal
 */
export function resolveCancelRateLimiter(
  option: boolean | CancelRateLimiterOptions | CancelRateLimiter | undefined,
  where = 'createRetryInterceptor: options.cancelRateLimit',
): CancelRateLimiter | undefined {
  if (option === false) {
    return undefined;
  }
  if (option === undefined || option === true) {
    return new CancelRateLimiter();
  }
  if (isCancelRateLimiter(option)) {
    return option;
  }
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new TypeError(`${where} must be true, false, an options object or a CancelRateLimiter`);
  }
  try {
    return new CancelRateLimiter(option);
  } catch (error) {
    if (error instanceof Error) {
      error.message = error.message.replace('CancelRateLimiter: options', where);
    }
    throw error;
  }
}
