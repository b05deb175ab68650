import type { CancelLimiter } from '../shared/cancel-limiter.js';
import { type Clock, systemClock, type TimerHandle } from '../shared/clock.js';
import { guardedClockOption } from '../util/guarded-clock.js';
import { checkFunctionArgument, checkNumber, checkOptions } from '../util/option-checks.js';

/**
 * Default sustained rate of attempt cancellations, per second. Node.js's HTTP/2 server (nghttp2 1.61 in Node 20)
 * answers more than 33 RST_STREAMs a second, after a burst of 1,000, with GOAWAY; 25 leaves a quarter of the rate
 * for the cancellations this package does not limit (the application's own cancels, deadlines).
 */
export const DEFAULT_CANCEL_RATE_PER_SECOND = 25;
/**
 * The burst of RST_STREAMs Node.js's HTTP/2 server allows before its sustained rate applies (nghttp2 1.61 in
 * Node 20). @internal
 */
export const NODE_RAPID_RESET_BURST = 1_000;
/**
 * Default burst of cancellations: a quarter of the guard's 1,000, so that a burst of up to 750 application cancels
 * right after a burst of losers still fits (each of the application's cancels is a reset on the same connection).
 */
export const DEFAULT_CANCEL_BURST = 250;
/**
 * Default cap on how long a loser that could not be cancelled may run, for calls without a deadline: 30 s, after
 * which it is cancelled whatever the rate.
 */
export const DEFAULT_UNCANCELLED_LOSER_CAP_MS = 30_000;

/** Withdrawn requests the queue may hold beyond twice its live ones before they are swept out. */
const WITHDRAWN_SWEEP_SLACK = 64;

/** Options of {@link CancelRateLimiter}. */
export interface CancelRateLimiterOptions {
  /** Sustained cancellations per second (default 25; 0: none once the burst is spent, every later loser runs). */
  ratePerSecond?: number | undefined;
  /** Cancellations allowed at once after a quiet period (default 250). */
  burst?: number | undefined;
  /**
   * For calls without a deadline: a loser left running because the limiter refused to cancel it is cancelled
   * after this many ms anyway (default 30 000), so that nothing runs for ever.
   */
  loserCapMs?: number | undefined;
  /**
   * Time source (default the system clock). Read when the limiter is made (a clock that cannot read is refused
   * then); later, a `now()` or timer call that fails is warned of once and read safely (see docs/hedging.md).
   */
  clock?: Clock | undefined;
}

/** {@link CancelRateLimiterOptions} checked, with every default filled in. @internal */
export interface CancelRateLimiterSettings {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly loserCapMs: number;
  readonly clock: Clock;
}

/**
 * Checks a limiter's options (unknown keys and bad values named at `where`) and fills in the defaults.
 * @internal
 */
export function checkCancelRateLimiterOptions(
  options: CancelRateLimiterOptions | undefined,
  where: string,
): CancelRateLimiterSettings {
  const o = checkOptions(where, options, ['ratePerSecond', 'burst', 'loserCapMs', 'clock']);
  return {
    ratePerSecond: checkNumber(where, 'ratePerSecond', o.ratePerSecond, DEFAULT_CANCEL_RATE_PER_SECOND, {
      min: 0,
    }),
    burst: checkNumber(where, 'burst', o.burst, DEFAULT_CANCEL_BURST, { min: 1, integer: true }),
    loserCapMs: checkNumber(where, 'loserCapMs', o.loserCapMs, DEFAULT_UNCANCELLED_LOSER_CAP_MS, {
      min: 0,
      minExclusive: true,
      unit: 'ms',
    }),
    clock: guardedClockOption(where, 'clock', o.clock) ?? systemClock,
  };
}

/**
 * A token bucket over the cancellations of losing attempts (each one an HTTP/2 RST_STREAM), so that hedging at a
 * high rate does not trip the server's rapid-reset guard and get the connection torn down, failing every call on
 * it. When {@link tryCancel} says no, the engine lets the loser run to completion and discards its result; it
 * still ends at the call's deadline, or after {@link loserCapMs} when the call has none.
 *
 * The guard counts per connection. The interceptor's own limit (the default, or `cancelRateLimit` options) is one
 * such limiter per target, shared by every interceptor of the process with the same settings; a limiter you pass
 * as `cancelRateLimit` counts every cancel of the interceptors you give it to, whatever their target.
 */
export class CancelRateLimiter implements CancelLimiter {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly loserCapMs: number;
  private readonly clock: Clock;
  private available: number;
  /**
   * Cancellations asked for with {@link whenAllowed}, oldest first. A withdrawn one lets go of its cancel (which
   * holds the whole call) at once, and is skipped; they are swept out once they outnumber the live ones, as a loser
   * that runs on at the head keeps the queue from draining past it.
   */
  private waiting: { cancel: (() => void) | undefined; live: boolean }[] = [];
  private timer: TimerHandle | undefined;
  /** How many of {@link waiting} are not withdrawn. */
  private live = 0;
  /** How far below zero the application's and the deadline's cancels can take {@link available}. */
  private readonly floor: number;
  private refilledAt: number;

  /**
   * @param options See {@link CancelRateLimiterOptions}.
   * @param where Where option errors point (internal: the interceptor names its own option).
   */
  constructor(options: CancelRateLimiterOptions = {}, where = 'CancelRateLimiter: options') {
    const settings = checkCancelRateLimiterOptions(options, where);
    this.ratePerSecond = settings.ratePerSecond;
    this.burst = settings.burst;
    this.loserCapMs = settings.loserCapMs;
    this.clock = settings.clock;
    this.available = this.burst;
    this.floor = Math.min(0, this.burst - NODE_RAPID_RESET_BURST);
    this.refilledAt = this.clock.now();
  }

  /** Cancellations that could be made now. */
  get tokens(): number {
    this.refill();
    return this.available;
  }

  /**
   * A cancel the engine made whatever the limit (the application cancelled the call, its deadline passed, a loser
   * reached its cap): it is a reset on the same connection, so it spends from the limit too, down to the server's
   * own floor (the guard's 1,000 less this limiter's burst below zero). After a burst of such cancels, losers are
   * left running until the guard has had time to refill.
   */
  noteCancel(): void {
    this.refill();
    this.available = Math.max(this.floor, this.available - 1);
  }

  /**
   * Runs `cancel` as soon as the limit allows one more cancellation (spending it), in the order asked: a loser left
   * running is cancelled once the rate lets it, rather than only at its cap. Returns a function that withdraws the
   * request (the loser ended meanwhile).
   * @throws TypeError when `cancel` is not a function (it would otherwise fail later, in a timer).
   */
  whenAllowed(cancel: () => void): () => void {
    checkFunctionArgument('CancelRateLimiter.whenAllowed', 'cancel', cancel);
    const entry: { cancel: (() => void) | undefined; live: boolean } = { cancel, live: true };
    this.waiting.push(entry);
    this.live += 1;
    this.arm();
    return () => {
      if (!entry.live) {
        return;
      }
      entry.live = false;
      entry.cancel = undefined;
      this.live -= 1;
      if (this.live === 0) {
        // Nothing left to cancel: no timer may hold the process up.
        this.waiting.length = 0;
        if (this.timer !== undefined) {
          this.clock.clearTimer(this.timer);
          this.timer = undefined;
        }
      } else if (this.waiting.length > 2 * this.live + WITHDRAWN_SWEEP_SLACK) {
        this.waiting = this.waiting.filter((waiting) => waiting.live);
      }
    };
  }

  /** Cancellations waiting for the limit to allow them. */
  get queued(): number {
    return this.live;
  }

  /**
   * Cancels at once every loser waiting for the limit, whatever the rate, and returns how many. For a prompt
   * shutdown: a loser left running holds its stream, and so the process, until the rate reaches it, its server
   * answers, or its call's deadline or {@link loserCapMs} passes (after a burst of hanging losers, tens of seconds).
   * Call it before `client.close()`, once the calls you still wait for have ended: these resets are not limited,
   * and more of them than the server's guard allows (1,000 at once on a Node.js server) get the connection torn
   * down, failing whatever is still in flight on it. Each counts as a cancel (see {@link noteCancel}).
   */
  cancelWaiting(): number {
    const entries = this.waiting.splice(0);
    this.live = 0;
    if (this.timer !== undefined) {
      this.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
    // Every entry is done with before any cancel runs: one that ends a call may withdraw others re-entrantly.
    const cancels: (() => void)[] = [];
    for (const entry of entries) {
      if (entry.live && entry.cancel !== undefined) {
        cancels.push(entry.cancel);
      }
      entry.live = false;
      entry.cancel = undefined;
    }
    for (const cancel of cancels) {
      this.noteCancel();
      cancel();
    }
    return cancels.length;
  }

  private arm(): void {
    if (this.timer !== undefined || this.ratePerSecond <= 0) {
      return;
    }
    while (this.waiting.length > 0 && !this.waiting[0]?.live) {
      this.waiting.shift();
    }
    if (this.waiting.length === 0) {
      return;
    }
    this.refill();
    const missing = 1 - this.available;
    const delayMs = missing <= 0 ? 0 : Math.ceil((missing * 1000) / this.ratePerSecond);
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.drain();
    }, delayMs);
  }

  private drain(): void {
    this.refill();
    while (this.waiting.length > 0 && this.available >= 1) {
      const entry = this.waiting.shift();
      const cancel = entry?.cancel;
      if (entry?.live && cancel !== undefined) {
        entry.live = false;
        entry.cancel = undefined;
        this.live -= 1;
        this.available -= 1;
        cancel();
      }
    }
    this.arm();
  }

  /** May a losing attempt be cancelled now (none waits before it)? True spends one cancellation. */
  tryCancel(): boolean {
    this.refill();
    // Losers already waiting go first: a steady stream of new ones must not keep them waiting until their cap.
    if (this.available < 1 || this.live > 0) {
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
