import { seededRandom } from 'grpc-retry-hedging/testing';
/** Small statistics helpers for the benchmarks. */

/** Sorted copy of `values` (ascending, numeric). */
export function sorted(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values as ArrayLike<number>).sort();
}

/**
 * Nearest-rank percentile of ascending `sortedValues`: the smallest value with at least `p`% of the samples at or
 * below it. NaN for an empty array.
 */
export function percentile(sortedValues: ArrayLike<number>, p: number): number {
  const n = sortedValues.length;
  if (n === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * n);
  const index = Math.min(n - 1, Math.max(0, rank - 1));
  return sortedValues[index] as number;
}

/** Median of unsorted values (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return sum / values.length;
}

/** Summary of a latency sample in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export function summarize(latenciesMs: ArrayLike<number>): LatencySummary {
  const s = sorted(latenciesMs);
  return {
    count: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    p999: percentile(s, 99.9),
    max: s.length > 0 ? (s[s.length - 1] as number) : Number.NaN,
    mean: mean(s),
  };
}

/**
 * Bootstrap 95% interval of `percentile(b, p) - percentile(a, p)`: both samples are resampled with replacement
 * `reps` times. Returns the observed difference and the 2.5% / 97.5% bounds.
 */
export function bootstrapPercentileDiff(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  p: number,
  reps = 400,
  seed = 1,
): { diff: number; low: number; high: number } {
  const random = seededRandom(seed);
  const resampledPercentile = (xs: ArrayLike<number>, buf: Float64Array): number => {
    for (let i = 0; i < buf.length; i++) buf[i] = xs[Math.floor(random() * xs.length)] as number;
    buf.sort();
    return percentile(buf, p);
  };
  const bufA = new Float64Array(a.length);
  const bufB = new Float64Array(b.length);
  const diffs: number[] = [];
  for (let r = 0; r < reps; r++) diffs.push(resampledPercentile(b, bufB) - resampledPercentile(a, bufA));
  diffs.sort((x, y) => x - y);
  return {
    diff: percentile(sorted(b), p) - percentile(sorted(a), p),
    low: percentile(diffs, 2.5),
    high: percentile(diffs, 97.5),
  };
}

export { seededRandom };
