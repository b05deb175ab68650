import { describe, expect, it } from 'vitest';
import {
  HedgeDelayTracker,
  type HedgeDelayTrackerConfig,
  upThreshold,
} from '../../src/hedging/hedge-delay-tracker.js';
import { seededRandom } from '../../src/testing/index.js';

const CONFIG: HedgeDelayTrackerConfig = {
  exceedance: 0.05,
  recentCalls: 400,
  shiftCalls: 50,
  shiftRun: 5,
  shiftRatio: 4,
  gapRatio: 2,
  minCalls: 20,
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

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('HedgeDelayTracker', () => {
  it('is the order statistic that leaves the target share of the window above it', () => {
    const tracker = new HedgeDelayTracker(50, { ...CONFIG, exceedance: 0.1, recentCalls: 100, minCalls: 1 });
    // 1..100 ms (no gap anywhere): a = ⌊0.1 × 101⌋ − 1 = 9 attempts above, so the 91st.
    for (let ms = 1; ms <= 100; ms++) tracker.record(1_000, ms, false);
    expect(tracker.delayMs).toBe(91);
    // The window slides: 100 more at 1..100 ms replace the first ones one for one.
    for (let ms = 100; ms >= 1; ms--) tracker.record(1_000, ms, false);
    expect(tracker.delayMs).toBe(91);
  });

  it('holds its initial delay until minCalls attempts have answered, and stays within [minMs, maxMs]', () => {
    const tracker = new HedgeDelayTracker(30, { ...CONFIG, minMs: 4, maxMs: 50 });
    for (let i = 0; i < 19; i++) tracker.record(30, 2, false);
    expect(tracker.delayMs).toBe(30);
    tracker.record(30, 2, false);
    expect(tracker.delayMs).toBe(4);
    expect(new HedgeDelayTracker(0, CONFIG).delayMs).toBe(1);
    expect(new HedgeDelayTracker(1e9, CONFIG).delayMs).toBe(60_000);
    const high = new HedgeDelayTracker(30, { ...CONFIG, maxMs: 50, minCalls: 1 });
    for (let i = 0; i < 100; i++) high.record(60_000, 1_000 + i, false);
    expect(high.delayMs).toBe(50);
    // Pinned at a bound, a "shift" past it would change nothing: the window is not restarted.
    expect(high.shiftsDetected).toBe(0);
    const low = new HedgeDelayTracker(30, { ...CONFIG, minMs: 1 });
    for (let i = 0; i < 200; i++) low.record(low.delayMs, 0.05, false);
    expect(low.delayMs).toBe(1);
    expect(low.shiftsDetected).toBe(0);
  });

  it('ignores a superseded attempt that had not outlived its delay', () => {
    const tracker = new HedgeDelayTracker(10, CONFIG);
    tracker.record(10, 5, true);
    tracker.record(10, 10, true);
    expect(tracker.count).toBe(0);
    tracker.record(10, 11, true);
    expect(tracker.count).toBe(1);
  });

  it('holds the share of first attempts that outlive the delay near the target on a continuous distribution', () => {
    const random = seededRandom(1);
    const tracker = new HedgeDelayTracker(100, CONFIG);
    // Exponential latencies, mean 10 ms: the p95 is 30 ms.
    const exponential = () => -10 * Math.log(1 - random());
    run(tracker, exponential, 2_000);
    const steady = run(tracker, exponential, 20_000);
    expect(steady.hedged).toBeGreaterThan(0.04);
    expect(steady.hedged).toBeLessThan(0.06);
    expect(mean(steady.delays)).toBeGreaterThan(25);
    expect(mean(steady.delays)).toBeLessThan(35);
    // A continuous tail is no shift: the window is restarted rarely if ever.
    expect(tracker.shiftsDetected).toBeLessThanOrEqual(2);
  });

  it('sits at the top of the fast path when a slow mode holds exactly the target share (the gap)', () => {
    const random = seededRandom(2);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    const steady = run(tracker, regime(random, 2, 200), 5_000);
    const late = steady.delays.slice(1_000);
    // The fast path ends at 3 ms; anything from there to 200 ms hedges the same 5%, and the lowest is best.
    expect(Math.max(...late)).toBeLessThanOrEqual(3);
    expect(Math.min(...late)).toBeGreaterThan(2.8);
    expect(steady.hedged).toBeLessThan(0.06);
    expect(tracker.shiftsDetected).toBe(0);
  });

  it('crosses to the fast path when the slow attempts answered too (no hedge went), instead of staying in the slow mode', () => {
    const tracker = new HedgeDelayTracker(500, { ...CONFIG, minCalls: 1 });
    // The delay was above the slow mode, so every slow first attempt answered at 200 ms: 30 of 400, more than
    // the 19 that step 1 allows above the delay, yet well within the gap rule's tolerance.
    for (let i = 0; i < 400; i++) tracker.record(500, i % 40 < 3 ? 200 : 1 + (i % 7) / 3, false);
    expect(tracker.delayMs).toBe(3);
  });

  describe('a stall taken for a shift up', () => {
    /** A window of 40 (a = 1, up to six attempts above it may be crossed) and a shift detector over 20 calls. */
    const SMALL = { ...CONFIG, recentCalls: 40, shiftCalls: 20 };

    /** A tracker settled on a fast path over 1..3 ms (no slow mode), its window full: its delay is 3 ms. */
    function settled(config: HedgeDelayTrackerConfig = CONFIG): HedgeDelayTracker {
      const tracker = new HedgeDelayTracker(3, config);
      for (let i = 0; i < config.recentCalls; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      expect(tracker.delayMs).toBe(3);
      return tracker;
    }

    it('is taken back when most calls after it are back under the old delay, without the stall victims', () => {
      const tracker = settled();
      // A 30 ms pause holds the six calls in flight: six in a row outlive the delay, a shift up.
      for (let i = 0; i < 6; i++) tracker.record(tracker.delayMs, 20 + i, false);
      expect(tracker.shiftsDetected).toBe(1);
      expect(tracker.delayMs).toBeGreaterThan(20);
      // Then the calls are as fast as before: 2 × shiftRun calls after the shift (the sixth victim and nine more),
      // it is taken back.
      for (let i = 0; i < 8; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      expect(tracker.stallsDetected).toBe(0);
      tracker.record(tracker.delayMs, 2, false);
      expect(tracker.stallsDetected).toBe(1);
      // The window is the one before, plus the calls since; the five victims that set it off are gone (the sixth
      // came after the shift and is one straggler, below which the delay drops).
      expect(tracker.delayMs).toBe(3);
    });

    it('drops the run that set it off and the victims after it: the other calls since stay, the window before too', () => {
      // A window of 40 (a = 1, tolerance 6 above): eight victims are more than the tolerance, three are not.
      const tracker = settled(SMALL);
      // Eight victims: the fifth sets the shift off; the three after it count among the ten that decide.
      for (let i = 0; i < 8; i++) tracker.record(tracker.delayMs, 20 + i, false);
      expect(tracker.shiftsDetected).toBe(1);
      // Seven calls back at 1, 2, 3 ms: seven of ten no slower than the old delay (3 ms itself included).
      for (let i = 0; i < 7; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      expect(tracker.stallsDetected).toBe(1);
      // The window: 35 from before and the seven; the three later victims answered slower than the delay before
      // the run, so they go too. Had the five that set the shift off stayed, eight would lie above 3 ms, past the
      // tolerance, and the delay would be 27.
      expect(tracker.delayMs).toBe(3);
    });

    it('is taken back once most of the last ten are back under, when victims of the stall answer after the run', () => {
      const tracker = settled();
      // Six in a row: the fifth sets the shift off. Four more victims answer in the same burst, then the calls are
      // fast again.
      for (let i = 0; i < 6; i++) tracker.record(tracker.delayMs, 20 + i, false);
      for (let i = 0; i < 4; i++) tracker.record(tracker.delayMs, 10 + i, false);
      for (let i = 0; i < 5; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      // Ten calls since the shift, five of them back under 3 ms: not most.
      expect(tracker.stallsDetected).toBe(0);
      tracker.record(tracker.delayMs, 2, false);
      // The last ten: four victims and six back under.
      expect(tracker.stallsDetected).toBe(1);
      // None of the ten victims stays in the window (four of them would hold the delay at 10 ms).
      expect(tracker.delayMs).toBe(3);
    });

    it('judges the calls after it against the delay from before the run, not one its first victims moved', () => {
      const tracker = settled(SMALL);
      // Four earlier victims, apart.
      for (let i = 0; i < 4; i++) {
        tracker.record(tracker.delayMs, 20, false);
        for (let j = 0; j < 3; j++) tracker.record(tracker.delayMs, 1 + j, false);
      }
      expect(tracker.delayMs).toBe(3);
      // The run: its third victim puts seven above 3 ms, and the delay moves to theirs before the fifth sets the
      // shift off.
      const delays: number[] = [];
      for (let i = 0; i < 5; i++) {
        tracker.record(tracker.delayMs, 20 + i, false);
        delays.push(tracker.delayMs);
      }
      expect(delays[3]).toBeGreaterThanOrEqual(20);
      expect(tracker.shiftsDetected).toBe(1);
      // Three victims at 10 ms answer after the run, then seven calls back under 3 ms.
      for (let i = 0; i < 3; i++) tracker.record(tracker.delayMs, 10, false);
      for (let i = 0; i < 7; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      expect(tracker.stallsDetected).toBe(1);
      // Judged against 20 ms, the three would have counted as back under and stayed, holding the delay at 10 ms.
      expect(tracker.delayMs).toBe(3);
    });

    describe('a burst of three, too short for a shift up', () => {
      /** A window of 40 (a = 1) holding four victims of 20 ms apart: six attempts above may be crossed. */
      function withFourVictims(): HedgeDelayTracker {
        const tracker = settled(SMALL);
        for (let i = 0; i < 4; i++) {
          tracker.record(tracker.delayMs, 20, false);
          for (let j = 0; j < 3; j++) tracker.record(tracker.delayMs, 1 + j, false);
        }
        expect(tracker.delayMs).toBe(3);
        return tracker;
      }

      it('is taken out of the window once most of the next ten calls are back under the delay', () => {
        const tracker = withFourVictims();
        for (let i = 0; i < 3; i++) tracker.record(tracker.delayMs, 21 + i, false);
        // Seven attempts above 3 ms: more than a crossing may leave, so the delay is at the victims'.
        expect(tracker.delayMs).toBeGreaterThanOrEqual(20);
        for (let i = 0; i < 10; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
        expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([0, 1]);
        expect(tracker.delayMs).toBe(3);
      });

      it('stays when the calls after it are slower than the delay before it', () => {
        const tracker = withFourVictims();
        for (let i = 0; i < 3; i++) tracker.record(tracker.delayMs, 21 + i, false);
        for (let i = 0; i < 10; i++) tracker.record(tracker.delayMs, i % 2 === 0 ? 2 : 15, false);
        expect(tracker.stallsDetected).toBe(0);
        expect(tracker.delayMs).toBeGreaterThanOrEqual(15);
      });

      it('keeps the attempts of the run that a hedge superseded: the hedge did help them', () => {
        const tracker = withFourVictims();
        for (let i = 0; i < 3; i++) tracker.record(tracker.delayMs, 30, true);
        for (let i = 0; i < 10; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
        expect(tracker.stallsDetected).toBe(1);
        // Seven above 3 ms still (the four victims and the three superseded): more than a crossing may leave.
        expect(tracker.delayMs).toBeGreaterThanOrEqual(20);
      });

      it('keeps the calls after it that a hedge superseded, when it is taken out', () => {
        const tracker = withFourVictims();
        for (let i = 0; i < 3; i++) tracker.record(tracker.delayMs, 21 + i, false);
        // Ten calls after the run: seven back under 3 ms, and three that a hedge superseded, apart.
        for (let i = 0; i < 10; i++) {
          if (i % 3 === 1) tracker.record(tracker.delayMs, tracker.delayMs + 10, true);
          else tracker.record(tracker.delayMs, 1 + (i % 3), false);
        }
        expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([0, 1]);
        // The run is gone; the three superseded calls stay beside the four earlier victims: seven above 3 ms, more
        // than a crossing may leave, so the delay is the victims'. (Copying any other ten calls than those since
        // the run, the window would hold the four victims alone, and the delay would cross down to 3 ms.)
        expect(tracker.delayMs).toBe(20);
      });

      it('needs three in a row: two are left to the window', () => {
        const tracker = withFourVictims();
        for (let i = 0; i < 2; i++) tracker.record(tracker.delayMs, 21 + i, false);
        tracker.record(tracker.delayMs, 2, false);
        tracker.record(tracker.delayMs, 22, false);
        for (let i = 0; i < 10; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
        expect(tracker.stallsDetected).toBe(0);
        expect(tracker.delayMs).toBeGreaterThanOrEqual(20);
      });
    });

    describe("answers that came together, two or more of them late (a pause's victims)", () => {
      /**
       * A tracker settled on a fast path over 4..6 ms with a slow mode at the target share (every 20th call, which a
       * hedge supersedes), its window full, its calls answering `spacingMs` apart (`gapsMs`: in turn; unless a call
       * says otherwise): its delay is the fast path's top, 6 ms. A call was sent with the delay in force (a pause's
       * victims: with the delay from before it, `delayUsedMs`, as they were all in flight).
       */
      function settledInTime(gapsMs: number | number[] = 5): {
        tracker: HedgeDelayTracker;
        call: (latencyMs: number, gapMs?: number, delayUsedMs?: number) => void;
      } {
        const tracker = new HedgeDelayTracker(6, CONFIG);
        const gaps = typeof gapsMs === 'number' ? [gapsMs] : gapsMs;
        let t = 0;
        let i = 0;
        const call = (
          latencyMs: number,
          gapMs = gaps[i++ % gaps.length] as number,
          delayUsedMs = tracker.delayMs,
        ) => {
          t += gapMs;
          tracker.record(delayUsedMs, latencyMs, latencyMs > delayUsedMs + 50, t);
        };
        for (let k = 0; k < CONFIG.recentCalls; k++) call(k % 20 === 7 ? 200 : 4 + (k % 3));
        expect(tracker.delayMs).toBe(6);
        return { tracker, call };
      }

      it('are taken out of the window once most of the next ten calls are back under the delay', () => {
        const { tracker, call } = settledInTime();
        // Two victims, both sent with the delay at 6 ms, answer in the same millisecond at 7 ms: the top of the fast
        // path now, and no stragglers (7 is less than 1.25 × 6).
        call(7);
        call(7, 0, 6);
        expect(tracker.delayMs).toBe(7);
        for (let k = 0; k < 10; k++) call(4 + (k % 3));
        expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([0, 1]);
        expect(tracker.delayMs).toBe(6);
      });

      it('stay when they answered apart: a continuous tail has pairs like them by chance', () => {
        const { tracker, call } = settledInTime();
        call(7);
        call(7, 5, 6);
        for (let k = 0; k < 10; k++) call(4 + (k % 3));
        expect(tracker.stallsDetected).toBe(0);
        expect(tracker.delayMs).toBe(7);
      });

      it('stay when every answer comes together (a frozen clock, or thousands of calls a second)', () => {
        const { tracker, call } = settledInTime(0);
        // The run of answers together is as long as the window here, and longer runs are no rarer.
        call(7);
        call(5, 0, 6);
        call(7, 0, 6);
        for (let k = 0; k < 10; k++) call(4 + (k % 3));
        expect(tracker.stallsDetected).toBe(0);
        expect(tracker.delayMs).toBe(7);
      });

      it('stay when the calls after them are slower than the delay before them', () => {
        const { tracker, call } = settledInTime();
        call(7);
        call(7, 0, 6);
        for (let k = 0; k < 10; k++) call(k % 2 === 0 ? 5 : 8);
        expect(tracker.stallsDetected).toBe(0);
        expect(tracker.delayMs).toBe(8);
      });

      it('need two to have answered: a pair with one a hedge superseded stays', () => {
        for (const pair of [
          [300, 7],
          [7, 300],
        ] as const) {
          const { tracker, call } = settledInTime();
          call(pair[0]);
          call(pair[1], 0, 6);
          for (let k = 0; k < 10; k++) call(4 + (k % 3));
          expect(tracker.stallsDetected).toBe(0);
          expect(tracker.delayMs).toBe(7);
        }
      });

      it('where a quarter of the answers come in pairs, take more together: three late of four, one on time among them', () => {
        // Every fourth answer comes with the one before (regime B of bench:adaptive: 0.23-0.26 of them).
        const gaps = [5, 5, 5, 0];
        const burst = (latencies: readonly number[]) => {
          const { tracker, call } = settledInTime(gaps);
          call(latencies[0] as number, 5, 6);
          for (const latency of latencies.slice(1)) call(latency, 0, 6);
          const top = tracker.delayMs;
          for (let k = 0; k < 10; k++) call(4 + (k % 3), 5);
          return [top, tracker.stallsDetected, tracker.delayMs];
        };
        // Two late together come by chance there: they stay.
        expect(burst([7, 7])).toEqual([7, 0, 7]);
        // Four together, three of them late and one on time: a pause's victims, taken out.
        expect(burst([7, 7, 5, 8])).toEqual([8, 1, 6]);
      });
    });

    it('stands when the calls after it stay slower than the old delay', () => {
      const tracker = settled();
      for (let i = 0; i < 6; i++) tracker.record(tracker.delayMs, 20 + i, false);
      for (let i = 0; i < 30; i++) tracker.record(tracker.delayMs, 10 + (i % 20), false);
      expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([1, 0]);
      expect(tracker.delayMs).toBeGreaterThanOrEqual(25);
    });

    it('stands for good once 4 × shiftRun calls after it were not mostly back under', () => {
      const tracker = settled();
      for (let i = 0; i < 6; i++) tracker.record(tracker.delayMs, 20 + i, false);
      // The sixth victim and eighteen calls at 15 ms, then fast ones from the twentieth call since the shift on: at
      // the twentieth the last ten were not mostly back under, and it stands (five calls later they would be).
      for (let i = 0; i < 18; i++) tracker.record(tracker.delayMs, 15, false);
      for (let i = 0; i < 20; i++) tracker.record(tracker.delayMs, 1 + (i % 3), false);
      expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([1, 0]);
    });

    it('stands when only a minority of the calls after it are back under the old delay', () => {
      const tracker = settled();
      for (let i = 0; i < 6; i++) tracker.record(tracker.delayMs, 20 + i, false);
      // Five of ten back under 3 ms: not most of them.
      for (let i = 0; i < 10; i++) tracker.record(tracker.delayMs, i % 2 === 0 ? 2 : 15, false);
      expect(tracker.stallsDetected).toBe(0);
      expect(tracker.delayMs).toBeGreaterThan(3);
    });
  });

  describe('a shift up that was an excursion', () => {
    /**
     * One call of a fast path at 1–4 ms with a rare top at 5 ms (`top`: one call in 80; none without), and a slow mode
     * of one call in 20, superseded by its hedge.
     */
    function fastCall(tracker: HedgeDelayTracker, i: number, top = true): void {
      callAt(tracker, i, top && i % 80 === 40 ? 5 : 1 + (i % 4));
    }

    /** Call i: answered at `latencyMs`, but every 20th, which is slow and superseded by its hedge. */
    function callAt(tracker: HedgeDelayTracker, i: number, latencyMs: number): void {
      const delay = tracker.delayMs;
      if (i % 20 === 19) tracker.record(delay, delay + 10, true);
      else tracker.record(delay, latencyMs, false);
    }

    /** A tracker whose full window sits at the fast path's top, 5 ms; `top(i)` says whether call i may read 5. */
    function settled(top: (i: number) => boolean = () => true): HedgeDelayTracker {
      const tracker = new HedgeDelayTracker(5, CONFIG);
      for (let i = 0; i < 400; i++) fastCall(tracker, i, top(i));
      expect([tracker.delayMs, tracker.shiftsDetected]).toEqual([5, 0]);
      return tracker;
    }

    /** `calls` calls slower than the delay: 20–29 ms, answered. */
    function slower(tracker: HedgeDelayTracker, calls: number): void {
      for (let i = 0; i < calls; i++) tracker.record(tracker.delayMs, 20 + (i % 10), false);
    }

    it('is taken back once the last 50 calls are back at the old delay: the window goes back to what it was', () => {
      const tracker = settled();
      // 30 slower calls: the fifth sets off a shift up, and the calls after it stay slow (no stall).
      slower(tracker, 30);
      expect([tracker.shiftsDetected, tracker.stallsDetected]).toEqual([1, 0]);
      expect(tracker.delayMs).toBeGreaterThanOrEqual(20);
      // Then the fast path again, without a call at its rare top among the next 80: a window started again from
      // those calls would put the delay at 4 ms, under the fast path's top, and hedge every call at 5.
      const delays: number[] = [];
      for (let i = 0; i < 80; i++) {
        fastCall(tracker, i, false);
        delays.push(tracker.delayMs);
      }
      expect(tracker.excursionsDetected).toBe(1);
      // The window from before is back, with its calls at 5 ms.
      expect(tracker.delayMs).toBe(5);
      expect(delays.slice(60)).toEqual(Array(20).fill(5));
    });

    it('is not, when the calls since stay slower than the old delay (a real shift up)', () => {
      const tracker = settled();
      slower(tracker, 200);
      expect([tracker.shiftsDetected, tracker.excursionsDetected]).toEqual([1, 0]);
      expect(tracker.delayMs).toBeGreaterThanOrEqual(20);
    });

    it('is taken back to the window from before the first shift up, when the excursion held a second one', () => {
      const tracker = settled();
      slower(tracker, 60);
      // Slower still: a second shift up within the excursion.
      for (let i = 0; i < 30; i++) tracker.record(tracker.delayMs, 60 + (i % 10), false);
      expect(tracker.shiftsDetected).toBe(2);
      for (let i = 0; i < 80; i++) fastCall(tracker, i, false);
      expect(tracker.excursionsDetected).toBe(1);
      expect(tracker.delayMs).toBe(5);
    });

    it('is not, when many of the calls since stay above the old delay (a smaller shift up)', () => {
      const tracker = settled();
      slower(tracker, 30);
      // Calls at 3–8 ms: half of them above the old delay, 5 ms.
      for (let i = 0; i < 100; i++) callAt(tracker, i, 3 + (i % 6));
      expect(tracker.excursionsDetected).toBe(0);
      expect(tracker.delayMs).toBeGreaterThan(5);
    });

    it('is not, when the calls since are much faster than before it: the window before would hold the delay up', () => {
      const tracker = settled();
      slower(tracker, 30);
      // Back at 0.1–0.4 ms, every 20th superseded: no more than their share above 5 ms, but none above 5 / 4.
      for (let i = 0; i < 100; i++) callAt(tracker, i, 0.1 * (1 + (i % 4)));
      expect(tracker.excursionsDetected).toBe(0);
      expect(tracker.delayMs).toBe(CONFIG.minMs);
    });

    it('is not, once the window would have turned over since the shift', () => {
      const tracker = settled();
      slower(tracker, 400);
      for (let i = 0; i < 80; i++) fastCall(tracker, i, false);
      expect(tracker.excursionsDetected).toBe(0);
    });

    it('brings back only the calls of the window before it that would not have turned over since', () => {
      // The window's calls at 5 ms are all among its oldest 150.
      const tracker = settled((i) => i < 150);
      // An excursion of 200 calls, then 60 back at the old delay: 250 calls since the shift up, so only the newest
      // 150 from before come back, and none of those read 5 ms.
      slower(tracker, 200);
      for (let i = 0; i < 60; i++) fastCall(tracker, i, false);
      expect(tracker.excursionsDetected).toBe(1);
      expect(tracker.delayMs).toBe(4);
    });
  });

  describe('stragglers at the top of the fast path', () => {
    /**
     * 400 attempts that all answered: a fast path over 10..30 ms, a slow mode at 400 ms (every 20th, the target
     * share), and `stragglers` in place of fast ones.
     */
    function delayWith(stragglers: number[]): number {
      const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
      for (let i = 0; i < 400; i++) {
        const straggler = i % 20 === 3 ? stragglers[(i - 3) / 20] : undefined;
        tracker.record(500, i % 20 === 7 ? 400 : (straggler ?? 10 + ((i * 8) % 21)), false);
      }
      return tracker.delayMs;
    }

    it('a lone one less than twice the top does not hold the delay up', () => {
      expect(delayWith([])).toBe(30);
      expect(delayWith([56])).toBe(30);
    });

    it('two, each more than 1.25 times the next below, do not either', () => {
      expect(delayWith([45, 58])).toBe(30);
    });

    it('a third does: the delay drops below two at most', () => {
      // Each more than 1.25 times the next below, all three less than twice the fast path's top (30).
      expect(delayWith([37.6, 47.1, 59])).toBe(37.6);
    });

    it('a sparse top, up to three spread over twice the fast top or more, does not hold the delay up', () => {
      expect(delayWith([40, 51, 64])).toBe(30);
      expect(delayWith([61, 62])).toBe(30);
      expect(delayWith([61])).toBe(30);
    });

    it('the delay drops below three of a sparse top at most', () => {
      // Four spread over 35..70: below the top three (to 35), and 35 is within 1.25 times 30, so no straggler.
      expect(delayWith([35, 45, 55, 70])).toBe(35);
      // Five: below the top three, 50 to 80, to 40; 40 is not more than 1.25 times 32.
      expect(delayWith([32, 40, 50, 62, 80])).toBe(40);
    });

    it('drops below one sparse top only, even where the attempts below it make another', () => {
      // A window of 2,000 (a = 99), so that the crossing's limit (the slow mode and ⌊√(a + 1)⌋ = 10 more) would
      // allow a second pass: in a window of 400 it allows 4, fewer than two sparse tops hold.
      const delayWith2000 = (tops: number[]): number => {
        const tracker = new HedgeDelayTracker(30, { ...CONFIG, recentCalls: 2000, minCalls: 1 });
        for (let i = 0; i < 2000; i++) {
          const top = i >= 1800 && i % 20 === 3 ? tops[(i - 1803) / 20] : undefined;
          tracker.record(500, i % 20 === 7 ? 400 : (top ?? 10 + ((i * 8) % 21)), false);
        }
        return tracker.delayMs;
      };
      // Each tier alone is a sparse top over the fast path's top (30).
      expect(delayWith2000([75, 100, 120])).toBe(30);
      expect(delayWith2000([48, 60])).toBe(30);
      // Together: below the top three (75..120, twice 60), to 60; 48 and 60 would be a sparse top of their own,
      // but five attempts spread between the fast path and the slow mode are more than a pause leaves.
      expect(delayWith2000([48, 60, 75, 100, 120])).toBe(60);
    });

    it('drops below a sparse top while no more attempts lie above than a crossing may leave', () => {
      // The crossing comes down from the slow mode (20) past 150 to 64; below the three, 24 lie above 30: the
      // slow mode and ⌊√(a + 1)⌋ = 4 more, the most a crossing may leave.
      expect(delayWith([40, 51, 64, 150])).toBe(30);
    });

    it('a smear of them is part of the cluster and holds it up, as before', () => {
      expect(delayWith([41, 43, 45, 47, 49])).toBe(49);
    });

    it('stays within the gap rule tolerance: no straggler is dropped once too many attempts lie above', () => {
      // 33 slow attempts, as many as the tolerance allows above the delay, and a straggler: dropping it would put
      // 34 above.
      const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
      for (let i = 0; i < 400; i++) {
        tracker.record(500, i === 5 ? 56 : i % 12 === 7 ? 400 : 10 + ((i * 8) % 21), false);
      }
      expect(tracker.delayMs).toBe(56);
    });

    it('a sparse top stays too, once too many attempts lie above', () => {
      const sparse = new Map([
        [5, 40],
        [25, 51],
        [45, 64],
      ]);
      const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
      for (let i = 0; i < 400; i++) {
        tracker.record(500, sparse.get(i) ?? (i % 12 === 7 ? 400 : 10 + ((i * 8) % 21)), false);
      }
      expect(tracker.delayMs).toBe(64);
    });
  });

  it('crosses a cluster between the fast path and the slow mode only when it holds a few attempts, √(a + 1)', () => {
    /** 400 answered attempts: a fast path over 1..3 ms, 20 at 400 ms, and `middle` of them at 8 ms. */
    const delayWith = (middle: number): number => {
      const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
      for (let i = 0; i < 400; i++) {
        tracker.record(500, i % 20 === 7 ? 400 : i % 20 === 11 && i < 20 * middle ? 8 : 1 + (i % 3), false);
      }
      return tracker.delayMs;
    };
    // a = 19 and the slow mode holds 20: crossing to 3 ms may hedge ⌊√20⌋ = 4 attempts more, though the gap
    // rule's tolerance (33 above) would allow 13.
    expect(delayWith(0)).toBe(3);
    expect(delayWith(4)).toBe(3);
    expect(delayWith(5)).toBe(8);
  });

  it.each([
    ['answered, at 380..420 ms', false],
    ['superseded by their hedges', true],
  ])(
    'counts the whole slow mode among the attempts a crossing starts from, its attempts %s',
    (_, superseded) => {
      // 22 slow attempts (a = 19: step 1 is inside the slow mode, three from its bottom) and 4 at 8 ms between: the
      // crossing to 3 ms hedges 26, the slow mode's 22 and ⌊√20⌋ = 4 more. Counted from step 1's estimate (20), it
      // could hedge only 24.
      const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
      for (let i = 0; i < 400; i++) {
        if (i % 18 === 7) tracker.record(5, 380 + i / 10, superseded);
        else tracker.record(500, i % 18 === 11 && i < 72 ? 8 : 1 + (i % 3), false);
      }
      expect(tracker.delayMs).toBe(3);
    },
  );

  it('takes the slowest answered latency when superseded attempts alone are more than its tolerance', () => {
    const tracker = new HedgeDelayTracker(5, { ...CONFIG, minCalls: 1 });
    // A fifth of the first attempts lost to their hedge: far past the gap rule's tolerance.
    for (let i = 0; i < 400; i++) {
      if (i % 5 === 0) tracker.record(5, 9, true);
      else tracker.record(5, 1 + (i % 4), false);
    }
    expect(tracker.delayMs).toBe(4);
  });

  it('keeps its delay while every attempt in the window was superseded, and counts them out as they leave', () => {
    const tracker = new HedgeDelayTracker(7, { ...CONFIG, recentCalls: 40, shiftCalls: 20, minCalls: 1 });
    // Hedges win every race: nothing answered, so nothing says where the delay should be.
    for (let i = 0; i < 40; i++) tracker.record(7, 9, true);
    expect(tracker.delayMs).toBe(7);
    // Answered attempts replace them one for one, and the delay is an order statistic of the answers again (were
    // the superseded ones still counted, nothing would count as answered and the delay would stay at 7).
    for (let i = 0; i < 40; i++) tracker.record(7, 1 + (i % 5), false);
    expect(tracker.delayMs).toBe(5);
    for (let i = 0; i < 36; i++) tracker.record(7, 1 + (i % 4), false);
    expect(tracker.delayMs).toBe(4);
  });

  it('restarts from the last attempts after a shift down, superseded ones included', () => {
    const tracker = new HedgeDelayTracker(30, CONFIG);
    for (let i = 0; i < 400; i++) tracker.record(30, 10 + (i % 20), false);
    expect(tracker.delayMs).toBeGreaterThan(27);
    // Then 2 ms calls, one in 25 superseded (+∞): 2 of the last 50 above a quarter of the delay is a shift down.
    for (let i = 0; i < 50; i++) tracker.record(tracker.delayMs, i % 25 === 24 ? 40 : 2, i % 25 === 24);
    expect(tracker.shiftsDetected).toBe(1);
    // Two superseded in a window of 50 are above a = 1: the delay is the slowest answer, 2 ms, not the old 29.
    expect(tracker.delayMs).toBe(2);
  });

  it('after a shift up keeps only the last few attempts, so the old fast path does not pull the delay back', () => {
    const tracker = new HedgeDelayTracker(3, { ...CONFIG, minCalls: 1 });
    for (let i = 0; i < 400; i++) tracker.record(3, 1 + (i % 3) / 2, false);
    expect(tracker.delayMs).toBe(2);
    for (let i = 0; i < 5; i++) tracker.record(2, 20 + i, false);
    expect(tracker.shiftsDetected).toBe(1);
    // The window is the last 10: five old (1–2 ms) and the five new; the new ones are the top cluster.
    expect(tracker.delayMs).toBe(24);
  });

  it('crosses a lone outlier above the fast path', () => {
    const tracker = new HedgeDelayTracker(30, { ...CONFIG, minCalls: 1 });
    for (let i = 0; i < 400; i++) {
      if (i === 200)
        tracker.record(30, 40, false); // one outlier of the fast path
      else if (i % 20 === 0)
        tracker.record(30, 35, true); // the slow mode, superseded by hedges
      else tracker.record(30, 2 + (i % 10) / 10, false);
    }
    expect(tracker.delayMs).toBeCloseTo(2.9, 10);
  });

  it('follows a shift up within a few calls, and spends few hedges on the way', () => {
    const random = seededRandom(3);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    run(tracker, regime(random, 2, 200), 1_000);
    expect(tracker.delayMs).toBeLessThan(3.1);
    // The fast path moves to 10–30 ms: every call outlives a 3 ms delay.
    const shifted = run(tracker, regime(random, 20, 400), 1_000);
    expect(tracker.shiftsDetected).toBe(1);
    const reached = shifted.delays.findIndex((d) => d > 25);
    expect(reached).toBeGreaterThanOrEqual(0);
    expect(reached).toBeLessThanOrEqual(5); // five calls in a row outlived the delay
    // Then it sits at the new fast path's top.
    const late = shifted.delays.slice(100);
    expect(Math.min(...late)).toBeGreaterThan(28);
    expect(Math.max(...late)).toBeLessThanOrEqual(30);
  });

  it('follows a shift down within tens of calls', () => {
    const random = seededRandom(4);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    run(tracker, regime(random, 20, 400), 1_000);
    expect(tracker.delayMs).toBeGreaterThan(28);
    const shifted = run(tracker, regime(random, 2, 200), 1_000);
    // The slow share is the same 5%, so the share of calls outliving the delay does not change; the detector sees
    // the last 50 calls all below a quarter of it.
    expect(tracker.shiftsDetected).toBe(1);
    const reached = shifted.delays.findIndex((d) => d < 5);
    expect(reached).toBeGreaterThanOrEqual(49);
    expect(reached).toBeLessThan(150);
    expect(Math.max(...shifted.delays.slice(reached))).toBeLessThanOrEqual(3);
  });

  it('without a shift, a halving of the latencies is followed as the window turns over', () => {
    const random = seededRandom(5);
    const tracker = new HedgeDelayTracker(30, CONFIG);
    const exponential = (meanMs: number) => () => -meanMs * Math.log(1 - random());
    run(tracker, exponential(10), 2_000);
    const shifts = tracker.shiftsDetected;
    const halved = run(tracker, exponential(5), 1_000);
    expect(tracker.shiftsDetected).toBe(shifts);
    expect(mean(halved.delays.slice(600))).toBeGreaterThan(12);
    expect(mean(halved.delays.slice(600))).toBeLessThan(18);
  });

  it('is not pushed up by superseded attempts (no ratchet of one hedge latency per call)', () => {
    const tracker = new HedgeDelayTracker(10, CONFIG);
    // Every 20th first attempt is slow and loses to a hedge that answers 1 ms after the delay; the rest take 2 ms.
    for (let i = 0; i < 4_000; i++) {
      const delay = tracker.delayMs;
      if (i % 20 === 0) {
        tracker.record(delay, delay + 1, true);
      } else {
        tracker.record(delay, 2, false);
      }
    }
    expect(tracker.delayMs).toBe(2);
    expect(tracker.count).toBe(4_000);
  });

  it('counts a shift up from more outliving calls than chance allows, even when they do not come in a row', () => {
    const tracker = new HedgeDelayTracker(10, { ...CONFIG, minCalls: 1 });
    for (let i = 0; i < 400; i++) tracker.record(10, 1 + (i % 9), false);
    expect(tracker.delayMs).toBe(9);
    expect(upThreshold(0.05 * 50)).toBe(12);
    // Every other call now takes 20 ms: never 5 in a row, but 13 of the last 50 above the delay after 26 calls.
    let shiftedAfter = -1;
    for (let i = 0; i < 40 && shiftedAfter < 0; i++) {
      tracker.record(tracker.delayMs, i % 2 === 0 ? 20 : 2, false);
      if (tracker.shiftsDetected > 0) shiftedAfter = i + 1;
    }
    expect(shiftedAfter).toBe(25);
  });
});
