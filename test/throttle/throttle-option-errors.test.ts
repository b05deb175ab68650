/**
 * The errors of the throttle options (RetryBudget, createAdaptiveThrottle): each names the option, the rule and
 * what it got, and the ranges include their ends.
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveThrottle } from '../../src/throttle/adaptive-throttle.js';
import { resolveAdaptiveThrottleRule } from '../../src/throttle/adaptive-throttle-rule.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';

const throttle = (options: unknown) => () => createAdaptiveThrottle(options as never);

describe('what a bad value is called in the message', () => {
  it.each([
    [null, 'null'],
    [[1], 'an array'],
    ['fast', '"fast"'],
    [{ every: 1 }, 'an object'],
    [() => 1, 'a function'],
    [7, '7'],
  ])('%j is "%s"', (value, described) => {
    expect(throttle({ retryLocalRejections: value })).toThrow(
      `retryLocalRejections must be a boolean, got ${described}`,
    );
  });
});

describe('createAdaptiveThrottle option checks', () => {
  it('takes no options, or an object of known ones', () => {
    expect(throttle(undefined)).not.toThrow();
    expect(throttle({ k: 1, key: (m: string) => m, onEvent: () => {}, random: () => 0.5 })).not.toThrow();
    expect(throttle({ clock: { now: () => 0 } })).not.toThrow();
  });

  it.each([
    [null, 'null'],
    [[], 'an array'],
    ['fast', '"fast"'],
  ])('rejects %j as the options', (options, described) => {
    expect(throttle(options)).toThrow(
      new TypeError(`createAdaptiveThrottle: options must be an object, got ${described}`),
    );
  });

  it('names an unknown option and lists the known ones', () => {
    expect(throttle({ K: 2 })).toThrow(
      /createAdaptiveThrottle: unknown option 'K' \(known options: k, windowMs, bins, padding, maxRejectionProbability, /,
    );
  });

  it.each([
    ['key', 'a function'],
    ['random', 'a function'],
    ['clock', 'an object with a now() method (a Clock)'],
    ['retryLocalRejections', 'a boolean'],
  ])('%s must be %s', (name, rule) => {
    expect(throttle({ [name]: 5 })).toThrow(
      new TypeError(`createAdaptiveThrottle: ${name} must be ${rule}, got 5`),
    );
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
    ['k', 1, 1000, false],
    ['windowMs', 1000, 600_000, false],
    ['bins', 1, 1000, true],
    ['padding', 1, 1e9, false],
  ] as const)('%s: [%d, %d]', (name, min, max, integer) => {
    const kind = integer ? 'an integer' : 'a number';
    expect(resolveAdaptiveThrottleRule('W', { [name]: min })[name]).toBe(min);
    expect(resolveAdaptiveThrottleRule('W', { [name]: max })[name]).toBe(max);
    for (const out of [min - 0.5, max + 1, Number.POSITIVE_INFINITY]) {
      expect(() => resolveAdaptiveThrottleRule('W', { [name]: out })).toThrow(
        new RangeError(`W: ${name} must be ${kind} in [${min}, ${max}], got ${out}`),
      );
    }
    expect(() => resolveAdaptiveThrottleRule('W', { [name]: Number.NaN })).toThrow(
      new TypeError(`W: ${name} must be a number, got NaN`),
    );
  });

  it('maxRejectionProbability: (0, 1]', () => {
    expect(resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1 }).maxRejectionProbability).toBe(1);
    expect(resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 0.01 }).maxRejectionProbability).toBe(
      0.01,
    );
    expect(() => resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1.01 })).toThrow(
      /must be a number in \[0, 1\], got 1.01/,
    );
  });

  it('RetryBudget: ratio [0, 1000], ttlMs [1000, 60000], minRetriesPerSecond from 0', () => {
    expect(new RetryBudget({ ratio: 0, ttlMs: 1000, minRetriesPerSecond: 0 }).tokens).toBe(0);
    const wide = new RetryBudget({
      ratio: 1000,
      ttlMs: 60_000,
      minRetriesPerSecond: 1,
      clock: { now: () => 0 },
    });
    expect([wide.ratio, wide.ttlMs, wide.tokens]).toEqual([1000, 60_000, 60]);
    expect(() => new RetryBudget({ ratio: 1000.5 })).toThrow(
      /ratio must be a number in \[0, 1000\], got 1000.5/,
    );
    expect(() => new RetryBudget({ ttlMs: 60_001 })).toThrow(/ttlMs must be a number in \[1000, 60000\]/);
  });
});
