import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing/seeded-random.js';
import {
  AdaptiveThrottleState,
  checkAdaptiveThrottleRuleOptions,
  DEFAULT_ADAPTIVE_THROTTLE_RULE,
  rejectionProbability,
  resolveAdaptiveThrottleRule,
} from '../../src/throttle/adaptive-throttle-rule.js';

const rule = (o: Partial<typeof DEFAULT_ADAPTIVE_THROTTLE_RULE> = {}) => ({
  ...DEFAULT_ADAPTIVE_THROTTLE_RULE,
  ...o,
});

describe('rejectionProbability (the SRE rule)', () => {
  it('is max(0, (requests − k·accepts) / (requests + padding))', () => {
    expect(rejectionProbability(100, 50, 2, 8)).toBe(0);
    expect(rejectionProbability(100, 60, 2, 8)).toBe(0);
    expect(rejectionProbability(100, 25, 2, 8)).toBeCloseTo(50 / 108, 12);
    expect(rejectionProbability(100, 0, 2, 1)).toBeCloseTo(100 / 101, 12);
    expect(rejectionProbability(100, 25, 1.5, 8)).toBeCloseTo(62.5 / 108, 12);
    expect(rejectionProbability(0, 0, 2, 8)).toBe(0);
  });
});

describe('AdaptiveThrottleState', () => {
  it('never rejects on a cold start, whatever the random number', () => {
    const state = new AdaptiveThrottleState();
    expect(state.probability(0)).toBe(0);
    expect(state.decide(0, 0)).toBe(-1);
  });

  it('pads the denominator: one failure gives 1/9 with padding 8, 1/2 with the bare formula', () => {
    const padded = new AdaptiveThrottleState(rule());
    padded.recordResponse(0, false);
    expect(padded.probability(0)).toBeCloseTo(1 / 9, 12);
    const bare = new AdaptiveThrottleState(rule({ padding: 1 }));
    bare.recordResponse(0, false);
    expect(bare.probability(0)).toBe(0.5);
    // With padding 8 it takes 8 straight failures to reach one half.
    for (let i = 1; i < 8; i++) padded.recordResponse(0, false);
    expect(padded.probability(0)).toBe(0.5);
  });

  it('rejects with the rule’s probability and counts a rejection as a request', () => {
    const state = new AdaptiveThrottleState(rule());
    for (let i = 0; i < 8; i++) state.recordResponse(0, false); // P = 8/16
    expect(state.decide(0, 0.49)).toBe(0.5);
    expect(state.requests(0)).toBe(9);
    expect(state.accepts(0)).toBe(0);
    expect(state.decide(0, 0.99)).toBe(-1); // P = 9/17 now; 0.99 is above it
    expect(state.requests(0)).toBe(9); // a request let through counts when it is answered
  });

  it('does not reject while accepts keep up with requests / k', () => {
    const state = new AdaptiveThrottleState(rule());
    for (let i = 0; i < 1000; i++) state.recordResponse(i, i % 2 === 0); // half accepted: requests = 2 × accepts
    expect(state.probability(1000)).toBe(0);
    state.recordResponse(1000, false);
    expect(state.probability(1000)).toBeGreaterThan(0);
  });

  it('forgets counts once they leave the window, bin by bin', () => {
    const state = new AdaptiveThrottleState(rule({ windowMs: 10_000, windowBins: 10 }));
    for (let i = 0; i < 100; i++) state.recordResponse(0, false);
    state.recordResponse(5_000, false);
    expect(state.requests(9_999)).toBe(101);
    expect(state.requests(10_000)).toBe(1);
    expect(state.probability(15_000)).toBe(0);
  });

  it('under overload lets through about k × what the backend accepts', () => {
    // Offered 100 requests/s; the backend accepts at most 20 per second and rejects the rest.
    const state = new AdaptiveThrottleState(rule({ windowMs: 30_000 }));
    const random = seededRandom(7);
    let letThroughLastMinute = 0;
    let acceptedLastMinute = 0;
    for (let second = 0; second < 120; second++) {
      let accepted = 0;
      for (let i = 0; i < 100; i++) {
        const now = second * 1000 + i * 10;
        if (state.decide(now, random()) >= 0) continue;
        const ok = accepted < 20;
        if (ok) accepted += 1;
        state.recordResponse(now, ok);
        if (second >= 60) {
          letThroughLastMinute += 1;
          if (ok) acceptedLastMinute += 1;
        }
      }
    }
    expect(acceptedLastMinute).toBe(60 * 20);
    const ratio = letThroughLastMinute / acceptedLastMinute;
    expect(ratio).toBeGreaterThan(1.8);
    expect(ratio).toBeLessThan(2.3);
  });

  it('after an outage, lets through at least twice as much per window until it stops rejecting', () => {
    // Local rejections count as requests, so the let-through share (1 − P) at most doubles per window.
    const state = new AdaptiveThrottleState(rule({ windowMs: 10_000, windowBins: 10 }));
    for (let ms = 0; ms < 10_000; ms += 10) state.recordResponse(ms, false);
    const random = seededRandom(1);
    const atWindowEnd: number[] = [state.probability(10_000)];
    for (let ms = 10_000; ms < 80_000; ms += 10) {
      if (state.decide(ms, random()) < 0) state.recordResponse(ms, true);
      if ((ms + 10) % 10_000 === 0) atWindowEnd.push(state.probability(ms + 10));
    }
    expect(atWindowEnd[0]).toBeGreaterThan(0.99);
    for (let i = 1; i < atWindowEnd.length; i++) {
      const before = 1 - atWindowEnd[i - 1]!;
      const after = 1 - atWindowEnd[i]!;
      if (after < 1) expect(after).toBeGreaterThan(1.5 * before);
    }
    expect(atWindowEnd.at(-1)).toBe(0);
    expect(atWindowEnd[1]).toBeGreaterThan(0); // still rejecting one window after the backend came back
  });

  it('caps the probability at maxRejectionProbability', () => {
    const state = new AdaptiveThrottleState(rule({ maxRejectionProbability: 0.9 }));
    for (let i = 0; i < 1000; i++) state.recordResponse(0, false);
    expect(state.probability(0)).toBe(0.9);
    expect(state.decide(0, 0.9)).toBe(-1);
    expect(state.decide(0, 0.899)).toBe(0.9);
  });
});

describe('AdaptiveThrottleState: retries and hedges', () => {
  it('rejects every attempt after the first while the probability is above 0, by default', () => {
    const state = new AdaptiveThrottleState(rule({}));
    expect(state.decide(0, 0.999, true)).toBe(-1); // P = 0: a retry goes
    state.recordResponse(0, false); // P = 1/9
    expect(state.decide(0, 0.999, false)).toBe(-1); // a first attempt goes with probability 8/9
    expect(state.decide(0, 0.999, true)).toBe(1); // a retry does not
    expect(state.requests(0)).toBe(2); // the rejected retry counts as a request
  });

  it("with retries: 'same-probability', treats them like first attempts (the SRE rule as written)", () => {
    const state = new AdaptiveThrottleState(rule({ retries: 'same-probability' }));
    state.recordResponse(0, false);
    expect(state.decide(0, 0.999, true)).toBe(-1);
    expect(state.decide(0, 0, true)).toBeCloseTo(1 / 9, 10);
  });

  it('lets traffic back within two windows of the backend accepting again', () => {
    const state = new AdaptiveThrottleState(rule({}));
    const random = seededRandom(5);
    // 10 s of outage at 20 requests/s: every one refused.
    for (let ms = 0; ms < 10_000; ms += 50) state.recordResponse(ms, false);
    expect(state.probability(10_000)).toBeGreaterThan(0.6);
    // The backend is back: whatever is let through is accepted.
    let rejected = 0;
    for (let ms = 10_000; ms < 12_000; ms += 50) {
      if (state.decide(ms, random()) >= 0) rejected++;
      else state.recordResponse(ms, true);
    }
    expect(rejected).toBeGreaterThan(0);
    expect(state.probability(12_000)).toBe(0);
  });
});

describe('resolveAdaptiveThrottleRule', () => {
  it('defaults to k 2, a 1 s window in 100 bins, padding 8, no cap, and retries rejected while rejecting', () => {
    expect(resolveAdaptiveThrottleRule('x', undefined)).toEqual({
      k: 2,
      windowMs: 1_000,
      windowBins: 100,
      padding: 8,
      maxRejectionProbability: 1,
      retries: 'reject-while-throttling',
    });
  });

  it('names the bad option', () => {
    expect(() => resolveAdaptiveThrottleRule('where', { k: 0.5 })).toThrow(
      /where\.k must be a number in \[1, 1000\], got 0.5/,
    );
    expect(() => resolveAdaptiveThrottleRule('where', { windowMs: 10 })).toThrow(/windowMs/);
    expect(() => resolveAdaptiveThrottleRule('where', { windowBins: 2.5 })).toThrow(
      /windowBins must be an integer/,
    );
    expect(() => checkAdaptiveThrottleRuleOptions('where', { bins: 10 })).toThrow(
      /where\.bins was renamed to "windowBins"/,
    );
    expect(() => resolveAdaptiveThrottleRule('where', { retries: 'never' as never })).toThrow(
      /where\.retries must be 'reject-while-throttling' or 'same-probability', got "never"/,
    );
    expect(() => resolveAdaptiveThrottleRule('where', { padding: 0 })).toThrow(/padding/);
    expect(() => resolveAdaptiveThrottleRule('where', { maxRejectionProbability: 0 })).toThrow(
      /where\.maxRejectionProbability must be a number in \(0, 1\], got 0/,
    );
  });
});
