import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';
import { ENTRY_OVERHEAD_BYTES, FRAME_HEADER_BYTES, ReplayBuffer } from '../../src/retry/replay-buffer.js';

const PER_MESSAGE = FRAME_HEADER_BYTES + ENTRY_OVERHEAD_BYTES;
const size = (m: unknown) => ({ length: String(m).length });

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
    expect(buffer.takeCallback(0)).toBeUndefined(); // a kept message's writer went on at once
    buffer.takeCallback(1)?.();
    expect(called).toBe(1);
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

  it('measures lazily kept messages only when a further attempt needs them', () => {
    const pool = new BufferPool(PER_MESSAGE + 3, 10_000, true);
    let measured = 0;
    const buffer = new ReplayBuffer(
      pool,
      (m) => {
        measured += 1;
        return size(m);
      },
      true,
    );
    buffer.append('abc', undefined, undefined);
    expect(measured).toBe(0);
    expect(buffer.reserveAll()).toBe(true);
    expect(buffer.reservedBytes).toBe(3 + PER_MESSAGE);
    expect(buffer.reserveAll()).toBe(true);
    expect(measured).toBe(1);
    const tight = new ReplayBuffer(new BufferPool(4, 10_000, true), size, true);
    tight.append('abc', undefined, undefined);
    expect(tight.reserveAll()).toBe(false);
  });

  it('after release, accounting stops and written messages can be dropped', () => {
    const pool = new BufferPool(10_000, 10_000, true);
    const buffer = new ReplayBuffer(pool, size);
    buffer.append('a', undefined, undefined);
    buffer.append('b', undefined, undefined);
    buffer.release();
    expect(pool.usedBytes).toBe(0);
    expect(buffer.reserveAll()).toBe(false);
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
