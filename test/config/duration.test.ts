import { describe, expect, it } from 'vitest';
import { MAX_DURATION_SECONDS, parseDuration } from '../../src/config/duration.js';
import { isServiceConfigError } from '../../src/config/service-config-error.js';

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['0.1s', 100],
    ['.5s', 500],
    ['1.5s', 1500],
    ['10s', 10_000],
    ['0s', 0],
    ['-0s', 0],
    ['-1s', -1000],
    ['0.000000001s', 0.000001],
    ['1.000000001s', 1000.000001],
    ['0.020s', 20],
    ['007s', 7000],
    [`${MAX_DURATION_SECONDS}s`, MAX_DURATION_SECONDS * 1000],
    [`-${MAX_DURATION_SECONDS}s`, -MAX_DURATION_SECONDS * 1000],
  ])('parses %s as %s ms', (text, ms) => {
    const parsed = parseDuration(text, 'x');
    expect(parsed).toBeCloseTo(ms, 9);
    expect(Object.is(parsed, -0)).toBe(false);
  });

  it('keeps fractional milliseconds exactly enough to tell 1.000000001s from 1s', () => {
    expect(parseDuration('1.000000001s', 'x')).toBeGreaterThan(1000);
  });

  it.each<[string, unknown]>([
    ['a number of seconds without "s"', '1'],
    ['milliseconds', '1ms'],
    ['minutes', '1m'],
    ['an upper-case S', '1S'],
    ['a plus sign', '+1s'],
    ['surrounding spaces', ' 1s '],
    ['a dot without digits after it', '1.s'],
    ['ten fractional digits', '0.0000000001s'],
    ['an exponent', '1e3s'],
    ['only "s"', 's'],
    ['only "-s"', '-s'],
    ['an empty string', ''],
    ['out of range', `${MAX_DURATION_SECONDS + 1}s`],
    ['a number', 1],
    ['null', null],
    ['undefined', undefined],
    ['an object', { seconds: 1 }],
    ['a boolean', true],
  ])('rejects %s', (_label, value) => {
    let thrown: unknown;
    try {
      parseDuration(value, 'methodConfig[0].timeout');
    } catch (error) {
      thrown = error;
    }
    expect(isServiceConfigError(thrown)).toBe(true);
    if (isServiceConfigError(thrown)) {
      expect(thrown.path).toBe('methodConfig[0].timeout');
      expect(thrown.message).toContain('methodConfig[0].timeout: ');
    }
  });
});

describe('parseDuration exactness', () => {
  it.each([
    ['0.3s', 300],
    ['1.500s', 1500],
    ['0.1s', 100],
    ['0.7s', 700],
    ['2.675s', 2675],
    ['0.000001s', 0.001],
    ['1.000000001s', 1000.000001],
    ['-0.3s', -300],
  ])('%s is exactly %s ms', (text, ms) => {
    expect(parseDuration(text, 'd')).toBe(ms);
  });
});
