import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';

describe('BufferPool', () => {
  it('enforces the per-call limit', () => {
    const pool = new BufferPool(100, 1000);
    expect(pool.tryReserve(0, 60)).toBe(true);
    expect(pool.tryReserve(60, 40)).toBe(true);
    expect(pool.tryReserve(100, 1)).toBe(false);
    expect(pool.usedBytes).toBe(100);
  });
  it('enforces the total limit across calls and frees on release', () => {
    const pool = new BufferPool(100, 150);
    expect(pool.tryReserve(0, 100)).toBe(true);
    expect(pool.tryReserve(0, 60)).toBe(false);
    pool.release(100);
    expect(pool.tryReserve(0, 60)).toBe(true);
    expect(pool.usedBytes).toBe(60);
  });
});

describe('BufferPool accounting errors', () => {
  it('throws in strict mode when more is released than reserved', () => {
    const pool = new BufferPool(100, 1000, true);
    expect(pool.tryReserve(0, 10)).toBe(true);
    expect(() => pool.release(11)).toThrow(/releasing 11 bytes, but only 10 are reserved/);
    expect(() => pool.release(-1)).toThrow(/releasing -1 bytes/);
  });
  it('clamps at 0 outside strict mode', () => {
    const pool = new BufferPool(100, 1000, false);
    pool.tryReserve(0, 10);
    pool.release(11);
    expect(pool.usedBytes).toBe(0);
  });
  it('is strict by default under vitest', () => {
    const pool = new BufferPool(100, 1000);
    expect(() => pool.release(1)).toThrow();
  });
});
