import { describe, expect, it } from 'vitest';
import { durationHint, MAX_DURATION_SECONDS, parseDuration } from '../../src/config/duration.js';
import { isServiceConfigError } from '../../src/config/service-config-error.js';

describe('parseDuration', () => {
  it.each<[string, number]>([
    ['0.1s', 100],
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
    ['a fraction without whole seconds', '.5s'],
    ['a negative fraction without whole seconds', '-.5s'],
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

describe('durationHint: the proto3 spelling of a duration written another way', () => {
  it.each<[unknown, string]>([
    ['100ms', '; did you mean "0.1s"?'],
    ['0.1', '; did you mean "0.1s"?'],
    ['0.1 s', '; did you mean "0.1s"?'],
    [' 2s ', '; did you mean "2s"?'],
    ['10S', '; did you mean "10s"?'],
    ['1.s', '; did you mean "1s"?'],
    ['.5s', '; did you mean "0.5s"?'],
    ['-.25s', '; did you mean "-0.25s"?'],
    ['1m', '; did you mean "60s"?'],
    ['1.5 seconds', '; did you mean "1.5s"?'],
    ['2h', '; did you mean "7200s"?'],
    ['5us', '; did you mean "0.000005s"?'],
    ['250 msec', ''],
    ['-5ms', '; did you mean "-0.005s"?'],
    [0.5, '; write it as a string: "0.5s" for 0.5 seconds'],
    [9, '; write it as a string: "9s" for 9 seconds'],
    [100, '; write it as a string: "100s" for 100 seconds, or "0.1s" for 100 milliseconds'],
    ['0.1ns', ''],
    ['abc', ''],
    ['1e3ms', ''],
    [`${MAX_DURATION_SECONDS + 1}`, ''],
    [MAX_DURATION_SECONDS * 2, ''],
    [Number.NaN, ''],
    [10, '; write it as a string: "10s" for 10 seconds, or "0.01s" for 10 milliseconds'],
    [
      MAX_DURATION_SECONDS,
      `; write it as a string: "${MAX_DURATION_SECONDS}s" for ${MAX_DURATION_SECONDS} seconds, or "${MAX_DURATION_SECONDS / 1000}s" for ${MAX_DURATION_SECONDS} milliseconds`,
    ],
    [`${MAX_DURATION_SECONDS} s`, `; did you mean "${MAX_DURATION_SECONDS}s"?`],
    ['2s', ''],
    ['100ms!', ''],
    ['.55 s', '; did you mean "0.55s"?'],
    ['.5 s', '; did you mean "0.5s"?'],
    [true, ''],
    [null, ''],
  ])('%j → %j', (value, hint) => {
    expect(durationHint(value)).toBe(hint);
  });

  it('ends the error of the value it reads', () => {
    expect(() => parseDuration('100ms', 'methodConfig[0].timeout')).toThrow(
      'methodConfig[0].timeout: must be a duration string such as "0.1s" or "2s" (seconds, up to 9 decimals, ending in "s"), got "100ms"; did you mean "0.1s"?',
    );
    expect(() => parseDuration(2, 'x')).toThrow('got 2; write it as a string: "2s" for 2 seconds');
  });
});
