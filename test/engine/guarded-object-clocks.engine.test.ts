/**
 * The clocks of the objects an application hands to the interceptor (an `AdaptiveHedging`, a `RetryBudget` gate, a
 * `HedgeBudget`, a `CancelRateLimiter`) are read from grpc-js callbacks and timers too, as the interceptor's own
 * `clock` option is. Before, only the interceptor's was guarded: an `AdaptiveHedging` whose clock threw took an
 * exception out of the winning attempt's status callback (uncaught, and the call ended only at its deadline), and a
 * `RetryBudget` whose first reading was NaN never forgot a deposit. Now each is refused when it cannot read at
 * construction, and read safely after: a throw or a reading that is no finite number gives the last good reading,
 * warned once (`GRPC_RETRY_HEDGING_HOOK_ERROR`) naming the object's own option.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { guardedClock } from '../../src/util/guarded-clock.js';
import { engineCall, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A clock on `fake` whose `now()` misbehaves once `breakNow` returns something other than undefined. */
function breakableClock(fake: FakeClock, breakNow: () => 'throw' | 'nan' | undefined): Clock {
  return {
    now: () => {
      const how = breakNow();
      if (how === 'throw') throw new Error('clock broke');
      return how === 'nan' ? Number.NaN : fake.now();
    },
    setTimer: (callback, delayMs) => fake.setTimer(callback, delayMs),
    clearTimer: (handle) => fake.clearTimer(handle),
  };
}

describe('an AdaptiveHedging whose clock breaks during a call', () => {
  it('records the answer without throwing into grpc-js, and the call ends OK at once', async () => {
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    let broken = false;
    const adaptive = new AdaptiveHedging({
      clock: breakableClock(fake, () => (broken ? 'throw' : undefined)),
      budget: false,
    });
    const h = engineCall(hedgingPolicy({ maxAttempts: 2, hedgingDelay: '0.05s' }), {
      clock: fake,
      interceptor: { adaptiveHedging: adaptive },
    });
    fake.advance(50);
    expect(h.attempts).toHaveLength(2);
    broken = true;
    // The winner's answer records the first attempt's outcome, which reads the adaptive clock.
    expect(() => h.attempt(1).succeed('second')).not.toThrow();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['second']);
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'GRPC_RETRY_HEDGING_HOOK_ERROR',
        'grpc-retry-hedging: AdaptiveHedging: options.clock.now threw (clock broke); its last reading is used instead; further errors of it are not reported',
      ],
    ]);
    // The outcome was recorded at the last good reading.
    expect(adaptive.currentDelays().get('/test.Svc/Do')).toBe(50);
  });

  it('is refused when it cannot read at construction, naming the option', () => {
    const fake = new FakeClock(T0);
    expect(() => new AdaptiveHedging({ clock: breakableClock(fake, () => 'nan') })).toThrow(
      /^AdaptiveHedging: options\.clock\.now\(\) must return a finite number of ms .*got NaN$/,
    );
    expect(() => new AdaptiveHedging({ clock: breakableClock(fake, () => 'throw') })).toThrow(
      'AdaptiveHedging: options.clock.now() threw when read: clock broke',
    );
  });
});

describe('a RetryBudget gate whose clock breaks', () => {
  it('decides the retry at its last good reading, and the call ends', async () => {
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    let broken = false;
    const gate = new RetryBudget({
      clock: breakableClock(fake, () => (broken ? 'nan' : undefined)),
      minPerSecond: 10,
    });
    const h = engineCall(retryPolicy(), { clock: fake, interceptor: { gate } });
    broken = true;
    expect(() => h.attempt(0).fail()).not.toThrow();
    fake.advance(1000);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(warnings.map((w) => w.message)).toEqual([
      'grpc-retry-hedging: RetryBudget: options.clock.now must return a finite number of ms, got NaN; its last reading is used instead; further errors of it are not reported',
    ]);
  });

  it('forgets its deposits after a NaN reading as after any other (a first NaN is refused)', () => {
    captureWarnings();
    const fake = new FakeClock(T0);
    let nan = false;
    const budget = new RetryBudget({
      clock: breakableClock(fake, () => (nan ? 'nan' : undefined)),
      maxExtraLoad: 0.5,
      ttlMs: 1000,
    });
    for (let i = 0; i < 10; i++) budget.recordCall();
    nan = true;
    budget.recordCall();
    nan = false;
    expect(budget.tokens).toBe(5.5);
    fake.advance(2000);
    expect(budget.tokens).toBe(0);
    expect(() => new RetryBudget({ clock: { now: () => Number.NaN } })).toThrow(
      /^RetryBudget: options\.clock\.now\(\) must return a finite number of ms .*got NaN$/,
    );
  });
});

describe('the clocks of a HedgeBudget and a CancelRateLimiter', () => {
  it('never throw from the methods the engine calls, and warn in their own names', () => {
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    let broken = false;
    const clock = breakableClock(fake, () => (broken ? 'throw' : undefined));
    const budget = new HedgeBudget({ clock, minPerSecond: 1 });
    const limiter = new CancelRateLimiter({
      clock: breakableClock(fake, () => (broken ? 'throw' : undefined)),
    });
    broken = true;
    expect(() => budget.recordCall()).not.toThrow();
    expect(budget.allowAttempt('hedge')).toBe(true);
    expect(limiter.tryCancel()).toBe(true);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^grpc-retry-hedging: HedgeBudget: options\.clock\.now threw \(clock broke\)/),
      expect.stringMatching(
        /^grpc-retry-hedging: CancelRateLimiter: options\.clock\.now threw \(clock broke\)/,
      ),
    ]);
  });
});

describe('a guard handed to another guard', () => {
  it('is kept as it is, not wrapped twice', () => {
    const once = guardedClock(new FakeClock(T0), T0, 'here: options');
    expect(guardedClock(once, T0, 'there: options')).toBe(once);
    // An AdaptiveHedging hands its guarded clock to its HedgeBudget: one warning, in the AdaptiveHedging's name.
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    let broken = false;
    const adaptive = new AdaptiveHedging({
      clock: breakableClock(fake, () => (broken ? 'throw' : undefined)),
    });
    broken = true;
    adaptive.budget?.recordCall();
    adaptive.budget?.recordCall();
    adaptive.recordOutcome('/test.Svc/Do', 10, 5, false);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^grpc-retry-hedging: AdaptiveHedging: options\.clock\.now threw/),
    ]);
  });
});
