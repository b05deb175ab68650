import { describe, expect, it } from 'vitest';
import { tokenRatioThousandths, truncateTokenRatio } from '../../src/config/token-ratio.js';

describe('truncateTokenRatio (A6: decimals beyond the third are ignored)', () => {
  it.each([
    [0.5466, 0.546],
    [0.57, 0.57],
    [0.29, 0.29],
    [0.001, 0.001],
    [0.0009, 0],
    [0.000999999999, 0],
    [1e-7, 0],
    [2.9999, 2.999],
    [123.4567, 123.456],
    [1, 1],
    [1e21, 1e21],
    [1e306, 1e306],
  ])('%s → %s', (value, expected) => {
    expect(truncateTokenRatio(value)).toBe(expected);
  });

  it('gives exact thousandths for a token bucket', () => {
    expect(tokenRatioThousandths(0.57)).toBe(570);
    expect(tokenRatioThousandths(0.5466)).toBe(546);
    expect(tokenRatioThousandths(0.0009)).toBe(0);
    expect(tokenRatioThousandths(3)).toBe(3000);
  });
});

describe('truncateTokenRatio on numbers printed with an exponent', () => {
  it('keeps a number too large for decimals (1.5e21), and reads one below 1e-6 as 0', () => {
    expect(truncateTokenRatio(1.5e21)).toBe(1.5e21);
    expect(truncateTokenRatio(1e-7)).toBe(0);
  });
});
