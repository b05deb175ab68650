/**
 * AdaptiveHedging's methods, and the options of adaptive hedging and the cancel limit, from plain JS: a bad
 * argument is refused at the call, naming the method, the argument, what it takes and what it got; one of our
 * objects passed where options go says so, rather than naming one of its fields as an unknown option.
 */
import { describe, expect, it } from 'vitest';
import { AdaptiveHedging, resolveAdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { resolveCancelLimits } from '../../src/hedging/cancel-rate-limit-option.js';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

const method = '/pkg.Service/Method';
const adaptive = () => new AdaptiveHedging({ clock: new FakeClock(0), budget: false });

describe('AdaptiveHedging.whenAnswered(method, release)', () => {
  it.each([
    [5, '5'],
    [undefined, 'nothing'],
    [{}, '{}'],
  ])('refuses %j as release at the call', (release, shown) => {
    const ah = adaptive();
    expect(() => ah.whenAnswered(method, release as never)).toThrow(
      new TypeError(`AdaptiveHedging.whenAnswered: release must be a function, got ${shown}`),
    );
    // Nothing was held: an answer releases nothing (it threw here before).
    expect(() => ah.answered(method)).not.toThrow();
  });
});

describe('AdaptiveHedging.delayFor(method, configuredDelayMs)', () => {
  it.each([
    ['50', TypeError, '"50"; did you mean 50 (a number, not a string)?'],
    [Number.NaN, TypeError, 'NaN'],
    [undefined, TypeError, 'nothing'],
    [-1, RangeError, '-1'],
    [Number.POSITIVE_INFINITY, RangeError, 'Infinity'],
  ] as const)('refuses %j', (configured, type, shown) => {
    const call = () => adaptive().delayFor(method, configured as never);
    expect(call).toThrow(type);
    expect(call).toThrow(
      `AdaptiveHedging.delayFor: configuredDelayMs must be a number >= 0 (ms), got ${shown}`,
    );
    // A valid one is the delay until the method has one of its own.
    expect(adaptive().delayFor(method, 0)).toEqual({ delayMs: 0, adaptive: false });
  });
});

describe('AdaptiveHedging.recordOutcome(method, ...)', () => {
  it.each([
    [undefined, 'nothing'],
    [{}, '{}'],
    [42, '42'],
  ])('refuses %j as the method, and records nothing', (bad, shown) => {
    const ah = adaptive();
    expect(() => ah.recordOutcome(bad as never, 50, 10)).toThrow(
      new TypeError(
        `AdaptiveHedging.recordOutcome: method must be a method path such as "/pkg.Service/Method", got ${shown}`,
      ),
    );
    expect([...ah.currentDelays().keys()]).toEqual([]);
  });
});

describe('an instance where an options object is expected', () => {
  it('a HedgeBudget as adaptiveHedging', () => {
    expect(() => resolveAdaptiveHedging(new HedgeBudget() as never)).toThrow(
      new TypeError(
        'createRetryInterceptor: options.adaptiveHedging: got an instance of HedgeBudget where an options object is expected (known options: maxExtraLoad, recentCalls, minDelayMs, maxDelayMs, windowMs, windowBins, budget, holdInStalls, maxMethods, clock)',
      ),
    );
  });

  it('a RetryThrottle as cancelRateLimit', () => {
    const throttle = new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 });
    expect(() => resolveCancelLimits(throttle as never)).toThrow(
      new TypeError(
        'createRetryInterceptor: options.cancelRateLimit: got an instance of RetryThrottle where an options object is expected (known options: ratePerSecond, burst, loserCapMs, clock)',
      ),
    );
  });

  it("a HedgeBudget as AdaptiveHedging's budget: it takes the budget's options", () => {
    const message =
      "got an instance of HedgeBudget where an options object is expected; it takes the budget's options (minPerSecond, ttlMs, chanceSd), not an instance: adaptive hedging makes its own budget";
    expect(() => new AdaptiveHedging({ budget: new HedgeBudget() as never })).toThrow(
      new TypeError(`AdaptiveHedging: options.budget: ${message}`),
    );
    expect(() => resolveAdaptiveHedging({ budget: new HedgeBudget() as never })).toThrow(
      new TypeError(`createRetryInterceptor: options.adaptiveHedging.budget: ${message}`),
    );
    // A plain object's unknown key is still named as one.
    expect(() => resolveAdaptiveHedging({ name: 'x' } as never)).toThrow(
      /^createRetryInterceptor: options\.adaptiveHedging\.name is not an option/,
    );
  });
});
