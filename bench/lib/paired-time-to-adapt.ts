import { summarize } from './stats.js';

/** Options of the paired measures: the window's length in calls, and the ratio to the reference's p99. */
export interface PairedWindowOptions {
  readonly windowCalls: number;
  readonly ratio: number;
}

/** A window of calls `[from, to)` (indices) whose p99 was over `limitMs`: `ratio` × the reference's p99 there. */
export interface PairedWindowOver {
  readonly from: number;
  readonly to: number;
  readonly limitMs: number;
}

/**
 * The time to adapt of bench/adaptive.ts, paired. Both series met the same latency script
 * (bench/lib/latency-script.ts), so call i of one and call i of the other had the same slow attempts. Returns the
 * number of calls from the start of the phase until, in every window of `windowCalls` calls (stepped by a tenth of
 * that), the p99 of `calls` stays within `ratio` × the p99 of `reference` over the same calls: 0 when it always
 * was; undefined when the last window is over, or the series are shorter than a window. A window where the script
 * made three calls slow on both attempts, which no hedging delay can help with maxAttempts 2, is then over for
 * neither series. A failed call counts as +∞.
 */
export function pairedTimeToAdapt(
  calls: readonly number[],
  reference: readonly number[],
  options: PairedWindowOptions,
): number | undefined {
  const scan = scanWindows(calls, reference, options);
  if (scan === undefined) return undefined;
  if (scan.lastOver === undefined) return 0;
  return scan.lastOver.to >= scan.lastEnd ? undefined : scan.lastOver.to;
}

/** The last window of {@link pairedTimeToAdapt} whose p99 was over its limit, or undefined when none was. */
export function lastPairedWindowOver(
  calls: readonly number[],
  reference: readonly number[],
  options: PairedWindowOptions,
): PairedWindowOver | undefined {
  return scanWindows(calls, reference, options)?.lastOver;
}

function scanWindows(
  calls: readonly number[],
  reference: readonly number[],
  { windowCalls, ratio }: PairedWindowOptions,
): { lastOver: PairedWindowOver | undefined; lastEnd: number } | undefined {
  const step = Math.max(1, Math.round(windowCalls / 10));
  const n = Math.min(calls.length, reference.length);
  if (windowCalls < 1 || n < windowCalls) return undefined;
  let lastOver: PairedWindowOver | undefined;
  let lastEnd = 0;
  for (let from = 0; from + windowCalls <= n; from += step) {
    lastEnd = from + windowCalls;
    const p99 = summarize(calls.slice(from, lastEnd)).p99;
    const limitMs = summarize(reference.slice(from, lastEnd)).p99 * ratio;
    if (p99 > limitMs) lastOver = { from, to: lastEnd, limitMs };
  }
  return { lastOver, lastEnd };
}
