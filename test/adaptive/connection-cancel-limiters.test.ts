/**
 * The per-connection cancel limits: one limiter per target, shared by every interceptor with the same settings and
 * clock; limiters at rest dropped once many are held, never one that is spending or has losers waiting.
 */
import { describe, expect, it, vi } from 'vitest';
import { checkCancelRateLimiterOptions } from '../../src/hedging/cancel-rate-limiter.js';
import {
  oneLimiterForAll,
  PerConnectionCancelLimits,
  sharedPerConnectionLimits,
} from '../../src/hedging/connection-cancel-limiters.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

const settings = (clock: FakeClock, burst = 2) =>
  checkCancelRateLimiterOptions({ clock, burst, ratePerSecond: 1 }, 'test');

describe('PerConnectionCancelLimits', () => {
  it('keeps one limiter per target, with the settings given', () => {
    const limits = new PerConnectionCancelLimits(settings(new FakeClock(0), 3));
    const a = limits.forTarget('dns:a:1');
    expect(limits.forTarget('dns:a:1')).toBe(a);
    expect(limits.forTarget('dns:b:1')).not.toBe(a);
    expect(a).toMatchObject({ burst: 3, ratePerSecond: 1 });
    expect(limits.size).toBe(2);
  });

  it('drops limiters at rest once 64 are held, and keeps those spending or with losers waiting', () => {
    const clock = new FakeClock(0);
    const limits = new PerConnectionCancelLimits(settings(clock));
    const spending = limits.forTarget('spending');
    expect(spending.tryCancel()).toBe(true);
    const waiting = limits.forTarget('waiting');
    waiting.tryCancel();
    waiting.tryCancel();
    waiting.whenAllowed?.(() => {});
    for (let i = 0; i < 62; i++) limits.forTarget(`idle-${i}`);
    expect(limits.size).toBe(64);
    limits.forTarget('new');
    expect(limits.size).toBe(3); // spending, waiting, new
    expect(limits.forTarget('spending')).toBe(spending);
    expect(limits.forTarget('waiting')).toBe(waiting);
    expect(limits.forTarget('spending').tryCancel()).toBe(true); // still one spent, not a whole new burst
    expect(limits.forTarget('spending').tryCancel()).toBe(false);
  });

  it('keeps a limiter with losers waiting even when its burst is whole again (its timer has not run yet)', () => {
    let now = 0;
    // A clock whose timers never fire: the event loop held while time passes.
    const stalled = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const limits = new PerConnectionCancelLimits(
      checkCancelRateLimiterOptions({ clock: stalled, burst: 1 }, 'test'),
    );
    const held = limits.forTarget('held');
    held.tryCancel();
    held.whenAllowed?.(() => {});
    now += 10_000;
    expect(held).toMatchObject({ queued: 1, tokens: 1 });
    for (let i = 0; i < 63; i++) limits.forTarget(`idle-${i}`);
    limits.forTarget('new');
    expect(limits.size).toBe(2);
    expect(limits.forTarget('held')).toBe(held);
  });

  it('looks again only after the held limiters double when none is at rest', () => {
    const clock = new FakeClock(0);
    const limits = new PerConnectionCancelLimits(settings(clock, 1));
    for (let i = 0; i < 64; i++) limits.forTarget(`busy-${i}`).tryCancel();
    limits.forTarget('busy-64').tryCancel(); // a sweep: none at rest, the next once 128 are held
    expect(limits.size).toBe(65);
    clock.advance(10_000); // every limiter back to its whole burst
    for (let i = 65; i < 128; i++) limits.forTarget(`busy-${i}`);
    expect(limits.size).toBe(128);
    limits.forTarget('one-more');
    expect(limits.size).toBe(1);
  });
});

describe('sharedPerConnectionLimits', () => {
  it('is one per clock and settings', () => {
    const clock = new FakeClock(0);
    const limits = sharedPerConnectionLimits(settings(clock));
    expect(sharedPerConnectionLimits(settings(clock))).toBe(limits);
    expect(sharedPerConnectionLimits(settings(clock, 3))).not.toBe(limits);
    expect(sharedPerConnectionLimits(settings(new FakeClock(0)))).not.toBe(limits);
  });
});

describe('oneLimiterForAll', () => {
  it('answers the same limiter for every target', () => {
    const limiter = { tryCancel: () => true, loserCapMs: 1 };
    const limits = oneLimiterForAll(limiter);
    expect(limits.forTarget('a')).toBe(limiter);
    expect(limits.forTarget('b')).toBe(limiter);
  });
});

// An application may load two copies of the package (its ESM and CJS builds: an ESM app with a CommonJS library),
// each with its own modules; their interceptors reach one server over one connection, whose guard counts the
// resets of both. Two module instances stand for the two copies here.
describe('the cancel-rate limits of interceptors of two copies of the package', () => {
  async function copy() {
    vi.resetModules();
    const { resolveInterceptorOptions } = await import('../../src/retry/interceptor-options.js');
    return (options?: object) => resolveInterceptorOptions(options).cancelLimits?.forTarget('dns:orders:443');
  }

  it('are one per connection for both, on the system clock (the default) with the same settings', async () => {
    const first = await copy();
    const second = await copy();
    expect(second).not.toBe(first);
    const limiter = first();
    expect(limiter).toBeDefined();
    expect(second()).toBe(limiter);
    const settings = { cancelRateLimit: { burst: 3 } };
    expect(second(settings)).toBe(first(settings));
    expect(second(settings)).not.toBe(limiter);
  });

  it('are one per connection for both on one clock of the application, not on two', async () => {
    const clock = new FakeClock(0);
    const first = await copy();
    const second = await copy();
    expect(second({ clock })).toBe(first({ clock }));
    expect(second({ clock: new FakeClock(0) })).not.toBe(first({ clock }));
  });
});
