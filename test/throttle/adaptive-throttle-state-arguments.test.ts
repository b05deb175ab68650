/**
 * AdaptiveThrottleState's methods and rejectionProbability from plain JS: a time that is not a finite number, an
 * `accepted` that is not a boolean (the string "false" was counted as an accept), or a left-out argument is an
 * error naming the method and the argument, never a silently wrong window.
 */
import { describe, expect, it } from 'vitest';
import { AdaptiveThrottleState, rejectionProbability } from '../../src/throttle/adaptive-throttle-rule.js';

describe('AdaptiveThrottleState.recordResponse(nowMs, accepted)', () => {
  it.each([
    ['false', '"false"; did you mean false (a boolean, not a string)?'],
    [0, '0'],
    [undefined, 'nothing'],
  ])('refuses %j as accepted, and counts nothing', (accepted, shown) => {
    const state = new AdaptiveThrottleState();
    expect(() => state.recordResponse(1000, accepted as never)).toThrow(
      new TypeError(`AdaptiveThrottleState.recordResponse: accepted must be true or false, got ${shown}`),
    );
    expect(state.requests(1000)).toBe(0);
    state.recordResponse(1000, false);
    state.recordResponse(1000, true);
    expect([state.requests(1000), state.accepts(1000)]).toEqual([2, 1]);
  });

  it.each([
    ['1000', TypeError, '"1000"; did you mean 1000 (a number, not a string)?'],
    [Number.NaN, TypeError, 'NaN'],
    [undefined, TypeError, 'nothing'],
    [Number.POSITIVE_INFINITY, RangeError, 'Infinity'],
  ] as const)('refuses %j as nowMs', (nowMs, type, shown) => {
    const call = () => new AdaptiveThrottleState().recordResponse(nowMs as never, false);
    expect(call).toThrow(type);
    expect(call).toThrow(
      `AdaptiveThrottleState.recordResponse: nowMs must be a finite number (ms), got ${shown}`,
    );
  });
});

describe('AdaptiveThrottleState.decide(nowMs, random)', () => {
  it.each([
    ['1000', TypeError, '"1000"; did you mean 1000 (a number, not a string)?'],
    [undefined, TypeError, 'nothing'],
    [Number.NEGATIVE_INFINITY, RangeError, '-Infinity'],
  ] as const)('refuses %j as nowMs', (nowMs, type, shown) => {
    const state = new AdaptiveThrottleState();
    for (let i = 0; i < 100; i++) state.recordResponse(1000, false);
    const call = () => state.decide(nowMs as never, 0.01);
    expect(call).toThrow(type);
    expect(call).toThrow(`AdaptiveThrottleState.decide: nowMs must be a finite number (ms), got ${shown}`);
    expect(state.requests(1000)).toBe(100);
  });
});

describe('AdaptiveThrottleState.decide(nowMs, random, retry)', () => {
  it.each([
    [undefined, TypeError, 'nothing'],
    [Number.NaN, TypeError, 'NaN'],
    ['0.5', TypeError, '"0.5"; did you mean 0.5 (a number, not a string)?'],
    [Math.random, TypeError, 'a function'],
    [1, RangeError, '1'],
    [-0.1, RangeError, '-0.1'],
  ] as const)('refuses %s as random, rather than never rejecting', (random, type, shown) => {
    const state = new AdaptiveThrottleState();
    for (let i = 0; i < 100; i++) state.recordResponse(1000, false);
    const call = () => state.decide(1000, random as never);
    expect(call).toThrow(type);
    expect(call).toThrow(`AdaptiveThrottleState.decide: random must be a number in [0, 1), got ${shown}`);
    expect(state.requests(1000)).toBe(100);
  });

  it.each([
    [2, '2'],
    ['true', '"true"; did you mean true (a boolean, not a string)?'],
  ])('refuses %j as retry', (retry, shown) => {
    const state = new AdaptiveThrottleState();
    expect(() => state.decide(1000, 0.5, retry as never)).toThrow(
      new TypeError(`AdaptiveThrottleState.decide: retry must be true or false, got ${shown}`),
    );
  });
});

describe('AdaptiveThrottleState.requests, accepts and probability(nowMs)', () => {
  it.each(['requests', 'accepts', 'probability'] as const)(
    '%s refuses a time that is not a finite number, and the window still expires after it',
    (method) => {
      const state = new AdaptiveThrottleState({ windowMs: 1_000 });
      for (const [nowMs, type, shown] of [
        [undefined, TypeError, 'nothing'],
        [Number.NaN, TypeError, 'NaN'],
        [Number.POSITIVE_INFINITY, RangeError, 'Infinity'],
      ] as const) {
        const call = () => state[method](nowMs as never);
        expect(call).toThrow(type);
        expect(call).toThrow(
          `AdaptiveThrottleState.${method}: nowMs must be a finite number (ms), got ${shown}`,
        );
      }
      for (let i = 0; i < 10; i++) state.recordResponse(1_000, false);
      expect(state.requests(1_500)).toBe(10);
      expect(state.requests(2_000)).toBe(0);
    },
  );
});

describe('rejectionProbability() with arguments left out', () => {
  it.each([
    [[], 'requests must be a number >= 0, got nothing'],
    [[10], 'accepts must be a number >= 0, got nothing'],
    [[10, 1], 'k must be a number in [1, 1000], got nothing'],
    [[10, 1, 2], 'padding must be a number in [1, 1000000000], got nothing'],
  ])('(%j) is a TypeError', (args, message) => {
    const call = () => (rejectionProbability as (...a: unknown[]) => number)(...args);
    expect(call).toThrow(new TypeError(`rejectionProbability: ${message}`));
  });
});
