/**
 * The errors of the throttle options (RetryBudget, createAdaptiveThrottleInterceptor): each names the option's path, the rule
 * and what it got, and the ranges include their ends.
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveThrottleInterceptor } from '../../src/throttle/adaptive-throttle.js';
import { resolveAdaptiveThrottleRule } from '../../src/throttle/adaptive-throttle-rule.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';

const throttle = (options: unknown) => () => createAdaptiveThrottleInterceptor(options as never);
const AT = 'createAdaptiveThrottleInterceptor: options';

describe('what a bad value is called in the message', () => {
  it.each([
    [null, 'null'],
    [[1], '[1]'],
    ['fast', '"fast"'],
    [{ every: 1 }, '{"every":1}'],
    [() => 1, 'a function'],
    [7, '7'],
  ])('%j is "%s"', (value, described) => {
    expect(throttle({ retryLocalRejections: value })).toThrow(
      `${AT}.retryLocalRejections must be true or false, got ${described}`,
    );
  });
});

describe('createAdaptiveThrottleInterceptor option checks', () => {
  it('takes no options, or an object of known ones', () => {
    expect(throttle(undefined)).not.toThrow();
    expect(throttle({ k: 1, key: (m: string) => m, onEvent: () => {}, random: () => 0.5 })).not.toThrow();
    expect(throttle({ clock: { now: () => 0 } })).not.toThrow();
  });

  it.each([
    [null, 'null'],
    [[], '[]'],
    ['fast', '"fast"'],
  ])('rejects %j as the options', (options, described) => {
    expect(throttle(options)).toThrow(new TypeError(`${AT} must be an object, got ${described}`));
  });

  it('names an unknown option, the closest known one, and lists the known ones', () => {
    expect(throttle({ K: 2 })).toThrow(
      /createAdaptiveThrottleInterceptor: options\.K is not an option; did you mean "k"\? \(known: k, windowMs, windowBins, padding, maxRejectionProbability, /,
    );
    expect(throttle({ bins: 10 })).toThrow(`${AT}.bins was renamed to "windowBins"`);
  });

  it.each([
    ['key', 'a function'],
    ['random', 'a function'],
    ['clock', 'an object with a now() method (a Clock)'],
    ['retryLocalRejections', 'true or false'],
  ])('%s must be %s', (name, rule) => {
    expect(throttle({ [name]: 5 })).toThrow(new TypeError(`${AT}.${name} must be ${rule}, got 5`));
  });

  it('a clock needs a now() method', () => {
    expect(throttle({ clock: { now: 5 } })).toThrow(/clock must be an object with a now\(\) method/);
    expect(throttle({ clock: null })).toThrow(
      /clock must be an object with a now\(\) method \(a Clock\), got null/,
    );
  });
});

describe('numeric ranges include their ends', () => {
  it.each([
    ['k', 1, 1000, false, ''],
    ['windowMs', 1000, 600_000, false, ' (ms)'],
    ['windowBins', 1, 1000, true, ''],
    ['padding', 1, 1e9, false, ''],
  ] as const)('%s: [%d, %d]', (name, min, max, integer, unit) => {
    const kind = integer ? 'an integer' : 'a number';
    expect(resolveAdaptiveThrottleRule('W', { [name]: min })[name]).toBe(min);
    expect(resolveAdaptiveThrottleRule('W', { [name]: max })[name]).toBe(max);
    for (const out of [min - 0.5, max + 1, Number.POSITIVE_INFINITY]) {
      expect(() => resolveAdaptiveThrottleRule('W', { [name]: out })).toThrow(
        new RangeError(`W.${name} must be ${kind} in [${min}, ${max}]${unit}, got ${out}`),
      );
    }
    expect(() => resolveAdaptiveThrottleRule('W', { [name]: Number.NaN })).toThrow(
      new TypeError(`W.${name} must be ${kind} in [${min}, ${max}]${unit}, got NaN`),
    );
  });

  it('maxRejectionProbability: (0, 1]', () => {
    expect(resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1 }).maxRejectionProbability).toBe(1);
    expect(resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 0.01 }).maxRejectionProbability).toBe(
      0.01,
    );
    expect(() => resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1.01 })).toThrow(
      /must be a number in \(0, 1\], got 1.01/,
    );
  });

  it('RetryBudget: maxExtraLoad [0, 1000], ttlMs [1000, 60000], minPerSecond from 0', () => {
    expect(new RetryBudget({ maxExtraLoad: 0, ttlMs: 1000, minPerSecond: 0 }).tokens).toBe(0);
    const wide = new RetryBudget({
      maxExtraLoad: 1000,
      ttlMs: 60_000,
      minPerSecond: 1,
      clock: { now: () => 0 },
    });
    expect([wide.maxExtraLoad, wide.ttlMs, wide.tokens]).toEqual([1000, 60_000, 60]);
    expect(() => new RetryBudget({ maxExtraLoad: 1000.5 })).toThrow(
      /maxExtraLoad must be a number in \[0, 1000\], got 1000.5/,
    );
    expect(() => new RetryBudget({ ttlMs: 60_001 })).toThrow(/ttlMs must be a number in \[1000, 60000\]/);
  });
});
