/**
 * The exported pure rule (AdaptiveThrottleState, rejectionProbability) from plain JS: bad input is an error that
 * names it, with the ranges createAdaptiveThrottleInterceptor enforces, never a state that silently never throttles or a
 * probability outside [0, 1].
 */
import { describe, expect, it } from 'vitest';
import {
  AdaptiveThrottleState,
  DEFAULT_ADAPTIVE_THROTTLE_RULE,
  rejectionProbability,
} from '../../src/throttle/adaptive-throttle-rule.js';

const AT = 'AdaptiveThrottleState: config';
const state = (config: unknown) => () => new AdaptiveThrottleState(config as never);

describe('new AdaptiveThrottleState(config)', () => {
  it.each([
    [null, 'null'],
    ['x', '"x"'],
    [[], '[]'],
    [2, '2'],
  ])('rejects %j as the config', (config, described) => {
    expect(state(config)).toThrow(new TypeError(`${AT} must be an object, got ${described}`));
  });

  it('names an unknown key and the closest known one', () => {
    expect(state({ K: 2 })).toThrow(/^AdaptiveThrottleState: config\.K is not an option; did you mean "k"\?/);
    expect(state({ bins: 10 })).toThrow(`${AT}.bins was renamed to "windowBins"`);
  });

  it('checks each number with the ranges of createAdaptiveThrottleInterceptor', () => {
    expect(state({ k: Number.NaN })).toThrow(new TypeError(`${AT}.k must be a number in [1, 1000], got NaN`));
    expect(state({ windowMs: -1 })).toThrow(
      new RangeError(`${AT}.windowMs must be a number in [1000, 600000] (ms), got -1`),
    );
    expect(state({ windowBins: 1.5 })).toThrow(
      new RangeError(`${AT}.windowBins must be an integer in [1, 1000], got 1.5`),
    );
    expect(state({ padding: 0 })).toThrow(
      new RangeError(`${AT}.padding must be a number in [1, 1000000000], got 0`),
    );
    expect(state({ maxRejectionProbability: 5 })).toThrow(
      new RangeError(`${AT}.maxRejectionProbability must be a number in (0, 1], got 5`),
    );
    expect(state({ retries: 'never' })).toThrow(
      new RangeError(`${AT}.retries must be 'reject-while-throttling' or 'same-probability', got "never"`),
    );
  });

  it('fills left-out options with the defaults, and throttles after failures', () => {
    const s = new AdaptiveThrottleState({ k: 3 });
    expect(s.config).toEqual({ ...DEFAULT_ADAPTIVE_THROTTLE_RULE, k: 3 });
    for (let i = 0; i < 50; i++) s.recordResponse(0, false);
    expect(s.probability(0)).toBeCloseTo(50 / 58, 12);
    expect(new AdaptiveThrottleState().config).toEqual(DEFAULT_ADAPTIVE_THROTTLE_RULE);
  });
});

describe('rejectionProbability(requests, accepts, k, padding, maxRejectionProbability)', () => {
  it.each([
    [[Number.NaN, 1, 2, 1], TypeError, 'requests must be a number >= 0, got NaN'],
    [[10, -1, 2, 1], RangeError, 'accepts must be a number >= 0, got -1'],
    [[10, 1, '2', 1], TypeError, 'k must be a number in [1, 1000], got "2"'],
    [[10, 1, 0.5, 1], RangeError, 'k must be a number in [1, 1000], got 0.5'],
    [[10, 1, 2, 0], RangeError, 'padding must be a number in [1, 1000000000], got 0'],
    [[10, 1, 2, 1, 5], RangeError, 'maxRejectionProbability must be a number in (0, 1], got 5'],
    [[10, 1, 2, 1, Number.NaN], TypeError, 'maxRejectionProbability must be a number in (0, 1], got NaN'],
    [[10, 1, 2, 1, 0], RangeError, 'maxRejectionProbability must be a number in (0, 1], got 0'],
    [[Number.POSITIVE_INFINITY, 1, 2, 1], RangeError, 'requests must be a number >= 0, got Infinity'],
  ] as const)('(%s) is a %o', (args, type, message) => {
    const call = () => (rejectionProbability as (...a: unknown[]) => number)(...args);
    expect(call).toThrow(type);
    expect(call).toThrow(`rejectionProbability: ${message}`);
  });

  it('still computes the rule for valid input, capped', () => {
    expect(rejectionProbability(10, 1, 2, 1)).toBeCloseTo(8 / 11, 12);
    expect(rejectionProbability(10, 1, 2, 1, 0.5)).toBe(0.5);
    expect(rejectionProbability(0, 0, 1, 1, 1)).toBe(0);
  });
});
