import { describe, expect, it } from 'vitest';
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
  it('is a retry gate with Finagle defaults', () => {
    const budget = new RetryBudget({ clock: fakeClock() });
    expect(isRetryGate(budget)).toBe(true);
    expect(budget.name).toBe('retry-budget');
    expect([budget.ratio, budget.minRetriesPerSecond, budget.ttlMs]).toEqual([0.2, 10, 10_000]);
  });

  it('holds a reserve of minRetriesPerSecond × ttl retries with no traffic', () => {
    const budget = new RetryBudget({ clock: fakeClock() });
    expect(budget.tokens).toBe(100);
    expect(drain(budget)).toBe(100);
    expect(budget.denied).toBe(1);
  });

  it('adds ratio of a retry per call: 1,000 calls give 200 retries beyond the reserve', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minRetriesPerSecond: 0 });
    expect(budget.allowAttempt('retry')).toBe(false);
    for (let i = 0; i < 1000; i++) budget.recordCall();
    expect(drain(budget)).toBe(200);
  });

  it('charges hedges like retries', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minRetriesPerSecond: 0, ratio: 0.5 });
    for (let i = 0; i < 10; i++) budget.recordCall();
    expect(budget.allowAttempt('hedge')).toBe(true);
    expect(budget.allowAttempt('retry')).toBe(true);
    expect(drain(budget, 'hedge')).toBe(3);
  });

  it('forgets deposits after the ttl', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, minRetriesPerSecond: 0, ttlMs: 10_000 });
    for (let i = 0; i < 100; i++) budget.recordCall();
    expect(budget.tokens).toBe(20);
    clock.t = 9_999; // still inside the window
    expect(budget.tokens).toBe(20);
    clock.t = 10_000; // the bin of t = 0 has left the window
    expect(budget.tokens).toBe(0);
    expect(budget.allowAttempt('retry')).toBe(false);
  });

  it('forgets withdrawals after the ttl, so the reserve refills at minRetriesPerSecond', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, minRetriesPerSecond: 10, ttlMs: 5_000 });
    expect(drain(budget)).toBe(50);
    clock.t = 4_999;
    expect(budget.allowAttempt('retry')).toBe(false);
    clock.t = 5_000;
    expect(drain(budget)).toBe(50);
  });

  it('keeps retries within ratio × calls + minRetriesPerSecond × window under steady load', () => {
    const clock = fakeClock(0);
    const budget = new RetryBudget({ clock, ratio: 0.2, minRetriesPerSecond: 10, ttlMs: 10_000 });
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

  it('is shared: two clients draw on one budget', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minRetriesPerSecond: 0, ratio: 1 });
    budget.recordCall(); // client A
    budget.recordCall(); // client B
    expect(budget.allowAttempt('retry')).toBe(true); // A
    expect(budget.allowAttempt('retry')).toBe(true); // B
    expect(budget.allowAttempt('retry')).toBe(false);
  });

  it('ignores failures and successes', () => {
    const budget = new RetryBudget({ clock: fakeClock(), minRetriesPerSecond: 1, ttlMs: 1000 });
    for (let i = 0; i < 50; i++) budget.recordFailure();
    budget.recordSuccess();
    expect(drain(budget)).toBe(1);
  });

  it('rejects bad options with errors that name the option', () => {
    expect(() => new RetryBudget({ ratio: -0.1 })).toThrow(
      /RetryBudget: ratio must be a number in \[0, 1000\], got -0.1/,
    );
    expect(() => new RetryBudget({ ratio: Number.NaN })).toThrow(TypeError);
    expect(() => new RetryBudget({ ttlMs: 500 })).toThrow(
      /ttlMs must be a number in \[1000, 60000\], got 500/,
    );
    expect(() => new RetryBudget({ ttlMs: 120_000 })).toThrow(RangeError);
    expect(() => new RetryBudget({ minRetriesPerSecond: -1 })).toThrow(/minRetriesPerSecond/);
    expect(() => new RetryBudget({ minRetriesPerSecond: '10' as unknown as number })).toThrow(
      /minRetriesPerSecond must be a number, got "10"/,
    );
    expect(() => new RetryBudget({ clock: {} as unknown as { now(): number } })).toThrow(
      /clock must be an object with a now\(\) method/,
    );
    expect(() => new RetryBudget({ percentCanRetry: 0.2 } as unknown as object)).toThrow(
      /unknown option 'percentCanRetry'/,
    );
    expect(() => new RetryBudget(42 as unknown as object)).toThrow(/options must be an object, got 42/);
  });
});
