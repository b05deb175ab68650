import { describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import type { AdaptiveHedgingOptions } from '../../src/hedging/adaptive-hedging-options.js';
import {
  MAX_ADAPTIVE_TARGETS,
  resolveAdaptiveHedgingPerTarget,
} from '../../src/hedging/adaptive-hedging-per-target.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

const WHERE = 'createRetryInterceptor: options.adaptiveHedging';

describe('resolveAdaptiveHedgingPerTarget', () => {
  it('off: neither', () => {
    expect(resolveAdaptiveHedgingPerTarget(undefined, WHERE)).toEqual({
      shared: undefined,
      perTarget: undefined,
    });
    expect(resolveAdaptiveHedgingPerTarget(false, WHERE)).toEqual({
      shared: undefined,
      perTarget: undefined,
    });
  });

  it('an AdaptiveHedging passed in is shared as given', () => {
    const adaptive = new AdaptiveHedging();
    expect(resolveAdaptiveHedgingPerTarget(adaptive, WHERE)).toEqual({
      shared: adaptive,
      perTarget: undefined,
    });
  });

  it('true or options: one per target, each with its own delays and budget, made with the options', () => {
    const clock = new FakeClock();
    const { shared, perTarget } = resolveAdaptiveHedgingPerTarget({ maxExtraLoad: 0.1, clock }, WHERE);
    expect(shared).toBeUndefined();
    const a = perTarget?.for('dns:a:1');
    const b = perTarget?.for('dns:b:1');
    expect(a).toBeInstanceOf(AdaptiveHedging);
    expect(b).toBeInstanceOf(AdaptiveHedging);
    expect(b).not.toBe(a);
    expect(perTarget?.for('dns:a:1')).toBe(a);
    expect(b?.options.maxExtraLoad).toBe(0.1);
    expect(b?.budget).not.toBe(a?.budget);
    for (let i = 0; i < 12; i++) a?.recordOutcome('/s/M', 10_000, 80);
    expect(a?.delayOf('/s/M')).toBeGreaterThan(0);
    expect(b?.delayOf('/s/M')).toBeUndefined();
  });

  it('bad options fail when the interceptor is made, naming the option', () => {
    expect(() => resolveAdaptiveHedgingPerTarget({ maxExtraLoad: 2 }, WHERE)).toThrow(
      /options\.adaptiveHedging\.maxExtraLoad/,
    );
    expect(() => resolveAdaptiveHedgingPerTarget('yes' as never, WHERE)).toThrow(/must be true, false/);
  });

  it("a clock that breaks after the interceptor is made is read safely by a later target's, not thrown at its call", () => {
    const fake = new FakeClock(1_000);
    let broken = false;
    const clock = {
      now: () => {
        if (broken) throw new Error('clock broke');
        return fake.now();
      },
      setTimer: (callback: () => void, delayMs: number) => fake.setTimer(callback, delayMs),
      clearTimer: (handle: unknown) => fake.clearTimer(handle),
    };
    const { perTarget } = resolveAdaptiveHedgingPerTarget({ clock, budget: false }, WHERE);
    perTarget?.for('dns:a:1');
    broken = true;
    // The second target's is made at its first call: the clock is the option's, guarded as the first's is.
    const b = perTarget?.for('dns:b:1');
    expect(b).toBeInstanceOf(AdaptiveHedging);
    expect(() => b?.recordOutcome('/s/M', 100, 5)).not.toThrow();
    expect(b?.delayOf('/s/M')).toBe(100);
  });

  it("every target's is made with the options as the first one read them, getters and inherited keys included", () => {
    const clock = new FakeClock();
    class Options {
      readonly clock = clock;
      get maxExtraLoad() {
        return 0.1;
      }
    }
    const inherited = Object.assign(Object.create({ recentCalls: 50, budget: { ttlMs: 5_000 } }), { clock });
    for (const options of [new Options(), inherited] as AdaptiveHedgingOptions[]) {
      const { perTarget } = resolveAdaptiveHedgingPerTarget(options, WHERE);
      const first = perTarget?.for('dns:a:1');
      const second = perTarget?.for('dns:b:1');
      expect(second?.options).toEqual(first?.options);
      expect(second?.budget?.ttlMs).toBe(first?.budget?.ttlMs);
    }
  });

  it('keeps a hundred targets, forgetting the least recently used', () => {
    const { perTarget } = resolveAdaptiveHedgingPerTarget(true, WHERE);
    const first = perTarget?.for('t0');
    const second = perTarget?.for('t1');
    for (let i = 2; i < MAX_ADAPTIVE_TARGETS; i++) perTarget?.for(`t${i}`);
    expect(perTarget?.for('t0')).toBe(first); // used again: now the most recent
    perTarget?.for('one more'); // t1 goes
    expect(perTarget?.for('t0')).toBe(first);
    expect(perTarget?.for('t1')).not.toBe(second);
  });
});
