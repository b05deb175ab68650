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
