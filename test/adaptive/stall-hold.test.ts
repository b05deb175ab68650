import { describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { HOLD_AFTER_DUE, StallHold } from '../../src/hedging/stall-hold.js';
import { FakeClock } from '../../src/testing/fake-clock.js';

describe('StallHold', () => {
  it('lets the first hedge due since an answer go and holds the second and later ones', () => {
    const stall = new StallHold();
    expect(HOLD_AFTER_DUE).toBe(2);
    expect([stall.hedgeDue(), stall.hedgeDue(), stall.hedgeDue()]).toEqual([false, true, true]);
    stall.answered();
    expect([stall.hedgeDue(), stall.hedgeDue()]).toEqual([false, true]);
  });

  it('releases every held hedge once, in the order held, at the next answer', () => {
    const stall = new StallHold();
    const released: string[] = [];
    stall.untilAnswer(() => released.push('first'));
    stall.untilAnswer(() => released.push('second'));
    expect(stall.heldCount).toBe(2);
    stall.answered();
    stall.answered();
    expect(released).toEqual(['first', 'second']);
    expect(stall.heldCount).toBe(0);
  });

  it('forgets a hedge whose call no longer waits', () => {
    const stall = new StallHold();
    const released: string[] = [];
    const forget = stall.untilAnswer(() => released.push('gone'));
    stall.untilAnswer(() => released.push('kept'));
    forget();
    forget(); // twice is harmless
    stall.answered();
    expect(released).toEqual(['kept']);
  });

  it('a release that holds another hedge leaves it for the answer after', () => {
    const stall = new StallHold();
    const released: string[] = [];
    stall.untilAnswer(() => {
      released.push('first');
      stall.untilAnswer(() => released.push('later'));
    });
    stall.answered();
    expect(released).toEqual(['first']);
    stall.answered();
    expect(released).toEqual(['first', 'later']);
  });
});

describe('AdaptiveHedging: hedges held while the calls stall', () => {
  it('counts hedges due per method, and any answer of the method ends its stall', () => {
    const adaptive = new AdaptiveHedging({ clock: new FakeClock(0), budget: false });
    expect(adaptive.holdHedge('/a')).toBe(false);
    expect(adaptive.holdHedge('/b')).toBe(false); // another method: its own count
    expect(adaptive.holdHedge('/a')).toBe(true);
    const released: string[] = [];
    adaptive.whenAnswered('/a', () => released.push('a'));
    adaptive.whenAnswered('/b', () => released.push('b'));
    expect([adaptive.heldHedges('/a'), adaptive.heldHedges('/b'), adaptive.heldHedges('/c')]).toEqual([
      1, 1, 0,
    ]);
    adaptive.recordOutcome('/a', 10, 3);
    expect(released).toEqual(['a']);
    expect(adaptive.holdHedge('/a')).toBe(false);
    adaptive.answered('/b'); // an answer with no outcome to record
    expect(released).toEqual(['a', 'b']);
  });

  it('an outcome it ignores is still an answer', () => {
    const adaptive = new AdaptiveHedging({ clock: new FakeClock(0), budget: false });
    adaptive.holdHedge('/a');
    expect(adaptive.holdHedge('/a')).toBe(true);
    adaptive.recordOutcome('/a', 10, Number.NaN);
    expect(adaptive.holdHedge('/a')).toBe(false);
  });

  it('holds nothing with holdInStalls: false', () => {
    const adaptive = new AdaptiveHedging({ clock: new FakeClock(0), budget: false, holdInStalls: false });
    expect([adaptive.holdHedge('/a'), adaptive.holdHedge('/a'), adaptive.holdHedge('/a')]).toEqual([
      false,
      false,
      false,
    ]);
    expect(adaptive.options.holdInStalls).toBe(false);
    expect(new AdaptiveHedging(true).options.holdInStalls).toBe(true);
  });

  it('names a holdInStalls that is not a boolean', () => {
    expect(() => new AdaptiveHedging({ holdInStalls: 'yes' as unknown as boolean })).toThrow(
      'AdaptiveHedging: options.holdInStalls must be true or false, got "yes"',
    );
  });
});
