import { DDSketch } from '@datadog/sketches-js';

/** Relative accuracy of the quantile sketches: a quantile read back is within 1% of a true sample value. */
export const LATENCY_SKETCH_RELATIVE_ACCURACY = 0.01;

/**
 * Latencies of one method over a sliding window, kept as a ring of `slices` DDSketches that each cover
 * `windowMs / slices` of time (Finagle's BackupRequestFilter: 3 slices of 10 s). A slice older than the window is
 * emptied when time reaches it again, so nothing has to run on a timer: time is whatever `now` the caller passes.
 * @internal
 */
export class LatencyWindow {
  private readonly sketches: DDSketch[];
  /** Which slice number (`floor(now / sliceMs)`) each ring entry currently holds; -1 for none. */
  private readonly sliceOf: number[];
  private readonly sliceMs: number;

  constructor(
    windowMs: number,
    private readonly slices: number,
  ) {
    this.sliceMs = windowMs / slices;
    this.sketches = Array.from({ length: slices }, () => newSketch());
    this.sliceOf = Array.from({ length: slices }, () => -1);
  }

  /** Record one latency (ms, >= 0) observed at time `now` (ms). */
  record(latencyMs: number, now: number): void {
    const slice = Math.floor(now / this.sliceMs);
    const index = mod(slice, this.slices);
    if (this.sliceOf[index] !== slice) {
      // This ring entry held an older slice (or none): start it afresh.
      this.sketches[index] = newSketch();
      this.sliceOf[index] = slice;
    }
    (this.sketches[index] as DDSketch).accept(latencyMs);
  }

  /**
   * The samples recorded in the window that ends at `now` (the current slice and the `slices - 1` before it),
   * merged into one sketch.
   */
  snapshot(now: number): { count: number; quantile(q: number): number } {
    const current = Math.floor(now / this.sliceMs);
    const merged = newSketch();
    for (let i = 0; i < this.slices; i++) {
      const slice = this.sliceOf[i] as number;
      if (slice < 0 || slice > current || slice <= current - this.slices) {
        continue;
      }
      const sketch = this.sketches[i] as DDSketch;
      if (sketch.count > 0) {
        merged.merge(sketch);
      }
    }
    return {
      count: merged.count,
      quantile: (q: number) => merged.getValueAtQuantile(q),
    };
  }
}

function newSketch(): DDSketch {
  return new DDSketch({ relativeAccuracy: LATENCY_SKETCH_RELATIVE_ACCURACY });
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}
