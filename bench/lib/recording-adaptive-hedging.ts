/**
 * An AdaptiveHedging (the built package's) that also keeps every outcome it is told of, stamped with the phase
 * running: what `npm run trace:adaptive` and `bench:adaptive -- --trace=FILE` write as a trace
 * (bench/lib/adaptive-trace.ts reads and replays it).
 */
import { performance } from 'node:perf_hooks';
import { AdaptiveHedging } from 'grpc-retry-hedging';
import type { TraceOutcome } from './adaptive-trace.js';

export class RecordingAdaptiveHedging extends AdaptiveHedging {
  readonly outcomes: TraceOutcome[] = [];
  /** The phase running, written with each outcome. */
  phase = '';
  private readonly started = performance.now();

  override recordOutcome(method: string, delayUsedMs: number, latencyMs: number, superseded = false): void {
    this.outcomes.push({
      ms: Math.round(performance.now() - this.started),
      phase: this.phase,
      delayUsedMs,
      latencyMs,
      superseded,
    });
    super.recordOutcome(method, delayUsedMs, latencyMs, superseded);
  }
}
