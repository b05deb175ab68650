import { describe, expect, it } from 'vitest';
import { AttemptWindow, upperBound } from '../../src/hedging/attempt-window.js';

const sortedOf = (w: AttemptWindow): number[] => Array.from(w.sorted.subarray(0, w.size));

describe('AttemptWindow', () => {
  it('keeps the last `capacity` attempts, in arrival order and in ascending order', () => {
    const w = new AttemptWindow(4);
    for (const x of [5, 1, Number.POSITIVE_INFINITY, 3, 2, 4]) {
      w.push(x);
    }
    expect(w.size).toBe(4);
    expect(Array.from(w.arrivals(0, 4))).toEqual([Number.POSITIVE_INFINITY, 3, 2, 4]);
    expect(Array.from(w.arrivals(1, 2))).toEqual([3, 2]);
    expect(sortedOf(w)).toEqual([2, 3, 4, Number.POSITIVE_INFINITY]);
  });

  it('drops one of several equal values when the oldest of them leaves', () => {
    const w = new AttemptWindow(3);
    for (const x of [7, 7, 1, 7]) {
      w.push(x);
    }
    expect(sortedOf(w)).toEqual([1, 7, 7]);
    w.push(0);
    expect(sortedOf(w)).toEqual([0, 1, 7]);
  });

  it('counts the last m attempts above a threshold, across the ring wrapping round', () => {
    const w = new AttemptWindow(5);
    for (const x of [9, 9, 9, 1, 2, 9, 3]) {
      w.push(x);
    }
    // Arrival order now: 9, 1, 2, 9, 3 (the ring wrapped twice).
    const counts = { high: -1, low: -1 };
    w.countLastAbove(3, 2.5, 1.5, counts);
    expect(counts).toEqual({ high: 2, low: 3 });
    w.countLastAbove(5, 2.5, 0, counts);
    expect(counts).toEqual({ high: 3, low: 5 });
    w.countLastAbove(1, 3, 2.9, counts);
    expect(counts).toEqual({ high: 0, low: 1 });
    // Above, not at: the 2 and the 3 are not counted.
    w.countLastAbove(3, 3, 2, counts);
    expect(counts).toEqual({ high: 1, low: 2 });
  });

  it('restarts from its last attempts, or from given values, and goes on from there', () => {
    const w = new AttemptWindow(4);
    for (const x of [4, 3, 2, 1]) {
      w.push(x);
    }
    w.keepLast(2);
    expect(Array.from(w.arrivals(0, w.size))).toEqual([2, 1]);
    expect(sortedOf(w)).toEqual([1, 2]);
    w.restart(Float64Array.from([8, 6, 7]));
    w.push(5);
    w.push(9);
    expect(Array.from(w.arrivals(0, w.size))).toEqual([6, 7, 5, 9]);
    expect(sortedOf(w)).toEqual([5, 6, 7, 9]);
  });
});

describe('upperBound', () => {
  it('is the first index whose value is above the one sought', () => {
    const sorted = Float64Array.from([1, 2, 2, 3, Number.POSITIVE_INFINITY]);
    expect(upperBound(sorted, 5, 2)).toBe(3);
    expect(upperBound(sorted, 5, 0)).toBe(0);
    expect(upperBound(sorted, 5, Number.MAX_VALUE)).toBe(4);
    expect(upperBound(sorted, 3, 5)).toBe(3);
  });
});
