import { describe, expect, it } from 'vitest';
import { parseScriptCall, scriptedAttempt } from '../../bench/lib/latency-script.js';
import { pairedTimeToAdapt } from '../../bench/lib/paired-time-to-adapt.js';

describe('the latency script of bench:adaptive', () => {
  it('gives an attempt the same draw every time, whoever asks', () => {
    for (let index = 0; index < 50; index++) {
      expect(scriptedAttempt(7, 1, index, 0, 0.05)).toEqual(scriptedAttempt(7, 1, index, 0, 0.05));
    }
  });

  it('draws the slow share per attempt, independently of the call, the phase and the seed', () => {
    const share = (seed: number, phase: number, attempt: number): number => {
      let slow = 0;
      for (let index = 0; index < 20_000; index++) {
        if (scriptedAttempt(seed, phase, index, attempt, 0.05).slow) slow++;
      }
      return slow / 20_000;
    };
    for (const [seed, phase, attempt] of [
      [1, 0, 0],
      [1, 0, 1],
      [2, 2, 0],
    ] as const) {
      // 5% of 20,000 is 1,000 ± 31: four standard deviations either side.
      expect(share(seed, phase, attempt)).toBeGreaterThan(0.0438);
      expect(share(seed, phase, attempt)).toBeLessThan(0.0562);
    }
    let both = 0;
    let sameSeedOtherPhase = 0;
    for (let index = 0; index < 20_000; index++) {
      const first = scriptedAttempt(1, 0, index, 0, 0.05).slow;
      if (first && scriptedAttempt(1, 0, index, 1, 0.05).slow) both++;
      if (first && scriptedAttempt(1, 1, index, 0, 0.05).slow) sameSeedOtherPhase++;
    }
    // Independent draws: 0.25% of 20,000 is 50 ± 7.
    expect(both).toBeGreaterThan(22);
    expect(both).toBeLessThan(78);
    expect(sameSeedOtherPhase).toBeGreaterThan(22);
    expect(sameSeedOtherPhase).toBeLessThan(78);
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
