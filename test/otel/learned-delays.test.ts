import { describe, expect, it } from 'vitest';
import { LearnedDelays, MAX_LEARNED_DELAYS } from '../../src/otel/learned-delays.js';

describe('LearnedDelays: the last adaptive delay of each method and target', () => {
  it('keeps the last delay per pair, a pair seen again moving to the end, and a target left out apart', () => {
    const learned = new LearnedDelays();
    learned.set('/s/A', 'dns:///x', 10);
    learned.set('/s/A', 'dns:///y', 20);
    learned.set('/s/A', undefined, 30);
    learned.set('/s/A', 'dns:///x', 11);
    expect([...learned.entries()]).toEqual([
      { method: '/s/A', target: 'dns:///y', delayMs: 20 },
      { method: '/s/A', target: undefined, delayMs: 30 },
      { method: '/s/A', target: 'dns:///x', delayMs: 11 },
    ]);
  });

  it(`holds ${MAX_LEARNED_DELAYS} pairs, forgetting the one seen longest ago`, () => {
    const learned = new LearnedDelays();
    for (let i = 0; i < MAX_LEARNED_DELAYS; i++) learned.set('/s/A', `t${i}`, i);
    learned.set('/s/A', 't0', 5); // seen again: now the most recent
    learned.set('/s/B', 't0', 7);
    const targets = [...learned.entries()].map((e) => `${e.method} ${e.target}`);
    expect(targets).toHaveLength(MAX_LEARNED_DELAYS);
    expect(targets).not.toContain('/s/A t1');
    expect(targets.slice(-2)).toEqual(['/s/A t0', '/s/B t0']);
    expect(MAX_LEARNED_DELAYS).toBe(1_000);
  });
});
