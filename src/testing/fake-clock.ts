import type { Clock, TimerHandle } from '../shared/clock.js';

interface FakeTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly callback: () => void;
}

/**
 * A {@link Clock} whose time moves only when told: pass it as the interceptor's `clock` option (together with a
 * scripted or real next call) to test retry timing without waiting. Timers fire in due order, ties in the order
 * they were set; a timer set while advancing fires in the same advance if it falls due.
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
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
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

  /** Milliseconds until the next timer is due, or undefined when none is set. */
  nextDueInMs(): number | undefined {
    const next = this.earliest();
    return next === undefined ? undefined : next.dueAt - this.time;
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    if (!(ms >= 0)) {
      throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    }
    const until = this.time + ms;
    for (let next = this.earliest(); next !== undefined && next.dueAt <= until; next = this.earliest()) {
      this.time = next.dueAt;
      this.timers = this.timers.filter((t) => t !== next);
      next.callback();
    }
    this.time = until;
  }

  /** Fire the next timer (moving time to it); false when none is set. */
  runNext(): boolean {
    const next = this.earliest();
    if (next === undefined) {
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
