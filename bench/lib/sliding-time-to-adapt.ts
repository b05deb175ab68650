import { summarize } from './stats.js';

/** One call of a phase: when it started (ms since the phase began) and how long it took. */
export interface TimedCall {
  readonly startMs: number;
  readonly latencyMs: number;
}

/** What {@link slidingTimeToAdapt} found. */
export interface SlidingTimeToAdapt {
  /**
   * Seconds from the start of the phase until the p99 of every sliding window stays at or below the limit: 0 when
   * it always did; undefined when the last window is over it, or the phase is shorter than one window.
   */
  readonly timeToAdapt: number | undefined;
  /** The last window over the limit, if any: when it began (s since the phase began). */
  readonly fromS?: number;
  /** The latencies over the limit in that window, slowest first. */
  readonly overMs?: readonly number[];
}

/**
 * The time to adapt against a fixed limit, shared by `bench:adaptive` and `simulate:adaptive`: windows of
 * `windowMs` by call start, stepped by a tenth of that (the k-th window is [k·step, k·step + windowMs), so that no
 * rounding drifts), each over when its p99 is above `limitMs`. A window with no calls is skipped.
 */
export function slidingTimeToAdapt(
  calls: readonly TimedCall[],
  limitMs: number,
  windowMs = 1000,
): SlidingTimeToAdapt {
  if (calls.length === 0) return { timeToAdapt: undefined };
  const sorted = [...calls].sort((x, y) => x.startMs - y.startMs);
  const end = sorted[sorted.length - 1]?.startMs as number;
  if (end < windowMs) return { timeToAdapt: undefined };
  const stepMs = windowMs / 10;
  let lastBad: number | undefined;
  let lastBadOver: number[] = [];
  let lastEnd = 0;
  let from = 0;
  for (let k = 0; k * stepMs + windowMs <= end; k++) {
    const startMs = k * stepMs;
    lastEnd = startMs + windowMs;
    while (from < sorted.length && (sorted[from]?.startMs as number) < startMs) from++;
    const window: number[] = [];
    for (let i = from; i < sorted.length && (sorted[i]?.startMs as number) < lastEnd; i++) {
      window.push(sorted[i]?.latencyMs as number);
    }
    if (window.length === 0) continue;
    if (summarize(window).p99 > limitMs) {
      lastBad = lastEnd;
      lastBadOver = window.filter((ms) => ms > limitMs).sort((x, y) => y - x);
    }
  }
  if (lastBad === undefined) return { timeToAdapt: 0 };
  const over = { fromS: (lastBad - windowMs) / 1000, overMs: lastBadOver };
  return { timeToAdapt: lastBad >= lastEnd ? undefined : lastBad / 1000, ...over };
}
