import { describe, expect, it } from 'vitest';
import {
  AdaptiveHedging,
  isAdaptiveHedging,
  resolveAdaptiveHedging,
} from '../../src/hedging/adaptive-hedging-delay.js';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import type { Clock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/testing/index.js';
import { FakeClock } from './fake-clock.js';

const M = '/pkg.Service/Read';
const OTHER = '/pkg.Service/Write';

/** Record `count` first attempts that answered after `draw(i)` ms (no hedge won), spread over `durationMs`. */
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
    const delay = hedging.delayFor(method, 20).delayMs;
    hedging.recordOutcome(method, delay, draw(i));
    clock.advance(step);
  }
}

describe('AdaptiveHedging delay', () => {
  it('uses the configured delay until a call is recorded, and moves from it once 1 / maxExtraLoad have been', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 20, adaptive: false });
    expect(hedging.delayOf(M)).toBeUndefined();
    for (let i = 0; i < 19; i++) hedging.recordOutcome(M, 20, 5 + (i % 5));
    // Recorded, so adaptive, but held at the delay it started from until 20 calls have answered.
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 20, adaptive: true });
    hedging.recordOutcome(M, 20, 5);
    const choice = hedging.delayFor(M, 20);
    expect(choice.delayMs).toBe(9); // the slowest of 20 (a = 0 at this size)
    expect(hedging.delayOf(M)).toBe(choice.delayMs);
  });

  it('tracks the p95.5 of first attempts by default, and the p99.1 with maxExtraLoad 0.01 (a tenth left to the budget)', () => {
    for (const [maxExtraLoad, expected] of [
      [0.05, 955],
      [0.01, 991],
    ] as const) {
      const clock = new FakeClock();
      const hedging = new AdaptiveHedging({ clock, maxExtraLoad });
      const random = seededRandom(7);
      // Uniform on 0..1000 ms: the quantile 1 − maxExtraLoad is 950 or 990 ms.
      feed(hedging, clock, 30_000, 300_000, () => random() * 1000);
      let outlived = 0;
      const calls = 20_000;
      for (let i = 0; i < calls; i++) {
        const delay = hedging.delayFor(M, 20).delayMs;
        const latency = random() * 1000;
        if (latency > delay) outlived++;
        hedging.recordOutcome(M, delay, latency);
      }
      expect(outlived / calls).toBeGreaterThan(maxExtraLoad * 0.7);
      expect(outlived / calls).toBeLessThan(maxExtraLoad);
      const delay = hedging.delayOf(M) as number;
      expect(Math.abs(delay - expected) / expected).toBeLessThan(0.02);
      expect(hedging.quantile).toBeCloseTo(1 - 0.9 * maxExtraLoad, 10);
    }
  });

  it('follows a regime shift up and down within tens of calls, whatever the clock does', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    const random = seededRandom(3);
    const regime = (fast: number, slow: number) => () => (random() < 0.05 ? slow : fast * (0.5 + random()));
    feed(hedging, clock, 1_000, 5_000, regime(2, 200));
    expect(hedging.delayOf(M) as number).toBeLessThan(5);
    feed(hedging, clock, 30, 150, regime(20, 400));
    expect(hedging.delayOf(M) as number).toBeGreaterThan(25);
    feed(hedging, clock, 100, 500, regime(2, 200));
    expect(hedging.delayOf(M) as number).toBeLessThan(5);
  });

  it("tells the tracker when each call answered: two late answers in the same millisecond, a pause's, are taken out", () => {
    for (const apartMs of [0, 5]) {
      const clock = new FakeClock();
      const hedging = new AdaptiveHedging({ clock, budget: false });
      // A fast path over 10..12 ms and every 20th call slow (a hedge superseded it), 5 ms apart: the delay is 12 ms.
      const call = (latencyMs: number) => {
        const delay = hedging.delayFor(M, 20).delayMs;
        hedging.recordOutcome(M, delay, latencyMs, latencyMs > delay + 50);
      };
      for (let i = 0; i < 400; i++) {
        call(i % 20 === 7 ? 200 : 10 + (i % 3));
        clock.advance(5);
      }
      expect(hedging.delayOf(M)).toBe(12);
      // Two calls in flight, both sent with the delay at 12 ms, answer at 14 ms (not a pair over 12 ms that the
      // estimate itself drops: 14 + 1 ms is not more than 1.25 × 12).
      hedging.recordOutcome(M, 12, 14, false);
      clock.advance(apartMs);
      hedging.recordOutcome(M, 12, 14, false);
      for (let i = 0; i < 10; i++) {
        clock.advance(5);
        call(10 + (i % 3));
      }
      // Together, the pair is taken out once the calls after it are back under 12 ms; 5 ms apart, it stays.
      expect(hedging.delayOf(M)).toBe(apartMs === 0 ? 12 : 14);
    }
  });

  it("reads latencies in the clock's steps: a lone call one tick over a fast path under 8 ms does not hold the delay up", () => {
    const run = (resolutionMs: number | undefined) => {
      const clock = Object.assign(new FakeClock(), { resolutionMs });
      const hedging = new AdaptiveHedging({ clock, budget: false });
      const call = (latencyMs: number) => {
        const delay = hedging.delayFor(M, 20).delayMs;
        hedging.recordOutcome(M, delay, latencyMs, latencyMs > delay + 50);
        clock.advance(5);
        return hedging.delayOf(M);
      };
      // A fast path over 2..4 ms with every 80th call at 5, and every 20th call slow (a hedge superseded it).
      const fast = (i: number) => (i % 80 === 11 ? 5 : 2 + (i % 3));
      for (let i = 0; i < 400; i++) call(i % 20 === 7 ? 200 : fast(i));
      const settled = hedging.delayOf(M);
      // One call at 6 ms: less than 1.25 × 5, but read off a clock in whole ms it may have taken 6.99.
      call(6);
      for (let i = 0; i < 20; i++) call(fast(i));
      const afterSix = hedging.delayOf(M);
      // One at 7 ms (over 6, a second straggler); then one at 8 ms, a third, is more than two.
      return [settled, afterSix, call(7), call(8)];
    };
    expect(run(1)).toEqual([5, 5, 5, 6]);
    // With an exact clock, 6 over 5 is no straggler (7 and 6 then span more than 1.25 × 5: a pair at the top).
    expect(run(undefined)).toEqual([5, 6, 5, 6]);
  });

  it('refuses a clock whose resolutionMs is not a number of ms, 0 or more', () => {
    for (const resolutionMs of [-1, Number.NaN, '1']) {
      const clock = Object.assign(new FakeClock(), { resolutionMs });
      expect(() => new AdaptiveHedging({ clock: clock as unknown as Clock })).toThrow(
        /AdaptiveHedging: options\.clock\.resolutionMs must be a finite number of ms, 0 or more/,
      );
    }
  });

  it('reports first-attempt latencies over its window, and forgets them when the window has passed', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, windowMs: 3_000, windowBins: 3 });
    expect(hedging.latencies(M)).toBeUndefined();
    feed(hedging, clock, 1_000, 2_000, (i) => (i % 100) + 1);
    const report = hedging.latencies(M);
    expect(report?.count).toBe(1_000);
    expect(Math.abs((report?.p50 as number) - 50) / 50).toBeLessThan(0.03);
    expect(Math.abs((report?.p99 as number) - 99) / 99).toBeLessThan(0.03);
    clock.advance(4_000);
    expect(hedging.latencies(M)).toBeUndefined();
    expect(hedging.delayOf(M)).toBeDefined(); // the delay does not depend on the window
  });

  it('never goes below minDelayMs nor above maxDelayMs', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, minDelayMs: 4, maxDelayMs: 100 });
    feed(hedging, clock, 3_000, 3_000, () => 0.5);
    expect(hedging.delayFor(M, 20)).toEqual({ delayMs: 4, adaptive: true });
    feed(hedging, clock, 3_000, 3_000, () => 5_000);
    expect(hedging.delayOf(M)).toBeCloseTo(100, 6);
  });

  it('ignores negative and non-finite values', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      hedging.recordOutcome(M, 10, bad);
      hedging.recordOutcome(M, bad, 10);
    }
    expect(hedging.delayOf(M)).toBeUndefined();
    hedging.recordOutcome(M, 10, 0);
    expect(hedging.delayOf(M)).toBe(10);
    for (let i = 0; i < 19; i++) hedging.recordOutcome(M, 10, 2);
    expect(hedging.delayOf(M)).toBe(2);
  });

  it('keeps each method apart, and reports every delay through currentDelays', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock });
    for (let i = 0; i < 3_000; i++) {
      hedging.recordOutcome(M, hedging.delayFor(M, 20).delayMs, 10);
      hedging.recordOutcome(OTHER, hedging.delayFor(OTHER, 20).delayMs, 50);
      clock.advance(10);
    }
    const delays = hedging.currentDelays();
    expect([...delays.keys()].sort()).toEqual([M, OTHER]);
    // Every call took exactly 10 (or 50) ms: so is the delay.
    expect(delays.get(M)).toBe(10);
    expect(delays.get(OTHER)).toBe(50);
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
    expect(new AdaptiveHedging(true).options.recentCalls).toBe(400);
    expect(new AdaptiveHedging({ maxExtraLoad: 0.01 }).options.recentCalls).toBe(2_000);
  });

  it('rejects invalid options with an error that names the option', () => {
    expect(() => new AdaptiveHedging({ maxExtraLoad: 1 })).toThrow(
      /AdaptiveHedging: options\.maxExtraLoad must be a number in \(0, 1\), got 1/,
    );
    expect(() => new AdaptiveHedging({ maxExtraLoad: 0 })).toThrow(RangeError);
    expect(() => new AdaptiveHedging({ windowMs: 0 })).toThrow(/options\.windowMs/);
    expect(() => new AdaptiveHedging({ windowBins: 1.5 })).toThrow(/options\.windowBins/);
    expect(() => new AdaptiveHedging({ step: 0.05 } as never)).toThrow(
      /AdaptiveHedging: options\.step was renamed to "recentCalls" \(the delay is the quantile of the recent calls, not a stepped estimate\)/,
    );
    expect(() => new AdaptiveHedging({ recentCalls: 5 })).toThrow(/options\.recentCalls/);
    expect(() => new AdaptiveHedging({ minDelayMs: 0 })).toThrow(/options\.minDelayMs/);
    expect(() => new AdaptiveHedging({ minDelayMs: 10, maxDelayMs: 5 })).toThrow(
      /options\.maxDelayMs must be a number >= 10 \(ms, at least minDelayMs\), got 5/,
    );
    expect(() => new AdaptiveHedging({ windowSlices: 3 } as never)).toThrow(
      /AdaptiveHedging: options\.windowSlices was renamed to "windowBins"/,
    );
    expect(() => new AdaptiveHedging({ minSamples: 10 } as never)).toThrow(/minSamples is gone/);
    expect(() => new AdaptiveHedging({ budget: { ttlMs: 500 } })).toThrow(/options\.budget\.ttlMs/);
    expect(() => new AdaptiveHedging({ budget: { minPerSecond: -1 } })).toThrow(
      /options\.budget\.minPerSecond/,
    );
    expect(() => new AdaptiveHedging({ maxExtraLoads: 0.1 } as never)).toThrow(
      /options\.maxExtraLoads is not an option; did you mean "maxExtraLoad"\?/,
    );
    expect(() => new AdaptiveHedging({ clock: {} as never })).toThrow(/options\.clock must be a Clock/);
    expect(() => new AdaptiveHedging({ maxMethods: 0 })).toThrow(/options\.maxMethods/);
    expect(() => new AdaptiveHedging({ maxMethods: 2.5 })).toThrow(/options\.maxMethods/);
  });
});

describe('AdaptiveHedging: how many methods it keeps (maxMethods)', () => {
  const path = (i: number) => `/pkg.Service/M${i}`;

  it('keeps 1,000 by default: past them, the tenth recorded least recently are forgotten and hedge at the policy delay', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, holdInStalls: false });
    expect(hedging.options.maxMethods).toBe(1_000);
    for (let i = 0; i < 1_000; i++) {
      hedging.recordOutcome(path(i), 20, 5);
      clock.advance(1);
    }
    hedging.recordOutcome(path(0), 20, 5); // M0 is the most recent now; M1..M100 the least
    expect(hedging.currentDelays().size).toBe(1_000);
    hedging.recordOutcome(path(1_000), 20, 5);
    const kept = hedging.currentDelays();
    expect(kept.size).toBe(901);
    expect(kept.has(path(0))).toBe(true);
    expect(kept.has(path(1_000))).toBe(true);
    expect([...Array(100)].map((_, i) => kept.has(path(i + 1)))).not.toContain(true);
    expect(kept.has(path(101))).toBe(true);
    expect(hedging.delayFor(path(1), 33)).toEqual({ delayMs: 33, adaptive: false });
    expect(hedging.latencies(path(1))).toBeUndefined();
  });

  it('a forgotten method learns again from the policy delay; one kept keeps what it learned', () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, maxMethods: 2 });
    feed(hedging, clock, 100, 1_000, () => 3, path(1));
    feed(hedging, clock, 100, 1_000, () => 3, path(2));
    const learned = hedging.delayOf(path(2));
    expect(learned).toBeLessThan(20);
    feed(hedging, clock, 1, 10, () => 3, path(3)); // M1 goes (one method: a tenth of 2, at least one)
    expect(hedging.delayOf(path(1))).toBeUndefined();
    expect(hedging.delayOf(path(2))).toBe(learned);
    expect(hedging.delayFor(path(3), 20)).toEqual({ delayMs: 20, adaptive: true });
  });

  it("keeps a method's stall hold while hedges are held there, and forgets idle holds of methods it does not keep", () => {
    const clock = new FakeClock();
    const hedging = new AdaptiveHedging({ clock, maxMethods: 1 });
    // M1's calls stall: a second hedge due with no answer is held.
    expect(hedging.holdHedge(path(1))).toBe(false);
    expect(hedging.holdHedge(path(1))).toBe(true);
    let released = 0;
    hedging.whenAnswered(path(1), () => (released += 1));
    // Another method's hold, past the limit: M1's is held, so it stays.
    expect(hedging.holdHedge(path(2))).toBe(false);
    expect(hedging.heldHedges(path(1))).toBe(1);
    hedging.recordOutcome(path(1), 20, 5); // releases, and M1's delay is kept
    expect(released).toBe(1);
    // M3's hold: M2's hold is idle and M2 has no delay kept, so it goes; M1's (a kept method) stays.
    expect(hedging.holdHedge(path(3))).toBe(false);
    expect(hedging.holdHedge(path(2))).toBe(false); // a fresh hold: no hedge counted as due before
    expect(hedging.holdHedge(path(2))).toBe(true);
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
      /createRetryInterceptor: options\.adaptiveHedging\.maxExtraLoad must be a number in \(0, 1\)/,
    );
    expect(() => resolveAdaptiveHedging('yes' as never)).toThrow(
      /createRetryInterceptor: options\.adaptiveHedging must be true, false/,
    );
  });
});
