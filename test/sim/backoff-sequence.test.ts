import { describe, expect, it } from 'vitest';
import { BackoffSequence } from '../../bench/sim/backoff-sequence.js';

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

describe('BackoffSequence a6 jitter', () => {
  it('multiplies the capped delay by a factor in [0.8, 1.2]', () => {
    const low = new BackoffSequence(policy, 'a6', () => 0);
    expect([low.next(), low.next(), low.next(), low.next(), low.next()]).toEqual([80, 160, 320, 640, 800]);
    const high = new BackoffSequence(policy, 'a6', () => 0.999999);
    const delays = [high.next(), high.next(), high.next(), high.next(), high.next()];
    expect(delays.map((d) => Math.round(d))).toEqual([120, 240, 480, 960, 1200]);
  });
  it('applies the cap before the jitter, so a delay may exceed maxBackoff by 20%', () => {
    const b = new BackoffSequence({ ...policy, maxBackoffMs: 150 }, 'a6', () => 0.999999);
    b.next();
    expect(b.next()).toBeGreaterThan(150);
    expect(b.next()).toBeLessThanOrEqual(180);
  });
  it('midpoint random gives the exact capped value', () => {
    const b = new BackoffSequence(policy, 'a6', () => 0.5);
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
  });
  it('reset restarts from initialBackoff', () => {
    const b = new BackoffSequence(policy, 'a6', () => 0.5);
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(100);
  });
});

describe('BackoffSequence other strategies', () => {
  it('full jitter spans [0, capped)', () => {
    const b = new BackoffSequence(policy, 'full', sequence(0, 0.5, 0.25));
    expect([b.next(), b.next(), b.next()]).toEqual([0, 100, 100]);
  });
  it('equal jitter spans [capped/2, capped)', () => {
    const b = new BackoffSequence(policy, 'equal', sequence(0, 0.5));
    expect([b.next(), b.next()]).toEqual([50, 150]);
  });
  it('decorrelated jitter grows from the previous delay and respects the cap', () => {
    const b = new BackoffSequence(policy, 'decorrelated', () => 1);
    // previous starts at 100: random(100, 300) -> 300, then random(100, 900) -> 900, then capped at 1000
    expect([b.next(), b.next(), b.next()]).toEqual([300, 900, 1000]);
    const low = new BackoffSequence(policy, 'decorrelated', () => 0);
    expect([low.next(), low.next()]).toEqual([100, 100]);
  });
});
