import { describe, expect, it } from 'vitest';
import { HedgeBudget } from '../../src/hedging/hedge-budget.js';
import { isRetryGate } from '../../src/shared/retry-gate.js';
import { FakeClock } from './fake-clock.js';

/** Ask for `n` hedges now; returns how many were allowed. */
function drain(budget: HedgeBudget, n: number): number {
  let allowed = 0;
  for (let i = 0; i < n; i++) if (budget.allowAttempt('hedge')) allowed++;
  return allowed;
}

describe('HedgeBudget', () => {
  it('is a retry gate named hedge-budget', () => {
    const budget = new HedgeBudget();
    expect(isRetryGate(budget)).toBe(true);
    expect(budget.name).toBe('hedge-budget');
  });

  it('allows maxExtraLoad × calls hedges when there is no floor', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0.05, minPerSecond: 0, chanceSd: 0 });
    expect(drain(budget, 10)).toBe(0);
    for (let i = 0; i < 100; i++) budget.recordCall();
    expect(budget.tokens).toBe(5);
    expect(drain(budget, 10)).toBe(5);
    expect(budget.tokens).toBe(0);
  });

  it('spends on a hedge that goes in any case, and does not count it as refused when it holds none', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0.05, minPerSecond: 0, chanceSd: 0 });
    for (let i = 0; i < 20; i++) budget.recordCall(); // one hedge held
    budget.spendIfHeld();
    expect(budget.tokens).toBe(0);
    budget.spendIfHeld();
    budget.spendIfHeld();
    expect(budget.denied).toBe(0);
    expect(drain(budget, 2)).toBe(0); // real refusals still count
    expect(budget.denied).toBe(2);
  });

  it('has a floor of minPerSecond × ttl that refills as its withdrawals expire', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, minPerSecond: 1, ttlMs: 10_000 });
    expect(drain(budget, 50)).toBe(10);
    clock.advance(5_000);
    expect(drain(budget, 50)).toBe(0);
    clock.advance(5_000); // the first withdrawals are now 10 s old
    expect(drain(budget, 50)).toBe(10);
  });

  it('lets deposits expire after the ttl', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0.1, minPerSecond: 0, ttlMs: 10_000, chanceSd: 0 });
    for (let i = 0; i < 100; i++) budget.recordCall();
    expect(budget.tokens).toBe(10);
    clock.advance(10_000);
    expect(budget.tokens).toBe(0);
    expect(drain(budget, 5)).toBe(0);
  });

  it('holds sustained hedging to maxExtraLoad plus the floor and the room for chance', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0.05 });
    expect([budget.minPerSecond, budget.chanceSd]).toEqual([3, 3]);
    // 200 calls a second for 60 s, every one of which wants a hedge.
    let calls = 0;
    let hedges = 0;
    for (let ms = 0; ms < 60_000; ms += 5) {
      budget.recordCall();
      calls++;
      if (budget.allowAttempt('hedge')) hedges++;
      clock.advance(5);
    }
    const extraLoad = hedges / calls;
    // 5% of the calls, plus 3 per second (1.5% at 200/s), plus three standard deviations of the 100 hedges paid
    // for in 10 s (30, another 1.5%), plus the initial reserve and room.
    expect(extraLoad).toBeGreaterThan(0.05 + 3 / 200);
    expect(extraLoad).toBeLessThanOrEqual(0.05 + 3 / 200 + 30 / 2_000 + 60 / calls + 1e-9);
  });

  it('holds room for chance: chanceSd standard deviations of the hedges its deposits paid for', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0.05, minPerSecond: 0 });
    expect(budget.tokens).toBe(0); // nothing paid for, no room
    for (let i = 0; i < 400; i++) budget.recordCall();
    // 20 hedges paid for, and 3 × √20 = 13.4 more.
    expect(budget.tokens).toBe(33);
    expect(drain(budget, 50)).toBe(33);
    expect(new HedgeBudget({ clock, chanceSd: 1.5, minPerSecond: 0 }).chanceSd).toBe(1.5);
    clock.advance(10_000);
    expect(budget.tokens).toBe(0); // the room left with the deposits
  });

  it('counts only hedges: retries always pass and outcomes change nothing', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, minPerSecond: 0, chanceSd: 0 });
    expect(budget.allowAttempt('retry')).toBe(true);
    for (let i = 0; i < 20; i++) budget.recordCall();
    budget.recordFailure();
    budget.recordSuccess();
    expect(budget.tokens).toBe(1);
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(budget.tokens).toBe(1);
  });

  it('with maxExtraLoad 0 allows only the floor', () => {
    const clock = new FakeClock();
    const budget = new HedgeBudget({ clock, maxExtraLoad: 0, minPerSecond: 0.5, ttlMs: 10_000 });
    expect(budget.chanceSd).toBe(3); // nothing is paid for at maxExtraLoad 0, so there is no room either
    for (let i = 0; i < 1000; i++) budget.recordCall();
    expect(drain(budget, 100)).toBe(5);
  });

  it('rejects invalid options with an error that names the option', () => {
    expect(() => new HedgeBudget({ maxExtraLoad: 1 })).toThrow(
      /HedgeBudget: options\.maxExtraLoad must be a number in \[0, 1\)/,
    );
    expect(() => new HedgeBudget({ ttlMs: 100 })).toThrow(
      /HedgeBudget: options\.ttlMs must be an integer in \[1000, 60000\] \(ms\), got 100/,
    );
    expect(() => new HedgeBudget({ minPerSecond: Number.POSITIVE_INFINITY })).toThrow(
      /options\.minPerSecond/,
    );
    expect(() => new HedgeBudget({ chanceSd: 11 })).toThrow(
      /HedgeBudget: options\.chanceSd must be a number in \[0, 10\], got 11/,
    );
    expect(() => new HedgeBudget({ clock: { now: () => 0 } as never })).toThrow(/options\.clock/);
    expect(() => new HedgeBudget({ ttl: 1 } as never)).toThrow(
      /HedgeBudget: options\.ttl is not an option \(known: /,
    );
  });
});
