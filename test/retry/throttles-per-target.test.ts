import { describe, expect, it } from 'vitest';
import { MAX_THROTTLED_TARGETS, ThrottlesPerTarget } from '../../src/retry/throttles-per-target.js';

const config = { maxTokens: 10, tokenRatio: 0.1 };

describe('ThrottlesPerTarget', () => {
  it('gives each target its own throttle, and a target the same one every time', () => {
    const throttles = new ThrottlesPerTarget(config);
    const a = throttles.for('dns:a.example:443');
    expect(throttles.for('dns:a.example:443')).toBe(a);
    const b = throttles.for('dns:b.example:443');
    expect(b).not.toBe(a);
    for (let i = 0; i < 6; i++) a.recordFailure();
    expect(a.allowAttempt()).toBe(false);
    expect(b.allowAttempt()).toBe(true);
    expect(b.tokens).toBe(10);
  });

  it('refuses a bad config when it is made, not at the first call', () => {
    expect(() => new ThrottlesPerTarget({ maxTokens: 0, tokenRatio: 1 })).toThrow(/maxTokens/);
  });

  it('past its limit forgets the targets whose throttle is full, and keeps those holding failures', () => {
    const throttles = new ThrottlesPerTarget(config, 3);
    const drained = throttles.for('t1');
    for (let i = 0; i < 6; i++) drained.recordFailure();
    const full = throttles.for('t2');
    throttles.for('t3');
    throttles.for('t4');
    expect(throttles.size).toBe(2);
    expect(throttles.for('t1')).toBe(drained);
    expect(throttles.for('t2')).not.toBe(full);
  });

  it('with no full throttle to forget, forgets the oldest target', () => {
    const throttles = new ThrottlesPerTarget(config, 2);
    const first = throttles.for('t1');
    first.recordFailure();
    const second = throttles.for('t2');
    second.recordFailure();
    throttles.for('t3');
    expect(throttles.size).toBe(2);
    expect(throttles.for('t2')).toBe(second);
    expect(throttles.for('t1')).not.toBe(first);
  });

  it('keeps up to a thousand targets by default', () => {
    const throttles = new ThrottlesPerTarget(config);
    const held = throttles.for('t0');
    held.recordFailure();
    for (let i = 1; i < MAX_THROTTLED_TARGETS; i++) throttles.for(`t${i}`).recordFailure();
    expect(throttles.size).toBe(1000);
    expect(throttles.for('t0')).toBe(held);
    throttles.for('one more');
    expect(throttles.size).toBe(1000);
    expect(throttles.for('t0')).not.toBe(held);
  });
});
