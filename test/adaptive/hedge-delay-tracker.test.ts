import { describe, expect, it } from 'vitest';
import { HedgeDelayTracker, type HedgeDelayTrackerConfig } from '../../src/hedging/hedge-delay-tracker.js';
import { seededRandom } from '../../src/testing/index.js';

const CONFIG: HedgeDelayTrackerConfig = {
  exceedance: 0.05,
  step: 0.05,
  recentCalls: 200,
  lowerEvery: 10,
  lowerBelowRatio: 1.25,
  minMs: 1,
  maxMs: 60_000,
};

/** A latency regime: a fast path of `fastMs` × U[0.5, 1.5] and `slowShare` of the attempts at `slowMs`. */
function regime(random: () => number, fastMs: number, slowMs: number, slowShare = 0.05): () => number {
  return () => (random() < slowShare ? slowMs : fastMs * (0.5 + random()));
}

interface Run {
  /** Share of calls whose first attempt outlived the delay (and so sent a hedge). */
  hedged: number;
  /** The delay after each call. */
  delays: number[];
}

/**
 * `calls` hedged calls (maxAttempts 2) one after another: the first attempt and the hedge draw from `draw`; the
 * tracker is told what the engine would tell it at the commit.
 */
function run(tracker: HedgeDelayTracker, draw: () => number, calls: number): Run {
  let hedged = 0;
  const delays: number[] = [];
  for (let i = 0; i < calls; i++) {
    const delay = tracker.delayMs;
    const first = draw();
    if (first > delay) {
      hedged += 1;
      const hedgeEnds = delay + draw();
      if (hedgeEnds < first) {
        tracker.record(delay, hedgeEnds, true); // the hedge won: the first attempt ran at least this long
      } else {
        tracker.record(delay, first, false);
      }
    } else {
      tracker.record(delay, first, false);
    }
    delays.push(tracker.delayMs);
  }
  return { hedged: hedged / calls, delays };
}

describe('HedgeDelayTracker', () => {
  it('holds the share of first attempts that outlive the delay near the target on a continuous distribution', () => {
    const random = seededRandom(1);
    const tracker = new HedgeDelayTracker(100, CONFIG);
    // Exponential latencies, mean 10 ms: the p95 is 30 ms.
    const exponential = () => -10 * Math.log(1 - random());
    run(tracker, exponential, 2_000);
    const steady = run(tracker, exponential, 10_000);
    expect(steady.hedged).toBeGreaterThan(0.04);
    expect(steady.hedged).toBeLessThan(0.065);
    const mean = steady.delays.reduce((a, b) => a + b, 0) / steady.delays.length;
    expect(mean).toBeGreaterThan(22);
    expect(mean).toBeLessThan(36);
  });

  it('sits just above the fast path when the slow share is exactly the target (a gap with no drift)', () => {
    const random = seededRandom(2);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    const steady = run(tracker, regime(random, 2, 200), 3_000);
    const late = steady.delays.slice(1_000);
    // The fast path ends at 3 ms; anything from there to 200 ms hedges the same 5%, and the lowest is best.
    expect(Math.max(...late)).toBeLessThan(5);
    expect(Math.min(...late)).toBeGreaterThan(2.5);
    expect(steady.hedged).toBeLessThan(0.06);
  });

  it('follows a shift up within tens of calls', () => {
    const random = seededRandom(3);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    run(tracker, regime(random, 2, 200), 1_000);
    expect(tracker.delayMs).toBeLessThan(5);
    // The fast path moves to 10–30 ms: every call outlives a 3–4 ms delay at first.
    const shifted = run(tracker, regime(random, 20, 400), 1_000);
    const reached = shifted.delays.findIndex((d) => d > 30);
    expect(reached).toBeGreaterThan(0);
    expect(reached).toBeLessThan(20); // consecutive outliving calls double the step
    // So the calls that crossed the lagging delay (and would ask the budget for a hedge) are a handful.
    expect(shifted.delays.slice(0, 20).filter((d) => d < 25).length).toBeLessThan(15);
    // And it stays above the new fast path (the lowering rule does not pull it back into the old one).
    expect(Math.min(...shifted.delays.slice(100))).toBeGreaterThan(25);
  });

  it('follows a shift down within about recentCalls calls', () => {
    const random = seededRandom(4);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    run(tracker, regime(random, 20, 400), 1_000);
    expect(tracker.delayMs).toBeGreaterThan(29);
    const shifted = run(tracker, regime(random, 2, 200), 1_000);
    // The slow share is the same 5%, so the step rule alone has no drift at 30 ms; the lowering rule acts once
    // the old fast path has left the last 200 calls.
    expect(shifted.delays[150]).toBeGreaterThan(20);
    const reached = shifted.delays.findIndex((d) => d < 5);
    expect(reached).toBeGreaterThan(150);
    expect(reached).toBeLessThanOrEqual(220);
  });

  it('with the step rule alone (lowering off), the delay stays in the gap after a shift down', () => {
    const random = seededRandom(4);
    const tracker = new HedgeDelayTracker(30, { ...CONFIG, lowerBelowRatio: Number.POSITIVE_INFINITY });
    run(tracker, regime(random, 20, 400), 1_000);
    const shifted = run(tracker, regime(random, 2, 200), 1_000);
    expect(Math.min(...shifted.delays)).toBeGreaterThan(5);
  });

  it('is not pushed up by superseded attempts (no ratchet of one hedge latency per update)', () => {
    const tracker = new HedgeDelayTracker(10, { ...CONFIG, lowerEvery: 1 });
    // Every 20th first attempt is slow and loses to a hedge that answers 1 ms after the delay; the rest take 2 ms.
    for (let i = 0; i < 4_000; i++) {
      const delay = tracker.delayMs;
      if (i % 20 === 0) {
        tracker.record(delay, delay + 1, true);
      } else {
        tracker.record(delay, 2, false);
      }
    }
    expect(tracker.delayMs).toBeLessThan(3);
    expect(tracker.count).toBe(4_000);
  });

  it('does not throw the delay past the latencies it saw when every call in flight outlives it (a stall)', () => {
    const tracker = new HedgeDelayTracker(5, CONFIG);
    // 30 calls in a row answer after 40 ms (a 40 ms stall of the client): doubled steps stop at 40 ms.
    for (let i = 0; i < 30; i++) tracker.record(tracker.delayMs, 40, false);
    expect(tracker.delayMs).toBeGreaterThan(35);
    expect(tracker.delayMs).toBeLessThan(40 * Math.exp(0.05));
  });

  it('ignores a superseded attempt that had not outlived its delay, and keeps within [minMs, maxMs]', () => {
    const tracker = new HedgeDelayTracker(10, { ...CONFIG, minMs: 4, maxMs: 50 });
    tracker.record(10, 5, true);
    expect(tracker.count).toBe(0);
    expect(tracker.delayMs).toBeCloseTo(10, 10);
    for (let i = 0; i < 1_000; i++) tracker.record(tracker.delayMs, 1_000, false);
    expect(tracker.delayMs).toBeCloseTo(50, 6);
    for (let i = 0; i < 5_000; i++) tracker.record(tracker.delayMs, 0.1, false);
    expect(tracker.delayMs).toBeCloseTo(4, 6);
    expect(new HedgeDelayTracker(0, CONFIG).delayMs).toBe(1);
  });

  it('moves by exactly the configured log steps, doubling the up step for each call in a row that outlives it', () => {
    const up = 0.05 * 0.95;
    const down = 0.05 * 0.05;
    const tracker = new HedgeDelayTracker(10, CONFIG);
    tracker.record(10, 11, false);
    expect(tracker.delayMs).toBeCloseTo(10 * Math.exp(up), 10);
    tracker.record(tracker.delayMs, 1, false);
    expect(tracker.delayMs).toBeCloseTo(10 * Math.exp(up - down), 10);
    for (let i = 0; i < 7; i++) tracker.record(tracker.delayMs, 1_000, false);
    // 1, 2, 4, 8, 16, then 16 again: the doubling is capped.
    expect(tracker.delayMs).toBeCloseTo(10 * Math.exp(up - down + up * (1 + 2 + 4 + 8 + 16 + 16 + 16)), 6);
  });
});
