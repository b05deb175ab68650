import { describe, expect, it } from 'vitest';
import { Backoff, cappedBackoffMs, maxBackoffMs } from '../../src/retry/backoff.js';

const policy = { initialBackoffMs: 100, maxBackoffMs: 1000, backoffMultiplier: 2 };

/** A random source that replays the given values. */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => {
    const v = values[i % values.length];
    i += 1;
    return v as number;
  };
}

describe('cappedBackoffMs', () => {
  it('grows exponentially and is capped at maxBackoff', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => cappedBackoffMs(policy, n))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });
  it('supports multipliers below 1', () => {
    expect(cappedBackoffMs({ ...policy, backoffMultiplier: 0.5 }, 3)).toBe(25);
  });
});

describe('Backoff a6 jitter', () => {
  it('multiplies the capped delay by a factor in [0.8, 1.2]', () => {
    const low = new Backoff(policy, 'a6', () => 0);
    expect([low.next(), low.next(), low.next(), low.next(), low.next()]).toEqual([80, 160, 320, 640, 800]);
    const high = new Backoff(policy, 'a6', () => 0.999999);
    const delays = [high.next(), high.next(), high.next(), high.next(), high.next()];
    expect(delays.map((d) => Math.round(d))).toEqual([120, 240, 480, 960, 1200]);
  });
  it('applies the cap before the jitter, so a delay may exceed maxBackoff by 20%', () => {
    const b = new Backoff({ ...policy, maxBackoffMs: 150 }, 'a6', () => 0.999999);
    b.next();
    expect(b.next()).toBeGreaterThan(150);
    expect(b.next()).toBeLessThanOrEqual(180);
  });
  it('midpoint random gives the exact capped value', () => {
    const b = new Backoff(policy, 'a6', () => 0.5);
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
  });
  it('reset restarts from initialBackoff', () => {
    const b = new Backoff(policy, 'a6', () => 0.5);
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(100);
  });
});

describe('Backoff other strategies', () => {
  it('full jitter spans [0, capped)', () => {
    const b = new Backoff(policy, 'full', sequence(0, 0.5, 0.25));
    expect([b.next(), b.next(), b.next()]).toEqual([0, 100, 100]);
  });
  it('equal jitter spans [capped/2, capped)', () => {
    const b = new Backoff(policy, 'equal', sequence(0, 0.5));
    expect([b.next(), b.next()]).toEqual([50, 150]);
  });
  it('decorrelated jitter grows from the previous delay and respects the cap', () => {
    const b = new Backoff(policy, 'decorrelated', () => 1);
    // previous starts at 100: random(100, 300) -> 300, then random(100, 900) -> 900, then capped at 1000
    expect([b.next(), b.next(), b.next()]).toEqual([300, 900, 1000]);
    const low = new Backoff(policy, 'decorrelated', () => 0);
    expect([low.next(), low.next()]).toEqual([100, 100]);
  });
});

describe('maxBackoffMs', () => {
  it('is the upper bound of each strategy', () => {
    expect(maxBackoffMs(policy, 1, 'a6')).toBeCloseTo(120);
    expect(maxBackoffMs(policy, 5, 'a6')).toBeCloseTo(1200);
    expect(maxBackoffMs(policy, 2, 'full')).toBe(200);
    expect(maxBackoffMs(policy, 1, 'decorrelated')).toBe(1000);
  });
});
