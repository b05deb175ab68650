import { describeValue } from '../util/option-checks.js';

/**
 * A small seeded pseudo-random source (mulberry32): the same seed gives the same sequence on every run.
 * Pass it as the interceptor's `random` option for reproducible jitter in tests, or use it to script
 * reproducible faults and latencies on the flaky server. Not for anything security-related.
 *
 * @param seed Any finite number (read as a 32-bit integer: `seed >>> 0`). Anything else is a TypeError, rather
 *   than the sequence of seed 0.
 * @returns A function returning numbers uniform in [0, 1).
 */
export function seededRandom(seed: number): () => number {
  if (typeof seed !== 'number' || !Number.isFinite(seed)) {
    throw new TypeError(`seededRandom: seed must be a finite number, got ${describeValue(seed)}`);
  }
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
