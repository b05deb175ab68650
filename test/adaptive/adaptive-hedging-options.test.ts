import { describe, expect, it } from 'vitest';
import {
  resolveAdaptiveHedgingOptions,
  resolveHedgeBudgetOptions,
} from '../../src/hedging/adaptive-hedging-options.js';
import { FakeClock } from './fake-clock.js';

const WHERE = 'options.adaptiveHedging';
const resolve = (options: unknown) => resolveAdaptiveHedgingOptions(WHERE, options);

const DEFAULTS = {
  maxExtraLoad: 0.05,
  recentCalls: 400,
  minDelayMs: 1,
  maxDelayMs: 60_000,
  windowMs: 30_000,
  windowBins: 3,
  budget: { minPerSecond: 3, ttlMs: 10_000, chanceSd: 3 },
  holdInStalls: true,
  maxMethods: 1_000,
};

describe('adaptive hedging options: defaults', () => {
  it.each([undefined, true, {}])('%s gets every documented default, the budget included', (options) => {
    expect(resolve(options)).toEqual(DEFAULTS);
  });

  it('keeps the defaults of the options not given, and turns the budget off with false', () => {
    expect(resolve({ windowMs: 5_000, budget: false })).toEqual({
      ...DEFAULTS,
      windowMs: 5_000,
      budget: undefined,
    });
    expect(resolve({ budget: true }).budget).toEqual(DEFAULTS.budget);
    expect(resolve({ budget: { ttlMs: 2_000 } }).budget).toEqual({
      minPerSecond: 3,
      ttlMs: 2_000,
      chanceSd: 3,
    });
  });

  it('recentCalls follows maxExtraLoad (20 / maxExtraLoad, within [20, 10000])', () => {
    expect(resolve({ maxExtraLoad: 0.01 }).recentCalls).toBe(2_000);
    expect(resolve({ maxExtraLoad: 0.9 }).recentCalls).toBe(23);
    expect(resolve({ maxExtraLoad: 0.999 }).recentCalls).toBe(21);
    expect(resolve({ maxExtraLoad: 0.0001 }).recentCalls).toBe(10_000);
  });

  it('maxDelayMs is never below minDelayMs by default', () => {
    expect(resolve({ minDelayMs: 90_000 }).maxDelayMs).toBe(90_000);
  });
});

describe('adaptive hedging options: the edges of each range', () => {
  it.each([
    ['maxExtraLoad', [0.001, 0.999], [0, 1, -0.01], 'a number in (0, 1)'],
    ['recentCalls', [10, 100_000], [9, 100_001, 20.5], 'an integer in [10, 100000]'],
    ['minDelayMs', [0.5, 1e9], [0, -0.5, Number.POSITIVE_INFINITY], 'a number > 0 (ms)'],
    ['windowMs', [0.5, 1e9], [0, -1, Number.POSITIVE_INFINITY], 'a number > 0 (ms)'],
    ['windowBins', [1, 60], [0, 61, 2.5], 'an integer in [1, 60]'],
  ] as const)(
    '%s accepts %j and rejects %j, naming the option and the rule',
    (name, accepted, rejected, rule) => {
      for (const value of accepted) {
        expect(resolve({ [name]: value })[name]).toBe(value);
      }
      for (const value of rejected) {
        expect(() => resolve({ [name]: value })).toThrow(
          new RangeError(`${WHERE}.${name} must be ${rule}, got ${String(value)}`),
        );
      }
    },
  );

  it('a non-number is a TypeError naming the rule', () => {
    expect(() => resolve({ maxExtraLoad: '0.1' })).toThrow(
      new TypeError(
        `${WHERE}.maxExtraLoad must be a number in (0, 1), got "0.1"; did you mean 0.1 (a number, not a string)?`,
      ),
    );
  });

  it.each([
    ['minPerSecond', [0, 0.5, 1e6], [-1, Number.POSITIVE_INFINITY], 'a number >= 0'],
    ['ttlMs', [1_000, 60_000], [999, 60_001, 1_500.5], 'an integer in [1000, 60000] (ms)'],
    ['chanceSd', [0, 2.5, 10], [-0.1, 10.5, 11], 'a number in [0, 10]'],
  ] as const)('budget.%s accepts %j and rejects %j', (name, accepted, rejected, rule) => {
    for (const value of accepted) {
      expect(resolve({ budget: { [name]: value } }).budget?.[name]).toBe(value);
    }
    for (const value of rejected) {
      expect(() => resolve({ budget: { [name]: value } })).toThrow(
        new RangeError(`${WHERE}.budget.${name} must be ${rule}, got ${String(value)}`),
      );
    }
  });
});

describe('adaptive hedging options: shapes that are not options', () => {
  it.each([null, [], 'yes', 1])('rejects %j as the options', (options) => {
    expect(() => resolve(options)).toThrow(TypeError);
    expect(() => resolve(options)).toThrow(`${WHERE} must be true or an options object, got `);
  });

  it.each([null, [], 'yes'])('rejects %j as the budget', (budget) => {
    expect(() => resolve({ budget })).toThrow(`${WHERE}.budget must be an object, true or false, got `);
  });

  it('names an unknown option, also inside the budget, and renamed ones', () => {
    expect(() => resolve({ windowSize: 3 })).toThrow(TypeError);
    expect(() => resolve({ windowSize: 3 })).toThrow(`${WHERE}.windowSize is not an option`);
    expect(() => resolve({ windowSize: 3 })).toThrow(`(known: ${KNOWN})`);
    expect(() => resolveHedgeBudgetOptions('HedgeBudget: options', { ttl: 3 })).toThrow(
      new TypeError('HedgeBudget: options.ttl is not an option (known: minPerSecond, ttlMs, chanceSd)'),
    );
    expect(() => resolve({ windowSlices: 3 })).toThrow(`${WHERE}.windowSlices was renamed to "windowBins"`);
    expect(() => resolve({ step: 0.05 })).toThrow(`${WHERE}.step was renamed to "recentCalls"`);
  });

  it('holdInStalls is true or false, and nothing else', () => {
    expect(resolve({ holdInStalls: false }).holdInStalls).toBe(false);
    expect(() => resolve({ holdInStalls: 1 })).toThrow(
      new TypeError(`${WHERE}.holdInStalls must be true or false, got 1`),
    );
  });

  it('maxMethods is a whole number from 1 to 1,000,000', () => {
    expect(resolve({ maxMethods: 1 }).maxMethods).toBe(1);
    expect(() => resolve({ maxMethods: 0 })).toThrow(`${WHERE}.maxMethods`);
    expect(() => resolve({ maxMethods: 10.5 })).toThrow(/maxMethods must be an integer/);
    expect(() => resolve({ maxMethods: 2_000_000 })).toThrow(`${WHERE}.maxMethods`);
  });

  it('accepts a clock (checked by AdaptiveHedging itself)', () => {
    expect(resolve({ clock: new FakeClock() }).windowMs).toBe(30_000);
  });
});

const KNOWN =
  'maxExtraLoad, recentCalls, minDelayMs, maxDelayMs, windowMs, windowBins, budget, holdInStalls, maxMethods, clock';
