/** The calls of one phase of bench:adaptive, as its report reads them. */
export interface PhaseCalls {
  /** Latency of each measured call that succeeded, ms. */
  latencies: number[];
  /**
   * Every call of the phase, learning ones included: when it started (s since the phase began) and its latency,
   * +∞ for a failed call (the worst a window can hold).
   */
  timeline: { t: number; latencyMs: number }[];
  /** Every call of the phase by its index (learning ones included): its latency, or +∞ if it failed. */
  byIndex: number[];
  /** When each call of the phase started, by its index, ms since the epoch. */
  startByIndex: number[];
  /** Measured calls that failed. */
  failed: number;
  firstError: string | undefined;
}

/** A phase with no call recorded yet. */
export const emptyPhaseCalls = (): PhaseCalls => ({
  latencies: [],
  timeline: [],
  byIndex: [],
  startByIndex: [],
  failed: 0,
  firstError: undefined,
});

/**
 * Records call `index` of a phase that began at `fromMs` (ms since the epoch): started `startedS` into the phase,
 * it ended after `latencyMs`, with `error` if it failed. The first `learnCalls` are learning calls: in the timeline
 * and by index, not among the measured ones.
 */
export function recordPhaseCall(
  d: PhaseCalls,
  learnCalls: number,
  fromMs: number,
  index: number,
  startedS: number,
  latencyMs: number,
  error: unknown,
): void {
  const ms = error === undefined ? latencyMs : Number.POSITIVE_INFINITY;
  d.timeline.push({ t: startedS, latencyMs: ms });
  d.byIndex[index] = ms;
  d.startByIndex[index] = fromMs + startedS * 1000;
  if (index < learnCalls) return;
  if (error === undefined) d.latencies.push(latencyMs);
  else {
    d.failed++;
    d.firstError ??= String(error);
  }
}
