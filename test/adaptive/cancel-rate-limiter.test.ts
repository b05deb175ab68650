import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { resolveCancelLimits } from '../../src/hedging/cancel-rate-limit-option.js';
import {
  CancelRateLimiter,
  DEFAULT_CANCEL_BURST,
  DEFAULT_CANCEL_RATE_PER_SECOND,
  DEFAULT_UNCANCELLED_LOSER_CAP_MS,
} from '../../src/hedging/cancel-rate-limiter.js';
import { FakeClock as TimerClock } from '../../src/testing/fake-clock.js';
import { FakeClock } from './fake-clock.js';

/** nghttp2's rapid-reset guard in Node 20: a burst of 1,000 RST_STREAMs, then 33 per second. */
const GUARD_BURST = 1000;
const GUARD_RATE = 33;

describe('CancelRateLimiter', () => {
  it('defaults to a burst and rate below nghttp2 guard', () => {
    const limiter = new CancelRateLimiter({ clock: new FakeClock() });
    expect(limiter.burst).toBe(DEFAULT_CANCEL_BURST);
    expect(limiter.ratePerSecond).toBe(DEFAULT_CANCEL_RATE_PER_SECOND);
    expect(limiter.loserCapMs).toBe(DEFAULT_UNCANCELLED_LOSER_CAP_MS);
    expect(DEFAULT_CANCEL_BURST).toBeLessThan(GUARD_BURST);
    expect(DEFAULT_CANCEL_RATE_PER_SECOND).toBeLessThan(GUARD_RATE);
  });

  it('allows the burst at once, then refuses until time refills it', () => {
    const clock = new FakeClock();
    const limiter = new CancelRateLimiter({ clock, burst: 10, ratePerSecond: 5 });
    let allowed = 0;
    for (let i = 0; i < 20; i++) if (limiter.tryCancel()) allowed++;
    expect(allowed).toBe(10);
    clock.advance(199);
    expect(limiter.tryCancel()).toBe(false);
    clock.advance(1);
    expect(limiter.tryCancel()).toBe(true);
    expect(limiter.tryCancel()).toBe(false);
    clock.advance(60_000);
    expect(limiter.tokens).toBe(10); // never more than the burst
  });

  it('keeps sustained cancels under the guard: the guard would never trip on what it allows', () => {
    const clock = new FakeClock();
    const limiter = new CancelRateLimiter({ clock });
    // 200 losers a second for 60 s; simulate the server's guard on what is let through.
    let guard = GUARD_BURST;
    let allowed = 0;
    for (let ms = 0; ms < 60_000; ms += 5) {
      guard = Math.min(GUARD_BURST, guard + (5 * GUARD_RATE) / 1000);
      if (limiter.tryCancel()) {
        allowed++;
        guard -= 1;
        expect(guard).toBeGreaterThanOrEqual(0);
      }
      clock.advance(5);
    }
    expect(allowed).toBeGreaterThanOrEqual(DEFAULT_CANCEL_BURST + 25 * 59);
    expect(allowed).toBeLessThanOrEqual(DEFAULT_CANCEL_BURST + 25 * 60 + 1);
  });

  it("counts the application's own cancels too: losers and the application's burst together stay under the guard", () => {
    const clock = new FakeClock();
    const limiter = new CancelRateLimiter({ clock });
    // The server's guard, fed every reset the client sends on the connection.
    let guard = GUARD_BURST;
    const reset = () => {
      guard -= 1;
      expect(guard).toBeGreaterThanOrEqual(0);
    };
    // A burst of losers first: the limiter lets its burst through.
    for (let i = 0; i < 600; i++) if (limiter.tryCancel()) reset();
    // Then the application cancels 750 calls of its own at once, which nothing refuses.
    for (let i = 0; i < 750; i++) {
      limiter.noteCancel();
      reset();
    }
    expect(limiter.tokens).toBe(-750);
    expect(limiter.tryCancel()).toBe(false);
    // The guard refills at 33/s and the limiter at 25/s: losers wait until it has room again, and never empty it.
    let firstLaterMs: number | undefined;
    let later = 0;
    for (let ms = 10; ms <= 120_000; ms += 10) {
      clock.advance(10);
      guard = Math.min(GUARD_BURST, guard + (10 * GUARD_RATE) / 1000);
      if (limiter.tryCancel()) {
        reset();
        later++;
        firstLaterMs ??= ms;
      }
    }
    // 751 tokens to win back at 25/s: about 30 s without a cancel of a loser, then 25 a second.
    expect(firstLaterMs).toBeGreaterThanOrEqual(30_000);
    expect(firstLaterMs).toBeLessThanOrEqual(30_100);
    expect(later).toBeGreaterThanOrEqual(25 * 89);
  });

  it("the application's cancels take it no lower than the guard's burst less its own", () => {
    const limiter = new CancelRateLimiter({ clock: new FakeClock(), burst: 100 });
    for (let i = 0; i < 5_000; i++) limiter.noteCancel();
    expect(limiter.tokens).toBe(-900);
    const big = new CancelRateLimiter({ clock: new FakeClock(), burst: 2_000 });
    for (let i = 0; i < 5_000; i++) big.noteCancel();
    expect(big.tokens).toBe(0);
  });

  it('cancels what it refused as the rate allows, oldest first, skipping what was withdrawn', () => {
    const clock = new TimerClock(0);
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 10 });
    expect(limiter.tryCancel()).toBe(true);
    const done: string[] = [];
    limiter.whenAllowed(() => done.push('a'));
    const withdrawB = limiter.whenAllowed(() => done.push('b'));
    limiter.whenAllowed(() => done.push('c'));
    expect(limiter.queued).toBe(3);
    withdrawB();
    expect(limiter.queued).toBe(2);
    clock.advance(99);
    expect(done).toEqual([]);
    clock.advance(1);
    expect(done).toEqual(['a']);
    clock.advance(100);
    expect(done).toEqual(['a', 'c']);
    expect(limiter.queued).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(limiter.tryCancel()).toBe(false); // each queued cancel spent its token
  });

  it('cancelWaiting cancels every waiting loser at once, in order, skips the withdrawn and leaves no timer', () => {
    const clock = new TimerClock(0);
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 1 });
    expect(limiter.tryCancel()).toBe(true);
    const done: string[] = [];
    limiter.whenAllowed(() => done.push('a'));
    const withdrawB = limiter.whenAllowed(() => done.push('b'));
    limiter.whenAllowed(() => done.push('c'));
    withdrawB();
    expect(clock.pendingTimers).toBe(1);
    expect(limiter.cancelWaiting()).toBe(2);
    expect(done).toEqual(['a', 'c']);
    expect(limiter.queued).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(limiter.cancelWaiting()).toBe(0);
    // They were resets on the connection: the bucket is below zero, and a new loser waits its turn.
    clock.advance(1_000);
    expect(limiter.tryCancel()).toBe(false);
    clock.advance(2_000);
    expect(limiter.tryCancel()).toBe(true);
  });

  it('lets what waits go first: while a loser is queued, a new one is not cancelled ahead of it', () => {
    let now = 0;
    // A clock whose timers never fire: time passes, and the queue has not yet taken its token.
    const clock = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 10 });
    expect(limiter.tryCancel()).toBe(true);
    const withdraw = limiter.whenAllowed(() => {});
    now += 1_000; // ten tokens' worth
    expect(limiter.tryCancel()).toBe(false);
    withdraw();
    expect(limiter.tryCancel()).toBe(true);
  });

  it('leaves no timer behind once everything queued was withdrawn', () => {
    const clock = new TimerClock(0);
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 0.01 });
    limiter.tryCancel();
    const withdraw = limiter.whenAllowed(() => {
      throw new Error('withdrawn: never runs');
    });
    expect(clock.pendingTimers).toBe(1);
    withdraw();
    withdraw();
    expect(clock.pendingTimers).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it('does not refill or break when the clock goes back', () => {
    const clock = new FakeClock();
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 1 });
    expect(limiter.tryCancel()).toBe(true);
    expect(limiter.tryCancel()).toBe(false);
    clock.set(clock.now() - 10_000);
    expect(limiter.tryCancel()).toBe(false);
    clock.advance(1_000);
    expect(limiter.tryCancel()).toBe(true);
  });

  it('with rate 0 allows only the burst, ever', () => {
    const clock = new FakeClock();
    const limiter = new CancelRateLimiter({ clock, burst: 3, ratePerSecond: 0 });
    let allowed = 0;
    for (let i = 0; i < 10; i++) {
      if (limiter.tryCancel()) allowed++;
      clock.advance(10_000);
    }
    expect(allowed).toBe(3);
  });

  it('rejects invalid options with an error that names the option', () => {
    expect(() => new CancelRateLimiter({ burst: 0 })).toThrow(
      /CancelRateLimiter: options\.burst must be an integer >= 1, got 0/,
    );
    expect(() => new CancelRateLimiter({ ratePerSecond: -1 })).toThrow(/options\.ratePerSecond/);
    expect(() => new CancelRateLimiter({ loserCapMs: 0 })).toThrow(/options\.loserCapMs/);
    expect(() => new CancelRateLimiter({ clock: {} as never })).toThrow(/options\.clock/);
    expect(() => new CancelRateLimiter({ rate: 1 } as never)).toThrow(/options\.rate is not an option/);
  });
});

describe('resolveCancelLimits (the interceptor option)', () => {
  it('is on by default, per connection, and shared by every interceptor with the same settings', () => {
    const byDefault = resolveCancelLimits(undefined);
    const a = byDefault?.forTarget('a:1');
    expect(a).toBeInstanceOf(CancelRateLimiter);
    expect(a).toMatchObject({ burst: 250, ratePerSecond: 25, loserCapMs: 30_000 });
    expect(byDefault?.forTarget('a:1')).toBe(a);
    expect(byDefault?.forTarget('b:1')).not.toBe(a);
    expect(resolveCancelLimits(true)?.forTarget('a:1')).toBe(a);
    expect(resolveCancelLimits({})?.forTarget('a:1')).toBe(a);
    expect(resolveCancelLimits({ burst: 250 })?.forTarget('a:1')).toBe(a);
  });

  it('options set the limit per connection; other settings or another clock, limits of their own', () => {
    const seven = resolveCancelLimits({ burst: 7 })?.forTarget('a:1');
    expect(seven).toMatchObject({ burst: 7 });
    expect(resolveCancelLimits({ burst: 7 })?.forTarget('a:1')).toBe(seven);
    expect(resolveCancelLimits({ burst: 8 })?.forTarget('a:1')).not.toBe(seven);
    expect(resolveCancelLimits({ burst: 7, ratePerSecond: 24 })?.forTarget('a:1')).not.toBe(seven);
    expect(resolveCancelLimits({ burst: 7, loserCapMs: 1 })?.forTarget('a:1')).not.toBe(seven);
    const clock = new TimerClock(0);
    const onFake = resolveCancelLimits({ burst: 7, clock })?.forTarget('a:1');
    expect(onFake).not.toBe(seven);
    expect(resolveCancelLimits({ burst: 7, clock })?.forTarget('a:1')).toBe(onFake);
  });

  it('is off for false, passes a limiter of yours through for every connection, and names bad options', () => {
    expect(resolveCancelLimits(false)).toBeUndefined();
    const shared = new CancelRateLimiter();
    const limits = resolveCancelLimits(shared);
    expect(limits?.forTarget('a:1')).toBe(shared);
    expect(limits?.forTarget('b:1')).toBe(shared);
    expect(() => resolveCancelLimits({ burst: -1 })).toThrow(
      /createRetryInterceptor: options\.cancelRateLimit\.burst/,
    );
    expect(() => resolveCancelLimits(5 as never)).toThrow(/options\.cancelRateLimit must be/);
  });
});

describe('CancelRateLimiter.cancelWaiting with a cancel that withdraws another', () => {
  it('leaves the queue empty, not below it, and runs each cancel once', () => {
    const clock = new TimerClock(0);
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 1 });
    limiter.tryCancel();
    const ran: string[] = [];
    let withdrawB: () => void = () => {};
    limiter.whenAllowed(() => {
      ran.push('a');
      withdrawB(); // a's call ended, and with it b's loser
    });
    withdrawB = limiter.whenAllowed(() => ran.push('b'));
    expect(limiter.queued).toBe(2);
    limiter.cancelWaiting();
    expect(limiter.queued).toBe(0);
    expect(ran).toEqual(['a', 'b']);
    clock.advance(10_000);
    expect(ran).toEqual(['a', 'b']);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('CancelRateLimiter: withdrawn cancels behind a loser that runs on', () => {
  /** Node's collector, reached without --expose-gc on the command line. */
  function collector(): () => void {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as () => void;
  }

  it('let go of what their cancel holds (the whole call), and are never run', async () => {
    const clock = new TimerClock(0);
    const limiter = new CancelRateLimiter({ clock, burst: 1, ratePerSecond: 1 });
    expect(limiter.tryCancel()).toBe(true); // the burst spent: the next cancels wait
    let headCancelled = 0;
    limiter.whenAllowed(() => (headCancelled += 1)); // a loser that runs on, at the head of the queue
    const refs: WeakRef<object>[] = [];
    let withdrawnRan = 0;
    const queueAndWithdraw = () => {
      for (let i = 0; i < 2_000; i++) {
        const call = { buffers: new Uint8Array(1_024) }; // what an attempt's cancel closes over
        refs.push(new WeakRef(call));
        const withdraw = limiter.whenAllowed(() => {
          withdrawnRan += call.buffers.length;
        });
        withdraw(); // the loser answered by itself
      }
    };
    queueAndWithdraw();
    expect(limiter.queued).toBe(1);
    await new Promise((resolve) => setImmediate(resolve)); // WeakRef targets are kept to the end of their job
    collector()();
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    clock.advance(1_000);
    expect(headCancelled).toBe(1);
    expect(withdrawnRan).toBe(0);
    expect(limiter.queued).toBe(0);
  });
});
