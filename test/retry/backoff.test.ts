import { describe, expect, it } from 'vitest';
import { cappedBackoffMs, maxBackoffMs } from '../../src/retry/backoff.js';

const policy = { initialBackoffMs: 100, maxBackoffMs: 1000, backoffMultiplier: 2 };

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

describe('maxBackoffMs', () => {
  it('is the upper bound of each strategy', () => {
    expect(maxBackoffMs(policy, 1, 'a6')).toBeCloseTo(120);
    expect(maxBackoffMs(policy, 5, 'a6')).toBeCloseTo(1200);
    expect(maxBackoffMs(policy, 2, 'full')).toBe(200);
    expect(maxBackoffMs(policy, 1, 'decorrelated')).toBe(1000);
  });
});
