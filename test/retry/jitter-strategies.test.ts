import { describe, expect, it } from 'vitest';
import {
  cappedBackoffMs,
  initialBackoffState,
  JITTER_STRATEGIES,
  type JitterStrategy,
  jitterText,
  maxBackoffMs,
  nextBackoff,
} from '../../src/retry/backoff.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RETRY_UNAVAILABLE_CONFIG } from '../helpers/service-configs.js';

const policy = { initialBackoffMs: 100, maxBackoffMs: 1000, backoffMultiplier: 2 };
const R = [0, 0.25, 0.5, 0.75, 0.999_999];

/** Every delay a strategy gives for retries 1..n, with the same random number each time. */
function delays(jitter: JitterStrategy, r: number, n = 6): number[] {
  let state = initialBackoffState(policy);
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const step = nextBackoff(policy, jitter, state, r);
    out.push(step.delayMs);
    state = step.state;
  }
  return out;
}

describe('the worst-case bound of each jitter strategy (what `check` sums)', () => {
  it.each(JITTER_STRATEGIES)('%s: no delay exceeds it, whatever the random numbers', (jitter) => {
    for (const r of R) {
      delays(jitter, r).forEach((delay, i) => {
        expect(delay).toBeLessThanOrEqual(maxBackoffMs(policy, i + 1, jitter));
      });
    }
  });

  it.each([
    ['a6', 1.2],
    ['full', 1],
    ['equal', 1],
  ] as const)('%s: is tight, reached as the random number nears 1 (capped × %d)', (jitter, factor) => {
    const highest = delays(jitter, 0.999_999);
    highest.forEach((delay, i) => {
      const bound = maxBackoffMs(policy, i + 1, jitter);
      expect(bound).toBeCloseTo(cappedBackoffMs(policy, i + 1) * factor, 6);
      expect(delay).toBeCloseTo(bound, 2);
    });
  });

  it('decorrelated: is maxBackoff for every retry, which its delays reach', () => {
    expect([1, 2, 6].map((n) => maxBackoffMs(policy, n, 'decorrelated'))).toEqual([1000, 1000, 1000]);
    expect(delays('decorrelated', 0.999_999).at(-1)).toBe(1000);
  });

  it('defaults to A6 jitter for the bound', () => {
    expect(maxBackoffMs(policy, 3)).toBeCloseTo(480);
  });
});

describe("check's description of each jitter strategy", () => {
  it.each([
    ['a6', /0\.8 to × 1\.2/, /1\.2/],
    ['full', /× 0 to × 1 \(full jitter\)/, /full-jitter/],
    ['equal', /× 0\.5 to × 1 \(equal jitter\)/, /equal-jitter/],
    ['decorrelated', /3 × the previous delay/, /maxBackoff/],
  ] as const)('%s states its range and the bound its worst case uses', (jitter, range, bound) => {
    expect(jitterText(jitter).range).toMatch(range);
    expect(jitterText(jitter).bound).toMatch(bound);
  });
});

describe('the jitter option', () => {
  const config = RETRY_UNAVAILABLE_CONFIG;

  it('accepts every strategy by name', () => {
    for (const jitter of JITTER_STRATEGIES) {
      expect(() => createRetryInterceptor(config, { jitter })).not.toThrow();
    }
  });

  it('rejects a value that only reads as a strategy once turned into text', () => {
    expect(() => createRetryInterceptor(config, { jitter: ['full'] as never })).toThrow(
      /options\.jitter must be one of a6, full, equal, decorrelated, got \["full"\]/,
    );
  });
});
