import { describe, expect, it } from 'vitest';
import { LatencyWindow } from '../../src/hedging/latency-window.js';

// 3 slices of 10 s; times are in the slice numbers' scale of a real clock.
const T = 1_700_000_000_000;
const SLICE = 10_000;

describe('LatencyWindow', () => {
  it('holds the samples of the current slice and of the slices before it, within the window', () => {
    const window = new LatencyWindow(3 * SLICE, 3);
    window.record(10, T);
    window.record(20, T + SLICE);
    window.record(30, T + 2 * SLICE);
    const snapshot = window.snapshot(T + 2 * SLICE);
    expect(snapshot.count).toBe(3);
    expect(snapshot.quantile(0)).toBeCloseTo(10, 0);
    expect(snapshot.quantile(1)).toBeCloseTo(30, 0);
  });

  it('forgets a slice once it is older than the window, and reuses its place for a new one', () => {
    const window = new LatencyWindow(3 * SLICE, 3);
    window.record(10, T);
    window.record(20, T + SLICE);
    expect(window.snapshot(T + 3 * SLICE).count).toBe(1); // the first slice left the window
    window.record(40, T + 3 * SLICE); // lands where the first slice was
    const snapshot = window.snapshot(T + 3 * SLICE);
    expect(snapshot.count).toBe(2);
    expect(snapshot.quantile(0)).toBeCloseTo(20, 0);
    expect(window.snapshot(T + 5 * SLICE).count).toBe(1);
  });

  it('leaves out samples recorded at a later time than the snapshot (a clock that stepped back)', () => {
    const window = new LatencyWindow(3 * SLICE, 3);
    window.record(10, T);
    window.record(99, T + 2 * SLICE);
    const earlier = window.snapshot(T + SLICE);
    expect(earlier.count).toBe(1);
    expect(earlier.quantile(1)).toBeCloseTo(10, 0);
  });
});
