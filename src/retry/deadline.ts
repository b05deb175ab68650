import type { InterceptorOptions } from '@grpc/grpc-js';
import { type Clock, MAX_TIMER_MS, type TimerHandle } from '../shared/clock.js';

/**
 * The longest methodConfig `timeout` the interceptor applies, in ms (2,147,482,647: about 24.8 days); a longer one is
 * held at this. grpc-js sends a call's time left in its `grpc-timeout` header rounded up to whole seconds, and a
 * grpc-js server times the call with setTimeout, which fires at once for 2^31 ms or more: a timeout past this one
 * ended every call that took a server more than a moment with DEADLINE_EXCEEDED.
 * @internal
 */
export const LONGEST_CONFIG_TIMEOUT_MS = MAX_TIMER_MS - 1000;

/** A grpc-js call deadline (a Date, ms since the epoch, or none) in ms since the epoch; `Infinity` for none. @internal */
export function deadlineToMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === null) {
    return Number.POSITIVE_INFINITY;
  }
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * Runs `action` after `delayMs`, or `onDeadline` at the deadline when that comes first. A timer that fires late (the
 * event loop was held) runs `onDeadline` instead of `action` when the clock has reached the deadline meanwhile: no
 * attempt goes out after the call's deadline. @internal
 */
export function timerBeforeDeadline(
  clock: Clock,
  deadline: number,
  delayMs: number,
  action: () => void,
  onDeadline: () => void,
): TimerHandle {
  const remaining = deadline - clock.now();
  if (remaining <= delayMs) {
    return clock.setTimer(onDeadline, Math.max(0, remaining));
  }
  return clock.setTimer(() => (clock.now() >= deadline ? onDeadline() : action()), delayMs);
}
