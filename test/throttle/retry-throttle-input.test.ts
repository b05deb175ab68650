/**
 * RetryThrottle's config from plain JS: every bad config is a TypeError or RangeError that names what is wrong,
 * never a destructuring crash, a string shown as a number, or an unknown key accepted.
 */
import { describe, expect, it } from 'vitest';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';

const make = (config: unknown) => () => new RetryThrottle(config as never);

describe('RetryThrottle config checks', () => {
  it('needs a config object', () => {
    expect(make(undefined)).toThrow(
      new TypeError('RetryThrottle: config must be an object ({ maxTokens, tokenRatio }), got nothing'),
    );
    expect(make(null)).toThrow(new TypeError('RetryThrottle: config must be an object, got null'));
    expect(make([10, 0.1])).toThrow(new TypeError('RetryThrottle: config must be an object, got [10,0.1]'));
    expect(make('10')).toThrow(new TypeError('RetryThrottle: config must be an object, got "10"'));
  });

  it('names an unknown key and the closest known one', () => {
    expect(make({ maxToken: 10, tokenRatio: 0.1 })).toThrow(
      new TypeError(
        'RetryThrottle: config.maxToken is not an option; did you mean "maxTokens"? (known: maxTokens, tokenRatio)',
      ),
    );
    expect(make({ maxTokens: 10, tokenRatio: 0.1, bogus: 1 })).toThrow(
      new TypeError('RetryThrottle: config.bogus is not an option (known: maxTokens, tokenRatio)'),
    );
  });

  it('quotes a number written as a string, so that it does not read as a number', () => {
    expect(make({ maxTokens: '10', tokenRatio: 0.1 })).toThrow(
      new TypeError(
        'RetryThrottle: maxTokens must be an integer in (0, 1000], got "10"; did you mean 10 (a number, not a string)?',
      ),
    );
    expect(make({ maxTokens: 10, tokenRatio: '0.1' })).toThrow(
      new TypeError(
        'RetryThrottle: tokenRatio must be a number greater than 0, got "0.1"; did you mean 0.1 (a number, not a string)?',
      ),
    );
  });

  it('says when a value is left out', () => {
    expect(make({ tokenRatio: 0.1 })).toThrow(
      new TypeError('RetryThrottle: maxTokens must be an integer in (0, 1000], got nothing'),
    );
    expect(make({ maxTokens: 10 })).toThrow(
      new TypeError('RetryThrottle: tokenRatio must be a number greater than 0, got nothing'),
    );
  });

  it('a number out of range is a RangeError, NaN a TypeError', () => {
    expect(make({ maxTokens: 0, tokenRatio: 0.1 })).toThrow(
      new RangeError('RetryThrottle: maxTokens must be an integer in (0, 1000], got 0'),
    );
    expect(make({ maxTokens: 10, tokenRatio: Number.POSITIVE_INFINITY })).toThrow(
      new RangeError('RetryThrottle: tokenRatio must be a number greater than 0, got Infinity'),
    );
    expect(make({ maxTokens: Number.NaN, tokenRatio: 0.1 })).toThrow(
      new TypeError('RetryThrottle: maxTokens must be an integer in (0, 1000], got NaN'),
    );
  });

  it('a tokenRatio below 0.001 is a RangeError, as the config parser says of it (it would read 0)', () => {
    expect(make({ maxTokens: 10, tokenRatio: 0.0004 })).toThrow(
      new RangeError(
        'RetryThrottle: tokenRatio must be at least 0.001 (decimals beyond the third are dropped), got 0.0004',
      ),
    );
    expect(new RetryThrottle({ maxTokens: 10, tokenRatio: 0.0019 }).tokenRatio).toBe(0.001);
  });

  it('still takes a valid config', () => {
    expect(new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 }).tokens).toBe(10);
  });
});
