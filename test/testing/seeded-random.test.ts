import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing/seeded-random.js';

describe('seededRandom', () => {
  it('repeats its sequence for a seed and differs between seeds', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const seqA = Array.from({ length: 5 }, a);
    expect(Array.from({ length: 5 }, b)).toEqual(seqA);
    expect(Array.from({ length: 5 }, c)).not.toEqual(seqA);
  });

  it('stays in [0, 1) and spreads over it', () => {
    const r = seededRandom(123);
    const values = Array.from({ length: 10_000 }, r);
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
    expect(values.filter((v) => v < 0.1).length).toBeGreaterThan(900);
  });
});
