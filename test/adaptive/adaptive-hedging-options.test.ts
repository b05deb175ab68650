import { describe, expect, it } from 'vitest';
import {
  checkClock,
  resolveAdaptiveHedgingOptions,
  resolveHedgeBudgetOptions,
} from '../../src/hedging/adaptive-hedging-options.js';
import { FakeClock } from './fake-clock.js';

const WHERE = 'options.adaptiveHedging';
const resolve = (options: unknown) => resolveAdaptiveHedgingOptions(WHERE, options);

const DEFAULTS = {
  maxExtraLoad: 0.05,
  windowMs: 30_000,
  windowSlices: 3,
  recomputeEveryMs: 3_000,
  minDelayMs: 1,
  minSamples: 100,
  budget: { minPerSecond: 3, ttlMs: 10_000 },
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
    expect(resolve({ budget: { ttlMs: 2_000 } }).budget).toEqual({ minPerSecond: 3, ttlMs: 2_000 });
  });
});

describe('adaptive hedging options: the edges of each range', () => {
  it.each([
    ['maxExtraLoad', [0, 0.999], [1, -0.01, '0.1'], 'a number in [0, 1)'],
    ['windowMs', [0.5, 1e9], [0, -1, Number.POSITIVE_INFINITY], 'a number of ms greater than 0'],
    ['windowSlices', [1, 60], [0, 61, 2.5], 'an integer from 1 to 60'],
    ['recomputeEveryMs', [0, 1e9], [-1, Number.POSITIVE_INFINITY, Number.NaN], 'a number of ms >= 0'],
    ['minDelayMs', [0, 1e9], [-0.5, Number.POSITIVE_INFINITY], 'a number of ms >= 0'],
    ['minSamples', [1, 1e6], [0, 1.5], 'an integer >= 1'],
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

  it.each([
    ['minPerSecond', [0, 0.5, 1e6], [-1, Number.POSITIVE_INFINITY], 'a number >= 0'],
    ['ttlMs', [1_000, 60_000], [999, 60_001, 1_500.5], 'an integer from 1000 to 60000'],
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
    expect(() => resolve(options)).toThrow(new TypeError(`${WHERE} must be true or an options object`));
  });

  it.each([null, [], 'yes'])('rejects %j as the budget', (budget) => {
    expect(() => resolve({ budget })).toThrow(
      new TypeError(`${WHERE}.budget must be an object, true or false`),
    );
  });

  it('names an unknown option, also inside the budget', () => {
    expect(() => resolve({ windowSize: 3 })).toThrow(
      new TypeError(`${WHERE}.windowSize is not a known option`),
    );
    expect(() => resolveHedgeBudgetOptions('HedgeBudget: options', { ttl: 3 })).toThrow(
      new TypeError('HedgeBudget: options.ttl is not a known option'),
    );
  });

  it('takes a clock that has now, setTimer and clearTimer, and no clock at all', () => {
    const clock = new FakeClock();
    expect(checkClock(WHERE, clock)).toBe(clock);
    expect(checkClock(WHERE, undefined)).toBeUndefined();
    expect(resolve({ clock }).windowMs).toBe(30_000);
    expect(() => checkClock(WHERE, { now: () => 0 })).toThrow(
      new TypeError(`${WHERE}.clock must be a Clock (an object with now, setTimer and clearTimer)`),
    );
  });
});
