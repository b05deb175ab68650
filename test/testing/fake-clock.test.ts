import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/fake-clock.js';

describe('FakeClock.advance called from a timer it fires', () => {
  it('never moves time back: the outer advance ends where the inner one left it, when that is later', () => {
    const clock = new FakeClock(0);
    const seen: Array<[string, number]> = [];
    clock.setTimer(() => {
      seen.push(['at 5', clock.now()]);
      clock.advance(20); // a test's callback that waits on, from inside the outer advance
      seen.push(['after the inner advance', clock.now()]);
    }, 5);
    clock.setTimer(() => seen.push(['at 8', clock.now()]), 8);
    clock.setTimer(() => seen.push(['at 30', clock.now()]), 30);
    clock.advance(10);
    expect(seen).toEqual([
      ['at 5', 5],
      ['at 8', 8],
      ['after the inner advance', 25],
    ]);
    expect(clock.now()).toBe(25);
    clock.advance(5);
    expect(seen.at(-1)).toEqual(['at 30', 30]);
  });

  it('an inner advance that ends before the outer one lets the outer one go on to its own end', () => {
    const clock = new FakeClock(100);
    const seen: number[] = [];
    clock.setTimer(() => clock.advance(1), 2);
    clock.setTimer(() => seen.push(clock.now()), 7);
    clock.advance(10);
    expect(seen).toEqual([107]);
    expect(clock.now()).toBe(110);
  });
});
