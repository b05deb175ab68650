import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/retry/buffer-pool.js';

describe('BufferPool limits are inclusive', () => {
  it('a call may fill its per-call limit exactly, not one byte more', () => {
    const pool = new BufferPool(100, 1000, true);
    expect(pool.tryReserve(40, 60)).toBe(true);
    expect(pool.tryReserve(40, 61)).toBe(false);
    expect(pool.usedBytes).toBe(60);
  });

  it('the calls together may fill the total limit exactly, not one byte more', () => {
    const pool = new BufferPool(100, 150, true);
    expect(pool.tryReserve(0, 100)).toBe(true);
    expect(pool.tryReserve(0, 51)).toBe(false);
    expect(pool.tryReserve(0, 50)).toBe(true);
    expect(pool.usedBytes).toBe(150);
  });
});

describe('BufferPool release', () => {
  it('of nothing, or of everything reserved, is no accounting error even in strict mode', () => {
    const pool = new BufferPool(100, 1000, true);
    pool.tryReserve(0, 30);
    pool.release(0);
    expect(pool.usedBytes).toBe(30);
    pool.release(30);
    expect(pool.usedBytes).toBe(0);
  });

  it('outside strict mode, a negative release changes nothing and an excess one empties the pool', () => {
    const pool = new BufferPool(100, 1000, false);
    pool.tryReserve(0, 30);
    pool.release(-5);
    expect(pool.usedBytes).toBe(30);
    pool.release(31);
    expect(pool.usedBytes).toBe(0);
    expect(pool.tryReserve(0, 100)).toBe(true);
  });
});
