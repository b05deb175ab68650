/**
 * `guardedClock` on its own: one guarded form per clock, every method passed through while the clock behaves, and
 * each misbehaviour reported once in its own words. (test/engine/guarded-clock.engine.test.ts runs calls on it.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { guardedClock } from '../../src/util/guarded-clock.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const PATH = 'createRetryInterceptor: options';

/** A FakeClock's methods, some replaced, each call recorded. */
function recordingClock(overrides: Partial<Clock> = {}) {
  const fake = new FakeClock(1_000);
  const calls: string[] = [];
  const clock: Clock = {
    now: () => {
      calls.push('now');
      return fake.now();
    },
    setTimer: (callback, delayMs) => {
      calls.push(`setTimer ${delayMs}`);
      return fake.setTimer(callback, delayMs);
    },
    clearTimer: (handle) => {
      calls.push('clearTimer');
      fake.clearTimer(handle);
    },
    ...overrides,
  };
  return { fake, clock, calls };
}

describe('guardedClock', () => {
  it('is one object per clock, whatever the path or reading it is asked for with', () => {
    const { clock } = recordingClock();
    const guarded = guardedClock(clock, 1_000, PATH);
    expect(guardedClock(clock, 5, 'another: options')).toBe(guarded);
    expect(guardedClock(recordingClock().clock, 1_000, PATH)).not.toBe(guarded);
  });

  it('passes now, setTimer, clearTimer and the resolution through to a clock that behaves', () => {
    const { fake, clock, calls } = recordingClock({ resolutionMs: 4 } as Partial<Clock>);
    const guarded = guardedClock(clock, 1_000, PATH);
    expect(guarded.resolutionMs).toBe(4);
    expect(guarded.now()).toBe(1_000);
    let fired = 0;
    const kept = guarded.setTimer(() => fired++, 10);
    const cleared = guarded.setTimer(() => fired++, 10);
    guarded.clearTimer(cleared);
    fake.advance(10);
    expect(fired).toBe(1);
    expect(calls).toEqual(['now', 'setTimer 10', 'setTimer 10', 'clearTimer']);
    expect(kept).not.toBe(cleared);
  });

  it('keeps the last good reading when now() throws or reads no time, and says which', () => {
    const warnings = captureWarnings();
    let reading: () => unknown = () => 1_500;
    const { clock } = recordingClock({ now: () => reading() as number });
    const guarded = guardedClock(clock, 1_000, PATH);
    expect(guarded.now()).toBe(1_500);
    reading = () => {
      throw new Error('clock stopped');
    };
    expect(guarded.now()).toBe(1_500);
    reading = () => Number.NaN;
    expect(guarded.now()).toBe(1_500);
    expect(warnings).toEqual([
      {
        message: `grpc-retry-hedging: ${PATH}.clock.now threw (clock stopped); its last reading is used instead; further errors of it are not reported`,
        code: 'GRPC_RETRY_HEDGING_HOOK_ERROR',
      },
    ]);
  });

  it('reports a now() that reads no time in its own words', () => {
    const warnings = captureWarnings();
    const guarded = guardedClock(recordingClock({ now: () => '5' as unknown as number }).clock, 1_000, PATH);
    expect(guarded.now()).toBe(1_000);
    expect(warnings.map((w) => w.message)).toEqual([
      `grpc-retry-hedging: ${PATH}.clock.now must return a finite number of ms, got "5"; its last reading is used instead; further errors of it are not reported`,
    ]);
  });

  it("sets a timer the clock cannot set on Node's timers, and clears it there, not on the clock", () => {
    vi.useFakeTimers();
    const warnings = captureWarnings();
    const { clock, calls } = recordingClock({
      setTimer: () => {
        throw new Error('no timers');
      },
    });
    const guarded = guardedClock(clock, 1_000, PATH);
    let fired = 0;
    guarded.setTimer(() => fired++, 20);
    const cleared = guarded.setTimer(() => fired++, 20);
    guarded.clearTimer(cleared);
    vi.advanceTimersByTime(20);
    expect(fired).toBe(1);
    expect(calls).toEqual([]);
    expect(warnings.map((w) => w.message)).toEqual([
      `grpc-retry-hedging: ${PATH}.clock.setTimer threw (no timers); the timer is set on Node's timers instead; further errors of it are not reported`,
    ]);
  });

  it('goes on when clearTimer throws, reporting it once', () => {
    const warnings = captureWarnings();
    const { clock } = recordingClock({
      clearTimer: () => {
        throw new Error('cannot clear');
      },
    });
    const guarded = guardedClock(clock, 1_000, PATH);
    const handle = guarded.setTimer(() => {}, 5);
    expect(() => guarded.clearTimer(handle)).not.toThrow();
    expect(() => guarded.clearTimer(handle)).not.toThrow();
    expect(warnings.map((w) => w.message)).toEqual([
      `grpc-retry-hedging: ${PATH}.clock.clearTimer threw (cannot clear); the timer may still fire; further errors of it are not reported`,
    ]);
  });
});
