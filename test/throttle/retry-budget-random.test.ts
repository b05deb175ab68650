/**
 * RetryBudget's `random` is checked as the interceptor's is: not a function is refused at construction, and a draw
 * outside [0, 1) (or a throw) is one of Math.random's, warned once, so that it can neither let every fractional
 * retry through (-1) nor refuse them all (5, NaN).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetryBudget } from '../../src/throttle/retry-budget.js';

/** A budget holding 0.2 of a retry: 1 call made at maxExtraLoad 0.2, no floor. */
function fractionalBudget(random: () => number): RetryBudget {
  const budget = new RetryBudget({ clock: { now: () => 0 }, random });
  budget.recordCall();
  expect(budget.tokens).toBeCloseTo(0.2, 12);
  return budget;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('new RetryBudget({ random })', () => {
  it.each([
    [5, '5'],
    [null, 'null'],
    ['Math.random', '"Math.random"'],
  ])('refuses %j', (random, shown) => {
    expect(() => new RetryBudget({ random: random as never })).toThrow(
      new TypeError(
        `RetryBudget: options.random must be a function returning a number in [0, 1), got ${shown}`,
      ),
    );
  });

  it.each([
    [-1, '-1'],
    [5, '5'],
    [Number.NaN, 'NaN'],
  ])('a draw of %s is taken from Math.random instead, warned once', (value, shown) => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    vi.spyOn(Math, 'random').mockReturnValue(0.1); // under the 0.2 held: the retry goes
    expect(fractionalBudget(() => value).allowAttempt('retry')).toBe(true);
    vi.spyOn(Math, 'random').mockReturnValue(0.9); // over it: refused
    const budget = fractionalBudget(() => value);
    expect(budget.allowAttempt('retry')).toBe(false);
    expect(budget.allowAttempt('retry')).toBe(false);
    expect(budget.tokens).toBeCloseTo(0.2, 12); // never below what the calls paid for
    const messages = warn.mock.calls.map(([message]) => String(message));
    // Two budgets met the same bad draw: the same warning, given once in the process.
    expect(messages).toEqual([
      `grpc-retry-hedging: RetryBudget: options.random must return a number in [0, 1), got ${shown}; Math.random is drawn instead; further errors of it are not reported`,
    ]);
    expect(warn.mock.calls[0]?.[1]).toEqual({ code: 'GRPC_RETRY_HEDGING_HOOK_ERROR' });
    // A draw in [0, 1) is used as it is, unwarned.
    expect(fractionalBudget(() => 0.1).allowAttempt('retry')).toBe(true);
    expect(fractionalBudget(() => 0.3).allowAttempt('retry')).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe('the draws of a RetryBudget', () => {
  it('draws only for a fraction of a retry: not when it holds none, nor when it holds a whole one', () => {
    const random = vi.fn(() => 0);
    const budget = new RetryBudget({ clock: { now: () => 0 }, random });
    expect(budget.allowAttempt('retry')).toBe(false); // holds nothing
    for (let i = 0; i < 5; i++) budget.recordCall();
    expect(budget.allowAttempt('retry')).toBe(true); // a whole one
    expect(budget.allowAttempt('retry')).toBe(false); // nothing again
    expect(random).not.toHaveBeenCalled();
    budget.recordCall(); // 0.2 of one
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(random).toHaveBeenCalledOnce();
    expect(budget.allowAttempt('retry')).toBe(false); // below zero
    expect(random).toHaveBeenCalledOnce();
  });

  it('lets a fraction f through on a draw under f, not on a draw of f itself', () => {
    const half = (draw: number) => {
      const budget = new RetryBudget({ clock: { now: () => 0 }, maxExtraLoad: 0.5, random: () => draw });
      budget.recordCall();
      return budget.allowAttempt('retry');
    };
    expect(half(0.5)).toBe(false);
    expect(half(0.4999)).toBe(true);
  });

  it('without random, draws from Math.random, unwarned', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const draw = vi.spyOn(Math, 'random').mockReturnValue(0.1);
    const budget = new RetryBudget({ clock: { now: () => 0 } });
    budget.recordCall(); // 0.2 of a retry
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(draw).toHaveBeenCalledOnce();
    expect(warn).not.toHaveBeenCalled();
  });
});
