/**
 * Coping with a shared machine: wait for other processes to go quiet before a round, and tell afterwards whether
 * something else competed for the cores during it (see CpuWatch). Rounds that were contended can then be left out
 * of the medians and percentiles.
 */
import { cpuSnapshot } from './env.js';
import { sleep } from './load.js';

/** Cores busy on the whole machine over the next `ms` milliseconds. */
export async function machineBusyCores(ms: number): Promise<number> {
  const a = cpuSnapshot();
  await sleep(ms);
  const b = cpuSnapshot();
  return (b.busyMs - a.busyMs) / ms;
}

export interface QuietOptions {
  /** Busy cores (whole machine, while the benchmark idles) below which the machine counts as quiet. */
  thresholdCores?: number;
  /** Length of one sample, ms. Two quiet samples in a row are needed. */
  sampleMs?: number;
  /** Give up waiting after this long and go on anyway. */
  maxWaitMs: number;
}

/** Waits until the machine is quiet (or `maxWaitMs` passed); resolves with how long it waited and whether quiet. */
export async function waitForQuiet(options: QuietOptions): Promise<{ waitedMs: number; quiet: boolean }> {
  const threshold = options.thresholdCores ?? 0.15;
  const sampleMs = options.sampleMs ?? 300;
  const start = Date.now();
  let quietSamples = 0;
  while (true) {
    const busy = await machineBusyCores(sampleMs);
    quietSamples = busy < threshold ? quietSamples + 1 : 0;
    const waitedMs = Date.now() - start;
    if (quietSamples >= 2) return { waitedMs, quiet: true };
    if (waitedMs >= options.maxWaitMs) return { waitedMs, quiet: false };
  }
}

/** Indices of the rounds to summarize: the uncontended ones when there are at least `minClean`, else all. */
export function roundsToUse(
  contended: readonly boolean[],
  minClean: number,
): { indices: number[]; cleanOnly: boolean } {
  const clean = contended.flatMap((c, i) => (c ? [] : [i]));
  if (clean.length >= minClean) return { indices: clean, cleanOnly: true };
  return { indices: contended.map((_, i) => i), cleanOnly: false };
}
