import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';
import { ENTRY_OVERHEAD_BYTES, FRAME_HEADER_BYTES, ReplayBuffer } from '../../src/retry/replay-buffer.js';

const PER_MESSAGE = FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
const size = (m: unknown) => Buffer.from(String(m));

describe('ReplayBuffer', () => {
  it('charges each message its serialized size, its frame and its overhead', () => {
    const pool = new BufferPool(10_000, 10_000, true);
    const buffer = new ReplayBuffer(pool, size);
    expect(buffer.append('abc', undefined, undefined)).toBe('kept');
    expect(buffer.append('', undefined, undefined)).toBe('kept');
    expect(buffer.reservedBytes).toBe(3 + 2 * PER_MESSAGE);
    expect(pool.usedBytes).toBe(buffer.reservedBytes);
    expect([buffer.start, buffer.end]).toEqual([0, 2]);
    expect(buffer.messageAt(0)).toBe('abc');
  });

  it('reports an overflow against the per-call limit, keeps the message, and holds its callback', () => {
    const pool = new BufferPool(PER_MESSAGE + 5, 10_000, true);
    const buffer = new ReplayBuffer(pool, size);
    let called = 0;
    expect(buffer.append('12345', undefined, () => called++)).toBe('kept');
    expect(buffer.append('x', 2, () => called++)).toBe('overflow');
    expect(buffer.end).toBe(2);
    expect(buffer.flagsAt(1)).toBe(2);
    // Kept or not, a writer waits until an attempt has written its message.
    expect(called).toBe(0);
    buffer.takeCallback(1)?.();
    buffer.takeCallback(0)?.();
    expect(called).toBe(2);
    expect(buffer.takeCallback(1)).toBeUndefined();
  });

  it('the total limit is shared between buffers of one pool', () => {
    const pool = new BufferPool(1000, 2 * PER_MESSAGE, true);
    const a = new ReplayBuffer(pool, size);
    const b = new ReplayBuffer(pool, size);
    expect(a.append('', undefined, undefined)).toBe('kept');
    expect(b.append('', undefined, undefined)).toBe('kept');
    expect(b.append('', undefined, undefined)).toBe('overflow');
    a.release();
    expect(b.append('', undefined, undefined)).toBe('kept');
  });

  it('reserves room as each message is written, a single request too, and reads it again on each check', () => {
    const pool = new BufferPool(PER_MESSAGE + 3, 10_000, true);
    let measured = 0;
    const buffer = new ReplayBuffer(pool, (m) => {
      measured += 1;
      return size(m);
    });
    expect(buffer.append('abc', undefined, undefined)).toBe('kept');
    // Serialized as it comes: its size, and the snapshot a resend is checked against.
    expect(measured).toBe(1);
    expect(buffer.reservedBytes).toBe(3 + PER_MESSAGE);
    // Each check reads the message again (has it changed?), but reserves nothing twice.
    expect(buffer.replayable()).toBe('fits');
    expect(buffer.replayable()).toBe('fits');
    expect(measured).toBe(3);
    expect(buffer.reservedBytes).toBe(3 + PER_MESSAGE);
    const tight = new ReplayBuffer(new BufferPool(4, 10_000, true), size);
    expect(tight.append('abc', undefined, undefined)).toBe('overflow');
  });

  it('gives the shared total to the calls in the order they wrote (A6): a later call does not fit, an earlier keeps its room', () => {
    const pool = new BufferPool(10_000, 2 * (3 + PER_MESSAGE), true);
    const first = new ReplayBuffer(pool, size);
    const second = new ReplayBuffer(pool, size);
    const third = new ReplayBuffer(pool, size);
    expect(first.append('abc', undefined, undefined)).toBe('kept');
    expect(second.append('abc', undefined, undefined)).toBe('kept');
    expect(third.append('abc', undefined, undefined)).toBe('overflow');
    expect(first.replayable()).toBe('fits');
    expect(second.replayable()).toBe('fits');
    expect(pool.usedBytes).toBe(2 * (3 + PER_MESSAGE));
  });

  it('after release, accounting stops and written messages can be dropped', () => {
    const pool = new BufferPool(10_000, 10_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('a', undefined, undefined);
    buffer.append('b', undefined, undefined);
    buffer.release();
    expect(pool.usedBytes).toBe(0);
    expect(buffer.replayable()).toBe('full');
    expect(buffer.append('c', undefined, () => {})).toBe('kept');
    expect(pool.usedBytes).toBe(0);
    buffer.dropBefore(2);
    expect([buffer.start, buffer.end]).toEqual([2, 3]);
    expect(buffer.messageAt(2)).toBe('c');
  });

  it('clear releases the bytes once and hands back every writer still waiting', () => {
    const pool = new BufferPool(PER_MESSAGE, 10_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('', undefined, undefined);
    const waiting = () => {};
    buffer.append('overflowing', undefined, waiting);
    expect(buffer.clear()).toEqual([waiting]);
    expect(pool.usedBytes).toBe(0);
    expect(buffer.clear()).toBeUndefined(); // a second clear releases nothing more (strict pool would throw)
    expect(buffer.start).toBe(buffer.end);
  });
});
