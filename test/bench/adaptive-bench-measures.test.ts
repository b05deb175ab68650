import { describe, expect, it } from 'vitest';
import { parseScriptCall, scriptedAttempt } from '../../bench/lib/latency-script.js';
import { pairedTimeToAdapt } from '../../bench/lib/paired-time-to-adapt.js';

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
});
