import type { Clock, TimerHandle } from '../shared/clock.js';
import { describeValue } from '../util/option-checks.js';

interface FakeTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly callback: () => void;
}

/**
 * A {@link Clock} whose time moves only when told: pass it as the interceptor's `clock` option (together with a
 * scripted or real next call) to test retry timing without waiting. Timers fire in due order, ties in the order
 * they were set; a timer set while advancing fires in the same advance if it falls due.
 *
 * Delays are read as the real clock (`systemClock`) reads them: a negative delay is 0, and a delay of
 * `Infinity` sets a timer that never fires (it counts in {@link FakeClock.pendingTimers} until cleared). Anything
 * else that is not a number, NaN included, is a TypeError from the call that was given it.
 */
export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  /**
   * @param startMs The initial time, in ms since the epoch (default: the real time now).
   * @param resolutionMs The step the times it gives are read in (see {@link Clock.resolutionMs}): 1 to stand for
   *   `Date.now()`; default exact.
   */
  constructor(
    startMs: number = Date.now(),
    readonly resolutionMs?: number,
  ) {
    if (typeof startMs !== 'number' || !Number.isFinite(startMs)) {
      const Problem = typeof startMs === 'number' && !Number.isNaN(startMs) ? RangeError : TypeError;
      throw new Problem(
        `FakeClock: startMs must be a finite number of ms since the epoch, got ${describeValue(startMs)}`,
      );
    }
    if (
      resolutionMs !== undefined &&
      !(typeof resolutionMs === 'number' && resolutionMs >= 0 && Number.isFinite(resolutionMs))
    ) {
      const Problem =
        typeof resolutionMs === 'number' && !Number.isNaN(resolutionMs) ? RangeError : TypeError;
      throw new Problem(
        `FakeClock: resolutionMs must be a finite number of ms, 0 or more (or left out for an exact clock), got ${describeValue(resolutionMs)}`,
      );
    }
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    if (typeof callback !== 'function') {
      throw new TypeError(`FakeClock.setTimer: callback must be a function, got ${describeValue(callback)}`);
    }
    if (typeof delayMs !== 'number' || Number.isNaN(delayMs)) {
      throw new TypeError(
        `FakeClock.setTimer: delayMs must be a number of ms (negative counts as 0, Infinity never fires), got ${describeValue(delayMs)}`,
      );
    }
    const timer: FakeTimer = { id: this.nextId++, dueAt: this.time + Math.max(0, delayMs), callback };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Milliseconds until the next timer is due (Infinity when those set never fire), or undefined when none is set. */
  nextDueInMs(): number | undefined {
    const next = this.earliest();
    return next === undefined ? undefined : next.dueAt - this.time;
  }

  /**
   * Move time forward by `ms` (a finite number >= 0), firing every timer that falls due, in order. A timer's callback
   * may advance the clock itself: time never moves back, so this advance then ends where that one left it when that
   * is later.
   */
  advance(ms: number): void {
    if (typeof ms !== 'number' || Number.isNaN(ms)) {
      throw new TypeError(`FakeClock.advance: ms must be a finite number >= 0, got ${describeValue(ms)}`);
    }
    if (!(Number.isFinite(ms) && ms >= 0)) {
      throw new RangeError(`FakeClock.advance: ms must be a finite number >= 0, got ${describeValue(ms)}`);
    }
    const until = this.time + ms;
    for (let next = this.earliest(); next !== undefined && next.dueAt <= until; next = this.earliest()) {
      this.time = next.dueAt;
      this.timers = this.timers.filter((t) => t !== next);
      next.callback();
    }
    this.time = Math.max(this.time, until);
  }

  /**
   * Moves time to the earliest timer's due time and fires every timer due then, those they set for that same time
   * included (as {@link advance} to it would); false when none is set, or only timers that never fire.
   */
  runNext(): boolean {
    const next = this.earliest();
    if (next === undefined || next.dueAt === Number.POSITIVE_INFINITY) {
      return false;
    }
    this.advance(next.dueAt - this.time);
    return true;
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.timers) {
      if (
        best === undefined ||
        timer.dueAt < best.dueAt ||
        (timer.dueAt === best.dueAt && timer.id < best.id)
      ) {
        best = timer;
      }
    }
    return best;
  }
}
