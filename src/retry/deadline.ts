import type { InterceptorOptions } from '@grpc/grpc-js';
import type { Clock, TimerHandle } from '../shared/clock.js';

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
 * attempt goes out after the call's deadline. `now` is the call's time (see `RetryingCall.now`), timers are
 * `clock`'s. @internal
 */
export function timerBeforeDeadline(
  clock: Clock,
  now: () => number,
  deadline: number,
  delayMs: number,
  action: () => void,
  onDeadline: () => void,
): TimerHandle {
  const remaining = deadline - now();
  if (remaining <= delayMs) {
    return clock.setTimer(onDeadline, Math.max(0, remaining));
  }
  return clock.setTimer(() => (now() >= deadline ? onDeadline() : action()), delayMs);
}
