import { describe, expect, it } from 'vitest';
import { extraLoad, withinLoadLimit } from '../../bench/lib/extra-load.js';

describe("bench:adaptive's extra load", () => {
  it('is the hedges per call: 72 over 1,200 calls is 0.06, within a limit of 0.06', () => {
    expect(extraLoad(1272, 1200)).toBe(0.06);
    expect(extraLoad(1272, 1200) <= 0.06).toBe(true);
    // What the bench computed before: attempts / calls − 1 is a hair over 0.06.
    expect(1272 / 1200 - 1 <= 0.06).toBe(false);
  });

  it('is within the limit exactly when the hedges are, for every count over phases of 1,000 to 2,000 calls', () => {
    for (const calls of [1000, 1200, 1500, 2000]) {
      const allowed = Math.floor(0.06 * calls + 1e-9);
      for (let hedges = 0; hedges <= calls / 5; hedges++) {
        expect(extraLoad(calls + hedges, calls) <= 0.06, `${hedges} of ${calls}`).toBe(hedges <= allowed);
      }
    }
  });
});

describe('a load limit written as a sum', () => {
  it('holds a load exactly at it, whichever way the sum rounds', () => {
    // 0.7 + 0.1 is 0.7999999999999999: 960 hedges over 1,200 calls (0.8) would be over it compared as doubles.
    expect(extraLoad(2160, 1200) <= 0.7 + 0.1).toBe(false);
    expect(withinLoadLimit(extraLoad(2160, 1200), 0.7 + 0.1)).toBe(true);
    expect(withinLoadLimit(extraLoad(1272, 1200), 0.05 + 0.01)).toBe(true);
  });

  it('refuses one hedge more', () => {
    expect(withinLoadLimit(extraLoad(1273, 1200), 0.05 + 0.01)).toBe(false);
    expect(withinLoadLimit(extraLoad(2161, 1200), 0.7 + 0.1)).toBe(false);
  });
});
