/**
 * The time source of the call engine, injected like `random` so that the whole engine can run under fake time.
 */

/** An opaque handle returned by {@link Clock.setTimer}. */
export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch (the same scale as `Date.now()` and grpc-js deadlines). */
  now(): number;
  /** Run `callback` once after `delayMs` (>= 0). */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  /** Cancel a timer that has not fired; a handle that fired or was cleared is ignored. */
  clearTimer(handle: TimerHandle): void;
  /**
   * The step of `now()`, ms: 1 for `Date.now()`. Undefined or 0: exact. Adaptive hedging reads each latency as
   * possibly up to a step longer than the clock says (see `AdaptiveHedging`).
   */
  readonly resolutionMs?: number | undefined;
}

/** Whether `value` has the shape of a {@link Clock}. @internal */
export function isClock(value: unknown): value is Clock {
  const clock = value as Partial<Clock> | null;
  return (
    typeof clock === 'object' &&
    clock !== null &&
    typeof clock.now === 'function' &&
    typeof clock.setTimer === 'function' &&
    typeof clock.clearTimer === 'function'
  );
}

/**
 * Node's setTimeout fires at once for delays of 2^31 ms (about 24.8 days) or more; longer timers are re-armed in
 * steps here. @internal
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The real clock: `Date.now()` and Node timers (long delays are split so they do not fire early). */
export const systemClock: Clock = {
  now: () => Date.now(),
  resolutionMs: 1,
  setTimer(callback, delayMs) {
    if (delayMs <= MAX_TIMER_MS) {
      return setTimeout(callback, Math.max(0, delayMs));
    }
    const box: { timer: NodeJS.Timeout | undefined } = { timer: undefined };
    const dueAt = Date.now() + delayMs;
    const arm = () => {
      const remaining = dueAt - Date.now();
      box.timer = setTimeout(
        remaining > MAX_TIMER_MS ? arm : callback,
        Math.max(0, Math.min(remaining, MAX_TIMER_MS)),
      );
    };
    arm();
    return box;
  },
  clearTimer(handle) {
    if (handle === undefined || handle === null) {
      return;
    }
    if (typeof handle === 'object' && 'timer' in (handle as object)) {
      clearTimeout((handle as { timer: NodeJS.Timeout | undefined }).timer);
      return;
    }
    clearTimeout(handle as NodeJS.Timeout);
  },
};
