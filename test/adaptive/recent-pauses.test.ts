import { describe, expect, it } from 'vitest';
import { RecentPauses } from '../../src/hedging/recent-pauses.js';

describe('RecentPauses', () => {
  it('says a pause held most of a call when it covers more than half of the call', () => {
    const pauses = new RecentPauses();
    pauses.add(100, 120);
    expect(pauses.heldMost(98, 121)).toBe(true); // 20 of 23 ms
    expect(pauses.heldMost(110, 130)).toBe(false); // 10 of 20 ms: half, not most
    expect(pauses.heldMost(60, 121)).toBe(false); // 20 of 61 ms
    expect(pauses.heldMost(121, 125)).toBe(false); // after it
    expect(pauses.heldMost(105, 105)).toBe(false); // no length
  });

  it('adds up several pauses within one call, and merges overlapping reports of one pause', () => {
    const pauses = new RecentPauses();
    pauses.add(100, 106);
    pauses.add(102, 110); // a second late timer of the same pause
    pauses.add(120, 126);
    expect(pauses.heldMost(100, 126)).toBe(true); // 10 + 6 of 26 ms
    expect(pauses.heldMost(100, 135)).toBe(false); // 16 of 35 ms
  });

  it('forgets the oldest pause beyond its capacity', () => {
    const pauses = new RecentPauses(2);
    pauses.add(0, 10);
    pauses.add(20, 30);
    pauses.add(40, 50);
    expect(pauses.heldMost(0, 10)).toBe(false);
    expect(pauses.heldMost(20, 30)).toBe(true);
    expect(pauses.heldMost(40, 50)).toBe(true);
  });
});
