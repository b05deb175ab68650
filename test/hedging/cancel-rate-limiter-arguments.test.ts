/**
 * CancelRateLimiter.whenAllowed from plain JS: a cancel that is not a function is refused at the call, not called
 * later from a timer (where it threw uncaught and took the process down).
 */
import { describe, expect, it } from 'vitest';
import { CancelRateLimiter } from '../../src/hedging/cancel-rate-limiter.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

describe('CancelRateLimiter.whenAllowed(cancel)', () => {
  it.each([
    [5, '5'],
    [undefined, 'nothing'],
    [null, 'null'],
    ['cancel', '"cancel"'],
  ])('refuses %j at the call, and queues nothing', (cancel, shown) => {
    const clock = new FakeClock(0);
    const limiter = new CancelRateLimiter({ clock });
    expect(() => limiter.whenAllowed(cancel as never)).toThrow(
      new TypeError(`CancelRateLimiter.whenAllowed: cancel must be a function, got ${shown}`),
    );
    expect(limiter.queued).toBe(0);
    expect(clock.nextDueInMs()).toBeUndefined();
    // A function still runs once the limit allows it.
    let cancelled = 0;
    limiter.whenAllowed(() => {
      cancelled += 1;
    });
    clock.advance(100);
    expect(cancelled).toBe(1);
  });
});
