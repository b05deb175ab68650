import { describe, expect, it } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';

describe('RetryThrottle limits (A6: maxTokens in (0, 1000], tokenRatio > 0)', () => {
  it('accepts the largest maxTokens A6 allows, starting full', () => {
    const throttle = new RetryThrottle({ maxTokens: 1000, tokenRatio: 0.1 });
    expect([throttle.tokens, throttle.threshold, throttle.allowAttempt()]).toEqual([1000, 500, true]);
  });

  it('rejects a tokenRatio that is not a number, naming it', () => {
    expect(() => new RetryThrottle({ maxTokens: 10, tokenRatio: '0.1' as never })).toThrow(
      /RetryThrottle: tokenRatio must be a number greater than 0, got "0\.1"; did you mean 0\.1 \(a number, not a string\)\?/,
    );
  });
});
