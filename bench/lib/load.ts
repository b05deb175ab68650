/** A simple closed-loop load generator: `concurrency` workers, each starting its next call when the last ends. */
import { performance } from 'node:perf_hooks';

export interface ClosedLoopOptions {
  /** Number of calls in flight at any time. */
  concurrency: number;
  /** Stop starting calls after this many (across all workers). At least one of maxCalls/durationMs is needed. */
  maxCalls?: number;
  /** Stop starting calls once this much time has passed. */
  durationMs?: number;
  /** Record per-call latency (default true). Off for pure throughput runs to save memory. */
  recordLatency?: boolean;
  /** Makes one call; the promise settles when the call ends. `index` is the call's 0-based sequence number. */
  call: (index: number) => Promise<unknown>;
}

export interface ClosedLoopResult {
  /** Calls that ended successfully. */
  completed: number;
  /** Calls whose promise rejected. */
  errors: number;
  /** First error seen, for reporting. */
  firstError: unknown;
  /** Wall time from the first start to the last end, ms. */
  elapsedMs: number;
  /** Successful calls per second. */
  throughput: number;
  /** Latency of each successful call, ms (empty when recordLatency is false). */
  latenciesMs: number[];
}

export async function runClosedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const { concurrency, maxCalls, durationMs, call } = options;
  if (maxCalls === undefined && durationMs === undefined) {
    throw new Error('runClosedLoop: give maxCalls, durationMs or both');
  }
  const record = options.recordLatency !== false;
  const limit = maxCalls ?? Number.POSITIVE_INFINITY;
  const latenciesMs: number[] = [];
  let started = 0;
  let completed = 0;
  let errors = 0;
  let firstError: unknown;
  const t0 = performance.now();
  const stopAt = durationMs === undefined ? Number.POSITIVE_INFINITY : t0 + durationMs;

  const worker = async (): Promise<void> => {
    while (started < limit && performance.now() < stopAt) {
      const index = started++;
      const begin = performance.now();
      try {
        await call(index);
        completed++;
        if (record) latenciesMs.push(performance.now() - begin);
      } catch (error) {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  const elapsedMs = performance.now() - t0;
  return {
    completed,
    errors,
    firstError,
    elapsedMs,
    throughput: elapsedMs > 0 ? (completed * 1000) / elapsedMs : 0,
    latenciesMs,
  };
}

/**
 * Starts `total` calls at `rate` per second (open loop: on schedule, whether or not earlier calls have ended);
 * resolves when every call has ended. `onEnd` gets each call's start (s since the loop began) and latency;
 * `tick`, if given, is called once per half second with the time elapsed (s).
 */
export async function openLoop(
  rate: number,
  total: number,
  call: (index: number) => Promise<unknown>,
  onEnd: (index: number, startedS: number, latencyMs: number, error: unknown) => void,
  tick?: (elapsedS: number) => void,
): Promise<void> {
  const started = performance.now();
  const pending: Promise<void>[] = [];
  let lastTick = -1;
  while (pending.length < total) {
    const elapsed = performance.now() - started;
    const due = Math.min(total, Math.floor((elapsed * rate) / 1000) + 1);
    while (pending.length < due) {
      const index = pending.length;
      const begin = performance.now();
      const startedS = (begin - started) / 1000;
      pending.push(
        call(index).then(
          () => onEnd(index, startedS, performance.now() - begin, undefined),
          (error: unknown) => onEnd(index, startedS, performance.now() - begin, error),
        ),
      );
    }
    const halfSecond = Math.floor(elapsed / 500);
    if (tick && halfSecond !== lastTick) {
      lastTick = halfSecond;
      tick(elapsed / 1000);
    }
    await sleep(2);
  }
  await Promise.all(pending);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The order in which to run `variants` in round `round`: rotated by the round number, and reversed on odd
 * rounds, so that over several rounds every variant runs early and late and after each of the others.
 */
export function roundOrder<T>(variants: readonly T[], round: number): T[] {
  const n = variants.length;
  const rotated = variants.map((_, i) => variants[(i + round) % n] as T);
  return round % 2 === 1 ? rotated.reverse() : rotated;
}
