import { describe, expect, it } from 'vitest';
import {
  AdaptiveHedging,
  isAdaptiveHedging,
  resolveAdaptiveHedging,
} from '../../src/hedging/adaptive-hedging-delay.js';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { seededRandom } from '../../src/testing/index.js';
import { FakeClock } from './fake-clock.js';

const M = '/pkg.Service/Read';
const OTHER = '/pkg.Service/Write';

/** Record `count` latencies spread evenly over `durationMs`, each drawn by `draw`. */
function feed(
  hedging: AdaptiveHedging,
  clock: FakeClock,
  count: number,
  durationMs: number,
  draw: (i: number) => number,
  method = M,
): void {
  const step = durationMs / count;
  for (let i = 0; i < count; i++) {
    hedging.record(method, draw(i));
    clock.advance(step);
  }
}

describe('AdaptiveHedging delay', () => {
  it('uses the configured delay until the window holds minSamples and the first recomputation is due', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, minSamples: 50 });
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 20, adaptive: false });
    feed(hedging, clock, 49, 2_000, () => 5);
    clock.advance(2_000); // recomputation due, but 49 < 50 samples
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 20, adaptive: false });
    hedging.record(M, 5);
    // The next recomputation is 3 s after the last one.
    expect(hedging.delayFor(M, 20).adaptive).toBe(false);
    clock.advance(3_000);
    const choice = hedging.delayFor(M, 20);
    expect(choice.adaptive).toBe(true);
    expect(choice.delayMs).toBeCloseTo(5, 0);
  });

  it('is the p95 of the window by default, and p99 with maxExtraLoad 0.01 (within the sketch accuracy)', () => {
    for (const [maxExtraLoad, expected] of [
      [0.05, 950],
      [0.01, 990],
    ] as const) {
      const clock = new FakeClock();
      const hedging = new AdaptiveHedging({ clock, maxExtraLoad });
      // 1..1000 ms in a shuffled order.
      const random = seededRandom(7);
      const values = Array.from({ length: 1000 }, (_, i) => i + 1).sort(() => random() - 0.5);
      feed(hedging, clock, 1000, 3_000, (i) => values[i] as number);
      const { delayMs, adaptive } = hedging.delayFor(M, 20);
      expect(adaptive).toBe(true);
      expect(Math.abs(delayMs - expected) / expected).toBeLessThanOrEqual(0.011);
      expect(hedging.quantile).toBeCloseTo(1 - maxExtraLoad, 10);
    }
  });

  it('is not recomputed more often than recomputeEveryMs', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, recomputeEveryMs: 3_000 });
    feed(hedging, clock, 200, 3_000, () => 10);
    const first = hedging.delayFor(M, 1).delayMs;
    expect(first).toBeCloseTo(10, 0);
    feed(hedging, clock, 2_000, 2_000, () => 100); // now the window is mostly 100 ms
    clock.advance(999);
    expect(hedging.delayFor(M, 1).delayMs).toBe(first);
    clock.advance(1);
    expect(hedging.delayFor(M, 1).delayMs).toBeCloseTo(100, 0);
  });

  it('follows a regime shift: up within one recomputation, down once the old samples leave the window', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    const random = seededRandom(3);
    const regime = (fast: number, slow: number) => () =>
      random() < 0.05 ? slow : fast * (0.9 + 0.2 * random());
    // 40 s of a 2 ms fast path (5% at 200 ms), 100 samples a second.
    feed(hedging, clock, 4_000, 40_000, regime(2, 200));
    const before = hedging.delayOf(M) as number;
    expect(before).toBeGreaterThan(1.5);
    expect(before).toBeLessThanOrEqual(202);
    // Then a 20 ms fast path (5% at 400 ms): within 6 s the new samples pass 5% of the window and lift the delay.
    feed(hedging, clock, 600, 6_000, regime(20, 400));
    expect(hedging.delayOf(M) as number).toBeGreaterThan(17);
    // After a full window of the new regime only, the delay is its p95: between its fast path and its tail.
    feed(hedging, clock, 3_000, 30_000, regime(20, 400));
    const after = hedging.delayOf(M) as number;
    expect(after).toBeGreaterThanOrEqual(17);
    expect(after).toBeLessThanOrEqual(404);
    // And back to the fast regime: once the slow samples have aged out (30 s), the delay is the fast one again.
    feed(hedging, clock, 3_500, 35_000, () => 2);
    expect(hedging.delayOf(M) as number).toBeCloseTo(2, 1);
  });

  it('falls back to the configured delay when the window empties', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    feed(hedging, clock, 200, 3_000, () => 8);
    expect(hedging.delayFor(M, 20).adaptive).toBe(true);
    clock.advance(31_000);
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 20, adaptive: false });
    expect(hedging.delayOf(M)).toBeUndefined();
  });

  it('never goes below minDelayMs', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, minDelayMs: 4 });
    feed(hedging, clock, 200, 3_000, () => 0.5);
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 4, adaptive: true });
  });

  it('ignores negative and non-finite latencies', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, minSamples: 1 });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) hedging.record(M, bad);
    clock.advance(3_000);
    expect(hedging.delayOf(M)).toBeUndefined();
    hedging.record(M, 0);
    clock.advance(3_000);
    expect(hedging.delayOf(M)).toBe(1); // 0 ms, raised to the 1 ms floor
  });

  it('keeps each method apart, and reports every delay through currentDelays', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    for (let i = 0; i < 300; i++) {
      hedging.record(M, 10);
      hedging.record(OTHER, 50);
      clock.advance(10);
    }
    hedging.record('/pkg.Service/Rare', 1); // too few samples: no delay yet
    const delays = hedging.currentDelays();
    expect([...delays.keys()].sort()).toEqual([M, OTHER]);
    expect(delays.get(M)).toBeCloseTo(10, 0);
    expect(delays.get(OTHER)).toBeCloseTo(50, 0);
    expect(hedging.delayOf('/pkg.Service/Unknown')).toBeUndefined();
  });

  it('builds a hedge budget with the same maxExtraLoad, unless budget is false', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, maxExtraLoad: 0.1, budget: { minPerSecond: 2 } });
    expect(hedging.budget).toBeInstanceOf(HedgeBudget);
    expect(hedging.budget?.maxExtraLoad).toBe(0.1);
    expect(hedging.budget?.minPerSecond).toBe(2);
    expect(hedging.budget?.tokens).toBe(20); // 2 per second × 10 s ttl
    expect(new AdaptiveHedging({ budget: false }).budget).toBeUndefined();
    expect(new AdaptiveHedging(true).options.maxExtraLoad).toBe(0.05);
  });

  it('rejects invalid options with an error that names the option', () => {
    expect(() => new AdaptiveHedging({ maxExtraLoad: 1 })).toThrow(
      /AdaptiveHedging: options\.maxExtraLoad must be a number in \[0, 1\), got 1/,
    );
    expect(() => new AdaptiveHedging({ maxExtraLoad: -0.1 })).toThrow(RangeError);
    expect(() => new AdaptiveHedging({ windowMs: 0 })).toThrow(/options\.windowMs/);
    expect(() => new AdaptiveHedging({ windowSlices: 1.5 })).toThrow(/options\.windowSlices/);
    expect(() => new AdaptiveHedging({ minSamples: 0 })).toThrow(/options\.minSamples/);
    expect(() => new AdaptiveHedging({ minDelayMs: Number.NaN })).toThrow(/options\.minDelayMs/);
    expect(() => new AdaptiveHedging({ recomputeEveryMs: -1 })).toThrow(/options\.recomputeEveryMs/);
    expect(() => new AdaptiveHedging({ budget: { ttlMs: 500 } })).toThrow(/options\.budget\.ttlMs/);
    expect(() => new AdaptiveHedging({ budget: { minPerSecond: -1 } })).toThrow(
      /options\.budget\.minPerSecond/,
    );
    expect(() => new AdaptiveHedging({ maxExtraLoads: 0.1 } as never)).toThrow(
      /options\.maxExtraLoads is not a known option/,
    );
    expect(() => new AdaptiveHedging({ clock: {} as never })).toThrow(/options\.clock must be a Clock/);
  });
});

describe('resolveAdaptiveHedging (the interceptor option)', () => {
  it('is off for undefined and false, builds one for true or options, and passes an instance through', () => {
    expect(resolveAdaptiveHedging(undefined)).toBeUndefined();
    expect(resolveAdaptiveHedging(false)).toBeUndefined();
    expect(resolveAdaptiveHedging(true)).toBeInstanceOf(AdaptiveHedging);
    expect(resolveAdaptiveHedging({ maxExtraLoad: 0.02 })?.options.maxExtraLoad).toBe(0.02);
    const shared = new AdaptiveHedging();
    expect(resolveAdaptiveHedging(shared)).toBe(shared);
    expect(isAdaptiveHedging(shared)).toBe(true);
    expect(isAdaptiveHedging({})).toBe(false);
  });

  it('names the interceptor option in its errors', () => {
    expect(() => resolveAdaptiveHedging({ maxExtraLoad: 2 })).toThrow(
      /createRetryInterceptor: options\.adaptiveHedging\.maxExtraLoad must be a number in \[0, 1\)/,
    );
    expect(() => resolveAdaptiveHedging('yes' as never)).toThrow(
      /createRetryInterceptor: options\.adaptiveHedging must be true, false/,
    );
  });
});
