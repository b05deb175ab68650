/**
 * The hedging-side options that take an object or a shared instance (cancelRateLimit, adaptiveHedging, the hedge
 * budget): what is taken for an instance, what for options, and the errors for the rest.
 */
import { describe, expect, it } from 'vitest';
import { resolveAdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { resolveCancelLimits } from '../../src/hedging/cancel-rate-limit-option.js';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { FakeClock } from './fake-clock.js';

describe('cancelRateLimit', () => {
  const NOT_AN_OPTION =
    'createRetryInterceptor: options.cancelRateLimit must be true, false, an options object or a CancelRateLimiter';

  it.each([null, [], 5])('rejects %j', (option) => {
    expect(() => resolveCancelLimits(option as never)).toThrow(TypeError);
    expect(() => resolveCancelLimits(option as never)).toThrow(`${NOT_AN_OPTION}, got `);
  });

  it('takes an object with tryCancel as a shared limiter, and any other object as options', () => {
    const shared = { tryCancel: () => true, loserCapMs: 30_000 };
    expect(resolveCancelLimits(shared as never)?.forTarget('a:1')).toBe(shared);
    expect(() => resolveCancelLimits({ tryCancel: true } as never)).toThrow(
      /options\.cancelRateLimit\.tryCancel is not an option/,
    );
  });

  it.each<[unknown, string]>([
    [undefined, 'got nothing'],
    ['5', 'got "5"'],
    [0, 'got 0'],
    [Number.NaN, 'got NaN'],
    [Number.POSITIVE_INFINITY, 'got Infinity'],
  ])('refuses a limiter whose loserCapMs is %o (a timer would read it as 1 ms)', (loserCapMs, got) => {
    expect(() => resolveCancelLimits({ tryCancel: () => true, loserCapMs } as never)).toThrow(
      new TypeError(
        `createRetryInterceptor: options.cancelRateLimit.loserCapMs must be a number > 0 (ms) on a limiter given as the option, ${got}`,
      ),
    );
  });

  it('the constructor rejects what is not an options object, and numbers that are not finite', () => {
    expect(() => new CancelRateLimiter(null as never)).toThrow(
      new TypeError('CancelRateLimiter: options must be an object, got null'),
    );
    expect(() => new CancelRateLimiter(5 as never)).toThrow(/options must be an object/);
    for (const [ratePerSecond, shown] of [
      ['5', '"5"'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      expect(() => new CancelRateLimiter({ ratePerSecond: ratePerSecond as never })).toThrow(
        `CancelRateLimiter: options.ratePerSecond must be a number >= 0, got ${shown}`,
      );
    }
    for (const [loserCapMs, shown] of [
      ['5', '"5"'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
    ] as const) {
      expect(() => new CancelRateLimiter({ loserCapMs: loserCapMs as never })).toThrow(
        `CancelRateLimiter: options.loserCapMs must be a number > 0 (ms), got ${shown}`,
      );
    }
    expect(new CancelRateLimiter({ ratePerSecond: 0, loserCapMs: 0.5 }).loserCapMs).toBe(0.5);
  });
});

describe('adaptiveHedging', () => {
  const NOT_AN_OPTION =
    'createRetryInterceptor: options.adaptiveHedging must be true, false, an options object or an AdaptiveHedging';

  it.each([null, [], 5])('rejects %j', (option) => {
    expect(() => resolveAdaptiveHedging(option as never)).toThrow(TypeError);
    expect(() => resolveAdaptiveHedging(option as never)).toThrow(`${NOT_AN_OPTION}, got `);
  });

  it('takes an object only when it has delayFor, recordOutcome and currentDelays; otherwise reads it as options', () => {
    const f = () => undefined;
    const instance = { delayFor: f, recordOutcome: f, currentDelays: f };
    expect(resolveAdaptiveHedging(instance as never)).toBe(instance);
    for (const partial of [
      { delayFor: f, record: f },
      { delayFor: f, currentDelays: f },
      { recordOutcome: f, currentDelays: f },
    ]) {
      expect(() => resolveAdaptiveHedging(partial as never)).toThrow(/is not an option/);
    }
  });
});

describe('HedgeBudget', () => {
  it('rejects what is not an options object, and a maxExtraLoad outside [0, 1) or not a number', () => {
    for (const options of [null, 5]) {
      expect(() => new HedgeBudget(options as never)).toThrow(TypeError);
      expect(() => new HedgeBudget(options as never)).toThrow('HedgeBudget: options must be an object, got ');
    }
    for (const [maxExtraLoad, shown] of [
      [-0.01, '-0.01'],
      [1, '1'],
      ['0.1', '"0.1"'],
    ] as const) {
      expect(() => new HedgeBudget({ maxExtraLoad: maxExtraLoad as never })).toThrow(
        `HedgeBudget: options.maxExtraLoad must be a number in [0, 1), got ${shown}`,
      );
    }
    expect(new HedgeBudget({ maxExtraLoad: 0 }).maxExtraLoad).toBe(0);
  });

  it('counts the hedges it refused', () => {
    const budget = new HedgeBudget({
      clock: new FakeClock(),
      minPerSecond: 0,
      maxExtraLoad: 0.5,
      chanceSd: 0,
    });
    budget.recordCall();
    budget.recordCall();
    expect([
      budget.allowAttempt('hedge'),
      budget.allowAttempt('hedge'),
      budget.allowAttempt('hedge'),
    ]).toEqual([true, false, false]);
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(budget.denied).toBe(2);
  });
});
