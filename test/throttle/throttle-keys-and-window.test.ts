import { describe, expect, it } from 'vitest';
import { serviceOfMethod } from '../../src/throttle/adaptive-throttle.js';
import {
  AdaptiveThrottleState,
  resolveAdaptiveThrottleRule,
} from '../../src/throttle/adaptive-throttle-rule.js';
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

  it('forgets what it counted one window after the clock stepped back by a window or more, not once the clock is back', () => {
    const window = new SlidingWindow(10_000, 10, 1);
    const hour = 3_600_000;
    window.add(hour + 5_000, 0, 1);
    window.add(5_000, 0, 1); // the clock stepped back an hour (an NTP correction, a restored VM)
    expect(window.sum(5_000, 0)).toBe(2);
    expect(window.sum(14_000, 0)).toBe(2); // 9 s after the step: both still inside the 10 s window
    expect(window.sum(15_000, 0)).toBe(0); // 10 s after it: both gone, rather than an hour later
    window.add(16_000, 0, 1);
    expect(window.sum(25_000, 0)).toBe(1);
    expect(window.sum(26_000, 0)).toBe(0);
  });
});

describe('AdaptiveThrottleState after the clock stepped back by more than a window', () => {
  it('recovers one window after the backend is back, as with a clock that runs on', () => {
    const state = new AdaptiveThrottleState({ windowMs: 1_000 });
    const start = 1_000_000_000;
    for (let i = 0; i < 100; i++) state.recordResponse(start, false); // an outage
    const stepped = start - 3_600_000; // the clock steps back an hour
    for (let i = 0; i < 100; i++) state.recordResponse(stepped, false);
    expect(state.probability(stepped)).toBeGreaterThan(0.9);
    // The backend answers again; two windows later the failures are forgotten.
    expect(state.probability(stepped + 2_000)).toBe(0);
    expect(state.requests(stepped + 2_000)).toBe(0);
  });
});

describe('the maxRejectionProbability range error', () => {
  it('names the option', () => {
    expect(() => resolveAdaptiveThrottleRule('W', { maxRejectionProbability: 1.01 })).toThrow(
      new RangeError('W.maxRejectionProbability must be a number in (0, 1], got 1.01'),
    );
  });
});
