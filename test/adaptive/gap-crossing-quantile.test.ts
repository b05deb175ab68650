import { describe, expect, it } from 'vitest';
import { gapCrossingQuantile } from '../../src/hedging/gap-crossing-quantile.js';

const SUPERSEDED = Number.POSITIVE_INFINITY;

/**
 * The estimate of a window holding `values` (any order), at the target share `exceedance` and gap ratio 2, with
 * latencies read to `resolutionMs` (0: exactly).
 */
function estimate(values: number[], exceedance = 0.05, resolutionMs = 0): number | undefined {
  const sorted = Float64Array.from(values).sort();
  return gapCrossingQuantile(sorted, sorted.length, exceedance, 2, resolutionMs);
}

/** `count` latencies spread evenly over [from, to]. */
function spread(count: number, from: number, to: number): number[] {
  return Array.from({ length: count }, (_, i) => from + ((to - from) * i) / Math.max(1, count - 1));
}

const repeat = (count: number, value: number): number[] => Array.from({ length: count }, () => value);

describe('gapCrossingQuantile', () => {
  it('on a continuous distribution is the order statistic with a = ⌊e · (n + 1)⌋ − 1 attempts above it', () => {
    // 1..400 at e = 0.05: a = 19, so the 381st smallest.
    const values = spread(400, 1, 400);
    expect(estimate(values)).toBe(381);
    // e = 0.1: a = 39.
    expect(estimate(values, 0.1)).toBe(361);
  });

  it('crosses the gap to the top of the fast path when the slow mode holds about the target share', () => {
    // a = 19; the slow mode holds 22, within its tolerance (19 + 3√20 → 33) and the crossing's.
    const values = [...spread(378, 2, 6), ...repeat(22, 200)];
    expect(estimate(values)).toBe(6);
  });

  it('counts a ratio of exactly gapRatio between neighbours as a gap', () => {
    expect(estimate([...spread(380, 2, 5), ...repeat(20, 10)])).toBe(5);
  });

  it('stays in the slow mode when it holds more than the tolerance allows', () => {
    const values = [...spread(360, 2, 6), ...repeat(40, 200)];
    expect(estimate(values)).toBe(200);
  });

  it('crosses a whole cluster between the fast path and the slow mode only when it holds a few attempts', () => {
    // The slow mode's 20 and a middle cluster of 4 (√(a + 1) = 4 more than the slow mode may be hedged): crossed.
    expect(estimate([...spread(376, 2, 6), ...spread(4, 20, 30), ...repeat(20, 200)])).toBe(6);
    // Eight: the delay stays at the middle cluster's top.
    expect(estimate([...spread(372, 2, 6), ...spread(8, 20, 30), ...repeat(20, 200)])).toBe(30);
  });

  it('drops below a sparse top of its cluster (up to three attempts spanning twice the one below) and no more', () => {
    // The fast path tops at 6; three victims at 8, 10 and 13 (13 ≥ 2 × 6) sit in its cluster.
    expect(estimate([...spread(377, 2, 6), 8, 10, 13, ...repeat(20, 200)])).toBe(6);
    // Four such victims are part of the cluster: the delay drops below the top three only.
    expect(estimate([...spread(376, 2, 6), 7, 8, 10, 14, ...repeat(20, 200)])).toBe(7);
  });

  it('drops below up to two stragglers, each more than 1.25 × the next below', () => {
    expect(estimate([...spread(378, 2, 6), 8, ...repeat(21, 200)])).toBe(6);
    expect(estimate([...spread(377, 2, 6), 7.6, 9.6, ...repeat(21, 200)])).toBe(6);
    // A third (together less than twice the fast top, so not a sparse top): the delay stays above the lowest.
    expect(estimate([...spread(376, 2, 6), 7.51, 9.39, 11.74, ...repeat(21, 200)])).toBe(7.51);
  });

  it('drops below a pair at the top that together spans more than 1.25 × the next below, and no lower', () => {
    // Neither is a straggler (7 and 8 are each less than 1.25 × the one below), together they span 8 / 6.
    expect(estimate([...spread(378, 2, 6), 7, 8, ...repeat(20, 200)])).toBe(6);
    // In whole milliseconds, as a real client measures: 6 and 7 over a fast path topping at 5.
    expect(estimate([...repeat(300, 3), ...repeat(78, 5), 6, 7, ...repeat(20, 200)])).toBe(5);
    // Spanning no more than 1.25 × the one below (7.5 over 6; 8 over 6.5, three spread up the gap): it stays.
    expect(estimate([...spread(378, 2, 6), 7, 7.5, ...repeat(20, 200)])).toBe(7.5);
    expect(estimate([...spread(377, 2, 6), 6.5, 7, 8, ...repeat(20, 200)])).toBe(8);
    // Not below a straggler and then a pair: 10 is a straggler over 7.6, and 7 and 7.6 under it stay.
    expect(estimate([...spread(376, 2, 6), 7, 7.6, 10, ...repeat(20, 200)])).toBe(7.6);
  });

  it('in whole milliseconds, gives the top a tick of doubt: one tick over a fast path under 8 ms may be a straggler', () => {
    const wholeMs = (values: number[]) => [estimate(values, 0.05, 0), estimate(values, 0.05, 1)];
    // A fast path read in whole ms, as regime A of `bench:adaptive` on a fast host: most at 2..4, a few at 5.
    const fast = (count: number) => [...repeat(count - 6, 3), ...repeat(6, 5)];
    // One, then two, at 6: 6 reads less than 1.25 × 5, but may have taken 6.99.
    expect(wholeMs([...fast(379), 6, ...repeat(20, 200)])).toEqual([6, 5]);
    expect(wholeMs([...fast(378), 6, 6, ...repeat(20, 200)])).toEqual([6, 5]);
    // A lone one at 8 and two at 6: two stragglers, three attempts.
    expect(wholeMs([...fast(377), 6, 6, 8, ...repeat(20, 200)])).toEqual([6, 5]);
    // Three tied are not a straggler; nor are four in all (two and two: 8, 8 over 6 is one without the doubt).
    expect(wholeMs([...fast(377), 6, 6, 6, ...repeat(20, 200)])).toEqual([6, 6]);
    expect(wholeMs([...fast(376), 6, 6, 7, 8, ...repeat(20, 200)])).toEqual([6, 6]);
    expect(wholeMs([...fast(376), 6, 6, 8, 8, ...repeat(20, 200)])).toEqual([6, 6]);
    // The doubt is one tick: 10 over 8 (two ticks) may be 11 / 8, but stays.
    expect(wholeMs([...repeat(373, 6), ...repeat(6, 8), 10, ...repeat(20, 200)])).toEqual([10, 10]);
    // Not onto a value many attempts read the same (a delay of 5 ms would hedge some of them): 5 ms here holds 30.
    expect(wholeMs([...repeat(349, 3), ...repeat(30, 5), 6, ...repeat(20, 200)])).toEqual([6, 6]);
    // From 8 ms up, one tick is within the ratio even with its doubt (9 + 1 = 1.25 × 8): it stays.
    expect(wholeMs([...repeat(373, 6), ...repeat(6, 8), 9, ...repeat(20, 200)])).toEqual([9, 9]);
    // At regime B's scale (a fast path topping at 30 ms), a tick changes nothing.
    expect(wholeMs([...repeat(373, 25), ...repeat(5, 30), 31, 32, ...repeat(20, 400)])).toEqual([32, 32]);
  });

  it('counts superseded attempts as slower than any latency, and falls back to the slowest answered one', () => {
    // Superseded attempts (+∞) are a cluster of their own above the slow mode: crossed like it.
    expect(estimate([...spread(378, 2, 6), ...repeat(22, SUPERSEDED)])).toBe(6);
    // More of them than the tolerance: the slowest latency that answered.
    expect(estimate([...spread(300, 2, 6), ...repeat(100, SUPERSEDED)])).toBe(6);
    // Only superseded attempts: no estimate.
    expect(estimate(repeat(30, SUPERSEDED))).toBeUndefined();
  });
});
