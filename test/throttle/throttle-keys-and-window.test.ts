import { describe, expect, it } from 'vitest';
import { serviceOfMethod } from '../../src/throttle/adaptive-throttle.js';
import { resolveAdaptiveThrottleRule } from '../../src/throttle/adaptive-throttle-rule.js';
import { SlidingWindow } from '../../src/throttle/sliding-window.js';

describe('serviceOfMethod (the default throttle key)', () => {
  it('is the service of a method path, with or without its leading slash', () => {
    expect(serviceOfMethod('/pkg.Greeter/SayHello')).toBe('pkg.Greeter');
    expect(serviceOfMethod('pkg.Greeter/SayHello')).toBe('pkg.Greeter');
  });

  it('is the whole path when it names no service', () => {
    expect(serviceOfMethod('/SayHello')).toBe('/SayHello');
  });
});

describe('SlidingWindow with a clock that steps back', () => {
  it('counts into the current bin and keeps what it held', () => {
    const window = new SlidingWindow(10_000, 10, 1);
    window.add(5_000, 0, 1);
    window.add(3_000, 0, 1); // the clock stepped back two bins
    expect(window.sum(6_000, 0)).toBe(2);
    expect(window.sum(14_000, 0)).toBe(2); // both in the bin of t = 5 s, still inside the 10 s window
    expect(window.sum(15_000, 0)).toBe(0);
  });
});

describe('the maxRejectionProbability range error', () => {
  it('names the option', () => {
    expect(() => resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1.01 })).toThrow(
      new RangeError('W.maxRejectionProbability must be a number in (0, 1], got 1.01'),
    );
  });
});
