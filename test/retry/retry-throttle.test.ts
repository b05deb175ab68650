import { describe, expect, it } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';

describe('RetryThrottle', () => {
  it('starts full and allows retries while tokens > maxTokens/2', () => {
    const t = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    expect(t.tokens).toBe(10);
    expect(t.threshold).toBe(5);
    const trace: Array<[number, boolean]> = [];
    for (let i = 0; i < 6; i++) {
      t.recordFailure();
      trace.push([t.tokens, t.allowAttempt()]);
    }
    expect(trace).toEqual([
      [9, true],
      [8, true],
      [7, true],
      [6, true],
      [5, false],
      [4, false],
    ]);
  });

  it('adds tokenRatio per success exactly (no float drift) and never exceeds maxTokens', () => {
    const t = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    for (let i = 0; i < 5; i++) t.recordFailure();
    expect(t.allowAttempt()).toBe(false);
    t.recordSuccess();
    expect(t.tokens).toBe(5.1);
    expect(t.allowAttempt()).toBe(true);
    for (let i = 0; i < 100; i++) t.recordSuccess();
    expect(t.tokens).toBe(10);
  });

  it('never goes below zero', () => {
    const t = new RetryThrottle({ maxTokens: 2, tokenRatio: 1 });
    for (let i = 0; i < 5; i++) t.recordFailure();
    expect(t.tokens).toBe(0);
  });

  it('truncates tokenRatio to three decimals', () => {
    expect(new RetryThrottle({ maxTokens: 10, tokenRatio: 0.5466 }).tokenRatio).toBe(0.546);
  });

  it('odd maxTokens: threshold is a half token', () => {
    const t = new RetryThrottle({ maxTokens: 3, tokenRatio: 0.5 });
    t.recordFailure(); // 2 > 1.5
    expect(t.allowAttempt()).toBe(true);
    t.recordFailure(); // 1
    expect(t.allowAttempt()).toBe(false);
  });

  it.each([
    [{ maxTokens: 0, tokenRatio: 0.1 }, /maxTokens/],
    [{ maxTokens: 1001, tokenRatio: 0.1 }, /maxTokens/],
    [{ maxTokens: 1.5, tokenRatio: 0.1 }, /maxTokens/],
    [{ maxTokens: 10, tokenRatio: 0 }, /tokenRatio/],
    [{ maxTokens: 10, tokenRatio: Number.NaN }, /tokenRatio/],
  ])('rejects %o', (config, message) => {
    expect(() => new RetryThrottle(config)).toThrow(message);
  });
});

describe('RetryThrottle with a huge tokenRatio', () => {
  it('keeps the ratio and refills to maxTokens on one success', () => {
    const t = new RetryThrottle({ maxTokens: 10, tokenRatio: 1e306 });
    expect(t.tokenRatio).toBe(1e306);
    for (let i = 0; i < 8; i++) t.recordFailure();
    t.recordSuccess();
    expect(t.tokens).toBe(10);
  });
});
