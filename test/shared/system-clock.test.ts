/**
 * The real clock the engine uses when none is injected: Node timers, with delays past Node's limit (2^31 − 1 ms,
 * about 24.8 days, beyond which `setTimeout` fires at once) re-armed in steps. Vitest's fake timers keep Node's
 * limit, so a timer that would fire early does so here too.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isClock, MAX_TIMER_MS, systemClock } from '../../src/shared/clock.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('systemClock', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads Date.now() and says its step is a millisecond', () => {
    vi.setSystemTime(1_234_567);
    expect(systemClock.now()).toBe(1_234_567);
    expect(systemClock.resolutionMs).toBe(1);
  });

  it('runs a timer once, after its delay', () => {
    const fired = vi.fn();
    systemClock.setTimer(fired, 50);
    vi.advanceTimersByTime(49);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('runs a timer with a negative delay at once, as one of 0', () => {
    const fired = vi.fn();
    systemClock.setTimer(fired, -5);
    vi.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("Node's limit itself is one timer", () => {
    const fired = vi.fn();
    systemClock.setTimer(fired, MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['just past the limit', 2 ** 31],
    ['30 days', 30 * DAY_MS],
    ['a year', 365 * DAY_MS],
  ])('a delay of %s fires when it is due, not at once and not at the limit', (_name, delayMs) => {
    const fired = vi.fn();
    systemClock.setTimer(fired, delayMs);
    vi.advanceTimersByTime(1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(delayMs - MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('a long delay keeps its due time when the re-armed steps run late', () => {
    const fired = vi.fn();
    const start = Date.now();
    systemClock.setTimer(fired, 40 * DAY_MS);
    // The wall clock moves 39 days on while the first step waits; at that step only a day is left, and past.
    vi.setSystemTime(start + 39 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(2);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('clears a timer before it fires, short or long, and before or after a long one is re-armed', () => {
    const short = vi.fn();
    systemClock.clearTimer(systemClock.setTimer(short, 10));
    const long = vi.fn();
    systemClock.clearTimer(systemClock.setTimer(long, 30 * DAY_MS));
    const rearmed = vi.fn();
    const handle = systemClock.setTimer(rearmed, 30 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 1);
    systemClock.clearTimer(handle);
    vi.advanceTimersByTime(30 * DAY_MS);
    expect(short).not.toHaveBeenCalled();
    expect(long).not.toHaveBeenCalled();
    expect(rearmed).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ignores a handle that is undefined or null, or that has fired', () => {
    const fired = vi.fn();
    const handle = systemClock.setTimer(fired, 1);
    vi.advanceTimersByTime(1);
    expect(() => {
      systemClock.clearTimer(undefined);
      systemClock.clearTimer(null);
      systemClock.clearTimer(handle);
    }).not.toThrow();
    expect(fired).toHaveBeenCalledTimes(1);
  });
});

describe('isClock', () => {
  const now = () => 0;
  const setTimer = () => undefined;
  const clearTimer = () => undefined;

  it('takes any object with now, setTimer and clearTimer methods', () => {
    expect(isClock(systemClock)).toBe(true);
    expect(isClock({ now, setTimer, clearTimer })).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 5],
    ['a function with the methods', Object.assign(() => 0, { now, setTimer, clearTimer })],
    ['no now', { setTimer, clearTimer }],
    ['no setTimer', { now, clearTimer }],
    ['no clearTimer', { now, setTimer }],
    ['now not a function', { now: 0, setTimer, clearTimer }],
    ['setTimer not a function', { now, setTimer: 'soon', clearTimer }],
    ['clearTimer not a function', { now, setTimer, clearTimer: null }],
  ])('refuses %s', (_name, value) => {
    expect(isClock(value)).toBe(false);
  });
});
