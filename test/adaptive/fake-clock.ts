import type { Clock, TimerHandle } from '../../src/shared/clock.js';

/** A manual clock for unit tests: time moves only through {@link advance}, which fires due timers in order. */
export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Move time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let dueId = -1;
      let dueAt = Number.POSITIVE_INFINITY;
      for (const [id, timer] of this.timers) {
        if (timer.at <= end && timer.at < dueAt) {
          dueAt = timer.at;
          dueId = id;
        }
      }
      if (dueId < 0) break;
      const timer = this.timers.get(dueId) as { at: number; callback: () => void };
      this.timers.delete(dueId);
      this.time = Math.max(this.time, timer.at);
      timer.callback();
    }
    this.time = end;
  }

  /** Move time to an absolute value (backwards too, to test clocks that jump). */
  set(time: number): void {
    this.time = time;
  }
}
