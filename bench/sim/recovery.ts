import type { FleetSimulationConfig, FleetSimulationResult } from './fleet-simulation.js';

/** What the report says about one run. */
export interface FleetRunSummary {
  policy: string;
  label: string;
  /** Mean OK calls/s before the outage (after a short warm-up). */
  baselineGoodput: number;
  /** Attempts sent per call started, during the outage; NaN for a run without one. */
  outageAmplification: number;
  /** OK calls/s from the end of the outage to the end of the run; NaN for a run without one. */
  goodputAfterOutage: number;
  /** OK calls/s over the whole run. */
  goodput: number;
  /**
   * Time from the end of the outage (or from the start, for a run without one) to the end of the first bucket
   * from which goodput stays at the baseline; undefined when it never does.
   */
  timeToRecoverMs: number | undefined;
  /** Goodput never came back, and the pool was still offered at least its capacity at the end: retries kept it up. */
  metastable: boolean;
  /** Attempts per second offered to the pool over the last 5 s, and per call started. */
  finalAttemptsPerSec: number;
  finalAmplification: number;
  /** Attempts the pool finished after their client had given up, as a share of all it finished. */
  wastedShare: number;
  localRejections: number;
  peakQueue: number;
}

const WARMUP_MS = 5000;
/**
 * The least baseline, in OK calls per bucket, whose threshold (less four standard deviations of a Poisson count)
 * is above 0: with fewer, a bucket with no OK call at all would count as recovered.
 */
export const MIN_BASELINE_PER_BUCKET = 16;
const TAIL_MS = 5000;

function sum(values: number[], from: number, to: number): number {
  let s = 0;
  for (let i = Math.max(0, from); i < Math.min(values.length, to); i++) {
    s += values[i]!;
  }
  return s;
}

/** The earliest an outage may start (or a run without one end) for a baseline of one whole bucket after the warm-up. */
export function leastBaselineEndMs(bucketMs: number): number {
  return (Math.floor(WARMUP_MS / bucketMs) + 1) * bucketMs;
}

/**
 * Why a run of `config` cannot be summarized, or undefined when it can: the baseline goodput is measured from the
 * end of the 5 s warm-up to the start of the outage (to the end of a run without one), and needs a whole bucket
 * there; with none, a baseline of 0 would make every bucket good, and any policy "recovered".
 */
export function fleetSummaryProblem(
  config: Pick<FleetSimulationConfig, 'bucketMs' | 'durationMs' | 'outageStartMs' | 'outageMs'>,
): string | undefined {
  const b = config.bucketMs;
  const least = leastBaselineEndMs(b);
  if (config.outageMs > 0 && Math.floor(config.outageStartMs / b) * b < least) {
    return `outageStartMs ${config.outageStartMs} leaves no time to measure the goodput before the outage: it must be ${least} or more (${WARMUP_MS} ms of warm-up, then a ${b} ms bucket)`;
  }
  if (config.outageMs === 0 && Math.floor(config.durationMs / b) * b < least) {
    return `durationMs ${config.durationMs} leaves no time to measure the goodput after the ${WARMUP_MS} ms warm-up: it must be ${least} or more`;
  }
  return undefined;
}

/**
 * Summarize a run. A bucket counts as good when its goodput is at least the baseline less 5% (or less four
 * standard deviations of a Poisson count, for small fleets). Only whole buckets count: when the run's length is no
 * multiple of `bucketMs`, its last, partial bucket (which holds fewer calls) is left out. Throws a RangeError when
 * the run leaves no time for the baseline ({@link fleetSummaryProblem}), or when the baseline is too small to tell a
 * recovered bucket from an empty one ({@link MIN_BASELINE_PER_BUCKET}).
 */
export function summarizeFleetRun(result: FleetSimulationResult): FleetRunSummary {
  const { config, timeline } = result;
  const problem = fleetSummaryProblem(config);
  if (problem !== undefined) {
    throw new RangeError(`fleet simulation summary: ${problem}`);
  }
  const b = timeline.bucketMs;
  const buckets = Math.min(timeline.ok.length, Math.floor(config.durationMs / b));
  const perSec = (count: number, fromBucket: number, toBucket: number) =>
    count / (((Math.min(buckets, toBucket) - Math.max(0, fromBucket)) * b) / 1000);
  const hasOutage = config.outageMs > 0;
  const outageFrom = Math.floor(config.outageStartMs / b);
  const outageTo = Math.ceil((config.outageStartMs + config.outageMs) / b);
  const baseFrom = Math.floor(WARMUP_MS / b);
  const baseTo = hasOutage ? outageFrom : buckets;
  const baselinePerBucket = sum(timeline.ok, baseFrom, baseTo) / Math.max(1, baseTo - baseFrom);
  const threshold = baselinePerBucket - Math.max(0.05 * baselinePerBucket, 4 * Math.sqrt(baselinePerBucket));
  if (threshold <= 0) {
    throw new RangeError(
      `fleet simulation summary: the goodput before the outage, ${baselinePerBucket.toFixed(1)} OK calls per ${b} ms bucket, is too small to tell recovery from noise (a bucket with no OK call would pass as recovered): it must be above ${MIN_BASELINE_PER_BUCKET}`,
    );
  }

  const triggerEnd = hasOutage ? outageTo : 0;
  let recoveredBucket: number | undefined;
  for (let i = buckets - 1; i >= triggerEnd; i--) {
    if (timeline.ok[i]! < threshold) {
      break;
    }
    recoveredBucket = i;
  }
  const triggerEndMs = hasOutage ? config.outageStartMs + config.outageMs : 0;
  const timeToRecoverMs =
    recoveredBucket === undefined ? undefined : (recoveredBucket + 1) * b - triggerEndMs;

  const tailFrom = buckets - Math.round(TAIL_MS / b);
  const finalAttempts = sum(timeline.attempts, tailFrom, buckets);
  const finalCalls = sum(timeline.calls, tailFrom, buckets);
  const finalAttemptsPerSec = perSec(finalAttempts, tailFrom, buckets);
  const served = sum(timeline.ok, 0, buckets) + sum(timeline.wasted, 0, buckets);
  return {
    policy: result.policy.key,
    label: result.policy.label,
    baselineGoodput: (baselinePerBucket * 1000) / b,
    outageAmplification: hasOutage
      ? sum(timeline.attempts, outageFrom, outageTo) / Math.max(1, sum(timeline.calls, outageFrom, outageTo))
      : Number.NaN,
    goodputAfterOutage: hasOutage
      ? perSec(sum(timeline.ok, outageTo, buckets), outageTo, buckets)
      : Number.NaN,
    goodput: perSec(sum(timeline.ok, 0, buckets), 0, buckets),
    timeToRecoverMs,
    metastable: timeToRecoverMs === undefined && finalAttemptsPerSec >= config.capacityRps,
    finalAttemptsPerSec,
    finalAmplification: finalAttempts / Math.max(1, finalCalls),
    wastedShare: served === 0 ? 0 : sum(timeline.wasted, 0, buckets) / served,
    localRejections: sum(timeline.localRejections, 0, buckets),
    peakQueue: Math.max(...timeline.queue),
  };
}
