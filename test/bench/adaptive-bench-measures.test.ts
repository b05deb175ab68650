import { describe, expect, it } from 'vitest';
import { blockDraw, parseScriptCall, scriptedAttempt } from '../../bench/lib/latency-script.js';
import { lastPairedWindowOver, pairedTimeToAdapt } from '../../bench/lib/paired-time-to-adapt.js';
import { pausesMet } from '../../bench/lib/pauses-met.js';
import { slidingTimeToAdapt, type TimedCall } from '../../bench/lib/sliding-time-to-adapt.js';

describe('the latency script of bench:adaptive', () => {
  it('gives an attempt the same draw every time, whoever asks', () => {
    for (let index = 0; index < 250; index++) {
      for (const attempt of [0, 1]) {
        const a = scriptedAttempt(7, 1, index, attempt, 0.05);
        const b = scriptedAttempt(7, 1, index, attempt, 0.05);
        expect([a.slow, a.fastFactor, a.random()]).toEqual([b.slow, b.fastFactor, b.random()]);
      }
    }
  });

  it('makes exactly the share of first attempts slow in every block of 100 calls, at positions that vary', () => {
    const positions = new Set<string>();
    for (const [seed, phase] of [
      [1, 0],
      [1, 2],
      [9, 1],
    ] as const) {
      for (let block = 0; block < 15; block++) {
        const slow: number[] = [];
        for (let i = 0; i < 100; i++) {
          if (scriptedAttempt(seed, phase, block * 100 + i, 0, 0.05).slow) slow.push(i);
        }
        expect(slow).toHaveLength(5);
        positions.add(slow.join(','));
      }
    }
    expect(positions.size).toBe(45); // no two blocks alike
    // Runs come now and then: over many blocks, two slow first attempts in a row.
    let pairs = 0;
    for (let index = 1; index < 100_000; index++) {
      if (scriptedAttempt(3, 0, index, 0, 0.05).slow && scriptedAttempt(3, 0, index - 1, 0, 0.05).slow)
        pairs++;
    }
    // About 0.05 × 4/99 of the calls: 202 ± 14.
    expect(pairs).toBeGreaterThan(140);
    expect(pairs).toBeLessThan(265);
  });

  it('draws a hedge slow independently, with the share as its probability', () => {
    let slow = 0;
    let both = 0;
    for (let index = 0; index < 20_000; index++) {
      const hedge = scriptedAttempt(1, 0, index, 1, 0.05).slow;
      if (hedge) slow++;
      if (hedge && scriptedAttempt(1, 0, index, 0, 0.05).slow) both++;
    }
    // 5% of 20,000 is 1,000 ± 31; both slow, 0.25%: 50 ± 7 (four standard deviations either side).
    expect(slow).toBeGreaterThan(876);
    expect(slow).toBeLessThan(1124);
    expect(both).toBeGreaterThan(22);
    expect(both).toBeLessThan(78);
  });

  it('keeps the fast factor in [0.5, 1.5)', () => {
    for (let index = 0; index < 1000; index++) {
      const { fastFactor } = scriptedAttempt(3, 0, index, 0, 0.05);
      expect(fastFactor).toBeGreaterThanOrEqual(0.5);
      expect(fastFactor).toBeLessThan(1.5);
    }
  });

  it("draws once per block, the same every time, apart from other tags' and blocks' draws", () => {
    const draws = Array.from({ length: 2_000 }, (_, block) => blockDraw(7, 1, block, 0xb075));
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(blockDraw(7, 1, 3, 0xb075)).toBe(draws[3]);
    // About uniform: a tenth of the blocks below 0.1 (the noisy ones of simulate:adaptive's --noise-burst-calls).
    const low = draws.filter((x) => x < 0.1).length;
    expect(low).toBeGreaterThan(140);
    expect(low).toBeLessThan(260);
    expect(blockDraw(7, 1, 3, 0xb10c)).not.toBe(draws[3]);
    expect(blockDraw(7, 2, 3, 0xb075)).not.toBe(draws[3]);
    expect(blockDraw(8, 1, 3, 0xb075)).not.toBe(draws[3]);
  });

  it('reads the call header, and refuses what is not one', () => {
    expect(parseScriptCall('2:1499')).toEqual({ phase: 2, index: 1499 });
    expect(parseScriptCall(undefined)).toBeUndefined();
    expect(parseScriptCall('2:')).toBeUndefined();
    expect(parseScriptCall('a:1')).toBeUndefined();
  });
});

describe('the paired time to adapt of bench:adaptive', () => {
  const fast = (n: number): number[] => Array.from({ length: n }, (_, i) => 2 + (i % 3));
  const options = { windowCalls: 100, ratio: 1.15 };

  it('is 0 when every window is within the reference', () => {
    expect(pairedTimeToAdapt(fast(500), fast(500), options)).toBe(0);
  });

  it('does not count calls that were slow for the reference too', () => {
    const calls = fast(500);
    const reference = fast(500);
    for (const i of [300, 310, 320]) {
      calls[i] = 201;
      reference[i] = 201;
    }
    expect(pairedTimeToAdapt(calls, reference, options)).toBe(0);
  });

  it('ends after the last window over the reference, in calls', () => {
    const calls = fast(500);
    for (const i of [10, 20, 30]) calls[i] = 50;
    // The p99 of 100 calls is the second slowest: the last window holding two of them starts at call 20 (windows
    // step by 10) and ends at call 120.
    expect(pairedTimeToAdapt(calls, fast(500), options)).toBe(120);
  });

  it('is undefined when the last window is over, or the series are shorter than a window', () => {
    const calls = fast(500);
    for (const i of [490, 495, 499]) calls[i] = 50;
    expect(pairedTimeToAdapt(calls, fast(500), options)).toBeUndefined();
    expect(pairedTimeToAdapt(fast(50), fast(50), options)).toBeUndefined();
  });

  it('counts a failed call (+∞) as over', () => {
    const calls = fast(500);
    for (const i of [10, 20, 30]) calls[i] = Number.POSITIVE_INFINITY;
    expect(pairedTimeToAdapt(calls, fast(500), options)).toBe(120);
  });

  it('names the last window over, with its limit', () => {
    const calls = fast(500);
    for (const i of [10, 20, 30]) calls[i] = 50;
    // The reference's p99 over any window of fast(500) is 4 (its slowest calls), so the limit is 4 × 1.15.
    expect(lastPairedWindowOver(calls, fast(500), options)).toEqual({ from: 20, to: 120, limitMs: 4 * 1.15 });
    expect(lastPairedWindowOver(fast(500), fast(500), options)).toBeUndefined();
  });
});

describe('the time to adapt against a fixed limit, of bench:adaptive and simulate:adaptive', () => {
  /** A call every 10 ms for `ms` (100 per 1 s window), each 3 ms, except `slow` (start ms → latency). */
  const phase = (ms: number, slow: Record<number, number> = {}): TimedCall[] =>
    Array.from({ length: ms / 10 }, (_, i) => ({ startMs: i * 10, latencyMs: slow[i * 10] ?? 3 }));

  it('is 0 when every window is within the limit', () => {
    expect(slidingTimeToAdapt(phase(5000), 10)).toEqual({ timeToAdapt: 0 });
  });

  it('ends after the last window over the limit, with that window and its calls over the limit', () => {
    // The p99 of 100 calls is the second slowest: a window is over while it holds both slow calls. The last one
    // starts at exactly 2.0 s (windows step by 0.1 s from 0, without drift) and ends at 3.0 s.
    const result = slidingTimeToAdapt(phase(5000, { 2000: 50, 2300: 40 }), 10);
    expect(result).toEqual({ timeToAdapt: 3, fromS: 2, overMs: [50, 40] });
  });

  it('is undefined when the last window is over, or the phase is shorter than a window', () => {
    // The last window is [3.9 s, 4.9 s): the last to end before the last call starts.
    const over = slidingTimeToAdapt(phase(5000, { 3950: 50, 3980: 60 }), 10);
    expect(over.timeToAdapt).toBeUndefined();
    expect(over.overMs).toEqual([60, 50]);
    expect(slidingTimeToAdapt(phase(900), 10).timeToAdapt).toBeUndefined();
    expect(slidingTimeToAdapt([], 10).timeToAdapt).toBeUndefined();
  });

  it('takes calls in any order and skips windows without calls', () => {
    // Calls in [0, 1.5 s) and [3 s, 5 s). The window [0.6 s, 1.6 s) holds 90 calls, so its p99 is its slowest,
    // the one at 0.6 s; the windows from 1.5 s to 2 s hold no call.
    const calls = [
      ...phase(1500, { 500: 50, 600: 40 }),
      ...phase(2000).map((c) => ({ ...c, startMs: c.startMs + 3000 })),
    ];
    expect(slidingTimeToAdapt(calls.reverse(), 10)).toEqual({ timeToAdapt: 1.6, fromS: 0.6, overMs: [40] });
  });
});

describe('the pauses the calls over a limit met, in bench:adaptive', () => {
  const pauses = [
    { startMs: 100, durationMs: 10 },
    { startMs: 200, durationMs: 25 },
  ];

  it('counts the calls in flight during a pause, and the longest pause one of them met', () => {
    const calls = [
      { startMs: 95, durationMs: 20 }, // across the first pause
      { startMs: 205, durationMs: 3 }, // inside the second
      { startMs: 150, durationMs: 20 }, // between them
    ];
    expect(pausesMet(calls, pauses)).toEqual({ calls: 2, longestMs: 25 });
  });

  it('does not count a call that ended as a pause began, or began as it ended', () => {
    const calls = [
      { startMs: 90, durationMs: 10 },
      { startMs: 110, durationMs: 5 },
    ];
    expect(pausesMet(calls, pauses)).toEqual({ calls: 0, longestMs: 0 });
    expect(pausesMet(calls, [])).toEqual({ calls: 0, longestMs: 0 });
  });
});
