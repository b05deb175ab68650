import { describe, expect, it } from 'vitest';
import { targetOf } from '../../src/retry/call-target.js';
import { MAX_THROTTLED_TARGETS, throttlesPerTarget } from '../../src/retry/throttles-per-target.js';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { PerTarget, release } from '../../src/shared/per-target.js';

const config = { maxTokens: 10, tokenRatio: 0.1 };

describe('throttlesPerTarget', () => {
  it('gives each target its own throttle, and a target the same one every time', () => {
    const throttles = throttlesPerTarget(config);
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
    expect(() => throttlesPerTarget({ maxTokens: 0, tokenRatio: 1 })).toThrow(/maxTokens/);
  });

  it('past its limit forgets the targets whose throttle is full, and keeps those holding failures', () => {
    const throttles = throttlesPerTarget(config, 3);
    const drained = throttles.for('t1');
    for (let i = 0; i < 6; i++) drained.recordFailure();
    const full = throttles.for('t2');
    throttles.for('t3');
    throttles.for('t4');
    expect(throttles.size).toBe(2);
    expect(throttles.for('t1')).toBe(drained);
    expect(throttles.for('t2')).not.toBe(full);
  });

  it('keeps up to a thousand targets by default', () => {
    const throttles = throttlesPerTarget(config);
    const held = throttles.for('t0');
    held.recordFailure();
    for (let i = 1; i < MAX_THROTTLED_TARGETS; i++) throttles.for(`t${i}`).recordFailure();
    expect(throttles.size).toBe(1000);
    throttles.for('one more');
    expect(throttles.size).toBe(1000);
    expect(throttles.for('t0')).not.toBe(held);
  });
});

describe('PerTarget', () => {
  it('makes a value once per target, the first one when the store is made', () => {
    let made = 0;
    const store = new PerTarget(() => ({ n: ++made }), 10);
    expect(store.for('a')).toEqual({ n: 1 });
    expect(store.for('a')).toEqual({ n: 1 });
    expect(store.for('b')).toEqual({ n: 2 });
    expect(made).toBe(2);
  });

  it('with nothing idle, forgets the target used least recently', () => {
    let made = 0;
    const store = new PerTarget(() => ({ n: ++made }), 2);
    const a = store.for('a');
    const b = store.for('b');
    expect(store.for('a')).toBe(a); // a is now the most recent
    store.for('c'); // b goes
    expect(store.size).toBe(2);
    expect(store.for('a')).toBe(a);
    expect(store.for('b')).not.toBe(b);
  });

  it('forgets every idle value before it forgets one in use', () => {
    const store = new PerTarget(() => ({ busy: false }), 3, { idle: (v) => !v.busy });
    store.for('a').busy = true;
    store.for('b');
    store.for('c');
    store.for('d'); // b and c are idle
    expect(store.size).toBe(2);
    expect(store.for('a').busy).toBe(true);
  });

  it('under its limit forgets nothing, idle or not', () => {
    let made = 0;
    const store = new PerTarget(() => ({ n: ++made }), 10, { idle: () => true });
    const a = store.for('a');
    store.for('b');
    expect(store.for('a')).toBe(a);
    expect(store.size).toBe(2);
  });

  it('an idle value a call holds is not forgotten as idle; given back, it can be', () => {
    let made = 0;
    const store = new PerTarget(() => ({ n: ++made }), 2, { idle: () => true });
    const held = store.acquire('a');
    expect(held.users).toBe(1);
    store.for('b');
    store.for('c'); // b is idle and held by nobody: it goes, a stays
    expect(store.for('a')).toBe(held.value);
    release(held);
    expect(held.users).toBe(0);
    store.for('d'); // now a and c are idle
    expect(store.for('a')).not.toBe(held.value);
  });

  it('the target used last can be forgotten and made again', () => {
    let made = 0;
    const store = new PerTarget(() => ({ n: ++made }), 1, { idle: () => true });
    store.for('a');
    store.for('b'); // a goes
    expect(store.for('b')).toEqual({ n: 2 });
    expect(store.for('a')).toEqual({ n: 3 });
    expect(store.size).toBe(1);
  });
});

describe('targetOf', () => {
  const call = (getPeer: () => string) => ({ getPeer }) as unknown as InterceptingCallInterface;

  it("is what a call not yet started says of its peer: its channel's target", () => {
    expect(targetOf(call(() => 'dns:db.example:443'))).toBe('dns:db.example:443');
  });

  it("is '' when a layer below cannot say (its getPeer throws): such calls share one target", () => {
    expect(
      targetOf(
        call(() => {
          throw new Error('not yet');
        }),
      ),
    ).toBe('');
  });
});
