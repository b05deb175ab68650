import { describe, expect, it, vi } from 'vitest';
import { isRetryGate } from '../../src/shared/retry-gate.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';

function fakeClock(start = 1_000_000) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

/** Withdraw until refused; returns how many were allowed. */
function drain(budget: RetryBudget, kind: 'retry' | 'hedge' = 'retry'): number {
  let n = 0;
  while (budget.allowAttempt(kind)) {
    n += 1;
    if (n > 1e6) throw new Error('budget never ran out');
  }
  return n;
}

describe('RetryBudget', () => {
  it('is a retry gate with Finagle defaults, except no absolute floor', () => {
    const budget = new RetryBudget({ clock: fakeClock() });
    expect(isRetryGate(budget)).toBe(true);
    expect(budget.name).toBe('retry-budget');
    expect([budget.maxExtraLoad, budget.minPerSecond, budget.ttlMs, budget.chanceSd]).toEqual([
      0.2, 0, 10_000, 0,
    ]);
    expect(budget.allowAttempt('retry')).toBe(false); // nothing deposited, nothing to spend
  });

  it('holds room for chance of chanceSd standard deviations of the retries paid for, which expires with them', () => {
    let now = 0;
    const budget = new RetryBudget({ clock: { now: () => now }, maxExtraLoad: 0.2, chanceSd: 2 });
    for (let i = 0; i < 500; i++) budget.recordCall();
    // 100 retries paid for, and 2 × √100 more; spending them does not shrink the room.
    expect(budget.tokens).toBe(120);
    expect(drain(budget)).toBe(120);
    now += 10_000;
    expect(budget.tokens).toBe(0);
  });

  it('holds a reserve of minPerSecond × ttl retries with no traffic', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minPerSecond: 10 });
    expect(budget.tokens).toBe(100);
    expect(drain(budget)).toBe(100);
    expect(budget.denied).toBe(1);
  });

  it('adds maxExtraLoad of a retry per call: 1,000 calls give 200 retries beyond the reserve', () => {
    const budget = new RetryBudget({ clock: fakeClock(), random: () => 0.999 });
    expect(budget.allowAttempt('retry')).toBe(false);
    for (let i = 0; i < 1000; i++) budget.recordCall();
    expect(drain(budget)).toBe(200);
  });

  it.each([
    [0.0004, 20_000, 8],
    [0.0015, 10_000, 15],
    [0.0025, 10_000, 25],
  ])(
    'holds maxExtraLoad %s of a retry per call, not that rounded to thousandths: %i calls give %i retries',
    (maxExtraLoad, calls, retries) => {
      const budget = new RetryBudget({ clock: fakeClock(), maxExtraLoad, random: () => 0.999 });
      for (let i = 0; i < calls; i++) budget.recordCall();
      expect(budget.tokens).toBeCloseTo(retries, 9);
      expect(drain(budget)).toBe(retries);
    },
  );

  it('charges hedges like retries', () => {
    const budget = new RetryBudget({ clock: fakeClock(), maxExtraLoad: 0.5, random: () => 0.999 });
    for (let i = 0; i < 10; i++) budget.recordCall();
    expect(budget.allowAttempt('hedge')).toBe(true);
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(drain(budget, 'hedge')).toBe(3);
  });

  it('forgets deposits after the ttl', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, ttlMs: 10_000, random: () => 0.999 });
    for (let i = 0; i < 100; i++) budget.recordCall();
    expect(budget.tokens).toBe(20);
    clock.t = 9_999; // still inside the window
    expect(budget.tokens).toBe(20);
    clock.t = 10_000; // the bin of t = 0 has left the window
    expect(budget.tokens).toBe(0);
    expect(budget.allowAttempt('retry')).toBe(false);
  });

  it('forgets withdrawals after the ttl, so the reserve refills at minPerSecond', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, minPerSecond: 10, ttlMs: 5_000 });
    expect(drain(budget)).toBe(50);
    clock.t = 4_999;
    expect(budget.allowAttempt('retry')).toBe(false);
    clock.t = 5_000;
    expect(drain(budget)).toBe(50);
  });

  it('refills a ttl after it was drained, even when the clock stepped back by more than the ttl meanwhile', () => {
    const clock = fakeClock(3_600_000);
    const budget = new RetryBudget({ clock, minPerSecond: 10, ttlMs: 5_000 });
    expect(drain(budget)).toBe(50);
    clock.t = 0; // the clock steps back an hour
    expect(budget.allowAttempt('retry')).toBe(false);
    clock.t = 5_000; // a ttl later: the withdrawals are forgotten, not an hour later
    expect(drain(budget)).toBe(50);
  });

  it('keeps retries within maxExtraLoad × calls + minPerSecond × window under steady load', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, maxExtraLoad: 0.2, minPerSecond: 10, ttlMs: 10_000 });
    // 100 calls/s for 60 s, each wanting one retry.
    let retries = 0;
    const perSecond: number[] = [];
    for (let ms = 0; ms < 60_000; ms += 10) {
      clock.t = ms;
      budget.recordCall();
      if (budget.allowAttempt('retry')) retries += 1;
      if (ms % 1000 === 990) perSecond.push(retries);
    }
    // After the first window, retries settle at 20% of 100 calls/s + 10/s = 30/s.
    const lastWindow = perSecond[59]! - perSecond[49]!;
    expect(lastWindow).toBeGreaterThanOrEqual(290);
    expect(lastWindow).toBeLessThanOrEqual(310);
    // The first window may also spend the standing reserve: at most 100 + 20% of 1,000 calls + deposits.
    expect(perSecond[9]).toBeLessThanOrEqual(100 + 200 + 1);
  });

  it('lets a fraction of a retry through with that probability, leaving the budget below zero', () => {
    const draws = [0.49, 0.5];
    const budget = new RetryBudget({ clock: fakeClock(), random: () => draws.shift() ?? 0 });
    for (let i = 0; i < 5; i++) budget.recordCall(); // 5 × 0.2: one whole retry
    for (let i = 0; i < 2; i++) budget.recordCall(); // and 0.4 of another
    expect(budget.allowAttempt('retry')).toBe(true); // the whole one: no draw
    expect(budget.tokens).toBeCloseTo(0.4, 10);
    expect(budget.allowAttempt('retry')).toBe(false); // draw 0.49 is not under 0.4
    budget.recordCall(); // 0.6 now
    expect(budget.allowAttempt('retry')).toBe(true); // draw 0.5 < 0.6
    expect(budget.tokens).toBeCloseTo(-0.4, 10);
    expect(budget.allowAttempt('retry')).toBe(false); // below zero: no draw, no retry
    expect(draws).toEqual([]);
    expect(budget.denied).toBe(2);
  });

  it('holds a fleet of light clients to the maxExtraLoad: 10,000 budgets, 8 calls each per window, every call failing', () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    const clock = fakeClock(0);
    let calls = 0;
    let retries = 0;
    for (let client = 0; client < 10_000; client++) {
      const budget = new RetryBudget({ clock, random });
      // 8 calls spread over the 10 s window, each retried until the budget refuses (up to 4 retries).
      for (let i = 0; i < 8; i++) {
        budget.recordCall();
        calls += 1;
        for (let r = 0; r < 4 && budget.allowAttempt('retry'); r++) retries += 1;
      }
    }
    // A per-client floor of 10/s (Finagle's) would allow 4 retries for every call here.
    expect(retries / calls).toBeGreaterThan(0.17);
    expect(retries / calls).toBeLessThan(0.23);
  });

  it('is shared: two clients draw on one budget', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minPerSecond: 0, maxExtraLoad: 1 });
    budget.recordCall(); // client A
    budget.recordCall(); // client B
    expect(budget.allowAttempt('retry')).toBe(true); // A
    expect(budget.allowAttempt('retry')).toBe(true); // B
    expect(budget.allowAttempt('retry')).toBe(false);
  });

  it('ignores failures and successes', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minPerSecond: 1, ttlMs: 1000 });
    for (let i = 0; i < 50; i++) budget.recordFailure();
    budget.recordSuccess();
    expect(drain(budget)).toBe(1);
  });

  it('rejects bad options with errors that name the option', () => {
    expect(() => new RetryBudget({ maxExtraLoad: -0.1 })).toThrow(
      /RetryBudget: options\.maxExtraLoad must be a number in \[0, 1000\], got -0.1/,
    );
    expect(() => new RetryBudget({ maxExtraLoad: Number.NaN })).toThrow(TypeError);
    expect(() => new RetryBudget({ ttlMs: 500 })).toThrow(
      /options\.ttlMs must be a number in \[1000, 60000\] \(ms\), got 500/,
    );
    expect(() => new RetryBudget({ ttlMs: 120_000 })).toThrow(RangeError);
    expect(() => new RetryBudget({ minPerSecond: -1 })).toThrow(/minPerSecond/);
    expect(() => new RetryBudget({ chanceSd: -1 })).toThrow(
      /options\.chanceSd must be a number in \[0, 10\], got -1/,
    );
    expect(() => new RetryBudget({ random: 0.5 as unknown as () => number })).toThrow(
      /random must be a function returning a number in \[0, 1\), got 0\.5/,
    );
    expect(() => new RetryBudget({ minRetriesPerSecond: 10 } as unknown as object)).toThrow(
      /RetryBudget: options\.minRetriesPerSecond was renamed to "minPerSecond"/,
    );
    expect(() => new RetryBudget({ ratio: 0.2 } as unknown as object)).toThrow(
      new TypeError(
        'RetryBudget: options.ratio was renamed to "maxExtraLoad" (the hedge budget\'s name for the same share)',
      ),
    );
    expect(() => new RetryBudget({ minPerSecond: '10' as unknown as number })).toThrow(
      /options\.minPerSecond must be a number >= 0, got "10"/,
    );
    expect(() => new RetryBudget({ clock: {} as unknown as { now(): number } })).toThrow(
      /clock must be an object with a now\(\) method/,
    );
    expect(() => new RetryBudget({ percentCanRetry: 0.2 } as unknown as object)).toThrow(
      /RetryBudget: options\.percentCanRetry is not an option/,
    );
    expect(() => new RetryBudget(42 as unknown as object)).toThrow(
      /RetryBudget: options must be an object, got 42/,
    );
  });
});

describe('RetryBudget without a clock', () => {
  it('counts by the system clock: deposits expire a ttl later', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(1_000_000);
      const budget = new RetryBudget({ maxExtraLoad: 1 });
      budget.recordCall();
      budget.recordCall();
      expect(budget.tokens).toBe(2);
      vi.setSystemTime(1_000_000 + budget.ttlMs);
      expect(budget.tokens).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
