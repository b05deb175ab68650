/**
 * An AdaptiveHedging (the built package's) that also keeps every outcome it is told of, stamped with the phase
 * running: what `npm run trace:adaptive` and `bench:adaptive -- --trace=FILE` write as a trace
 * (bench/lib/adaptive-trace.ts reads and replays it).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AdaptiveHedging } from 'grpc-retry-hedging';
import { formatTrace, type TraceOutcome } from './adaptive-trace.js';

/** What a trace's header says of the run that recorded it. */
export interface TracedRun {
  /** The command line, and which client of it the trace is of. */
  readonly command: string;
  /** The machine (bench/lib/env.ts's `machineLine`). */
  readonly machine: string;
  readonly rate: number;
  readonly learnCalls: number;
  readonly measuredCalls: number;
  readonly maxExtraLoad: number;
  readonly budgetMinPerSecond: number;
  /** How many calls failed, and which ones were counted ("calls", "measured calls"). */
  readonly failed: string;
}

export class RecordingAdaptiveHedging extends AdaptiveHedging {
  readonly outcomes: TraceOutcome[] = [];
  /** The phase running, written with each outcome; outcomes while it is '' (a warm-up) are not kept. */
  phase = '';
  private readonly started = performance.now();

  override recordOutcome(method: string, delayUsedMs: number, latencyMs: number, superseded = false): void {
    if (this.phase !== '') {
      this.outcomes.push({
        ms: Math.round(performance.now() - this.started),
        phase: this.phase,
        delayUsedMs,
        latencyMs,
        superseded,
      });
    }
    super.recordOutcome(method, delayUsedMs, latencyMs, superseded);
  }

  /** Writes the outcomes so far to `file` as a trace, its header describing `run`. */
  writeTrace(file: string, run: TracedRun): void {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      formatTrace(this.outcomes, [
        run.command,
        run.machine,
        `${run.rate} calls/s; phases a1, b, a2 of ${run.learnCalls} + ${run.measuredCalls} calls; maxExtraLoad ${run.maxExtraLoad}, budget floor ${run.budgetMinPerSecond}/s; ${run.failed} failed.`,
      ]),
    );
  }
}
