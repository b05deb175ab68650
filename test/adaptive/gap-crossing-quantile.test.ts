import { describe, expect, it } from 'vitest';
import { gapCrossingQuantile } from '../../src/hedging/gap-crossing-quantile.js';

const SUPERSEDED = Number.POSITIVE_INFINITY;

/** The estimate of a window holding `values` (any order), at the target share `exceedance` and gap ratio 2. */
function estimate(values: number[], exceedance = 0.05): number | undefined {
  const sorted = Float64Array.from(values).sort();
  return gapCrossingQuantile(sorted, sorted.length, exceedance, 2);
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

  it('counts superseded attempts as slower than any latency, and falls back to the slowest answered one', () => {
    // Superseded attempts (+∞) are a cluster of their own above the slow mode: crossed like it.
    expect(estimate([...spread(378, 2, 6), ...repeat(22, SUPERSEDED)])).toBe(6);
    // More of them than the tolerance: the slowest latency that answered.
    expect(estimate([...spread(300, 2, 6), ...repeat(100, SUPERSEDED)])).toBe(6);
    // Only superseded attempts: no estimate.
    expect(estimate(repeat(30, SUPERSEDED))).toBeUndefined();
  });
});
