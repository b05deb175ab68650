import { DDSketch } from '@datadog/sketches-js';

/** Relative accuracy of the quantile sketches: a quantile read back is within 1% of a true sample value. */
export const LATENCY_SKETCH_RELATIVE_ACCURACY = 0.01;

/**
 * Latencies of one method over a sliding window, kept as a ring of `bins` DDSketches that each cover
 * `windowMs / bins` of time (Finagle's BackupRequestFilter: 3 slices of 10 s). A bin older than the window is
 * emptied when time reaches it again, so nothing has to run on a timer: time is whatever `now` the caller passes.
 * @internal
 */
export class LatencyWindow {
  private readonly sketches: DDSketch[];
  /** Which bin number (`floor(now / binMs)`) each ring entry currently holds; -1 for none. */
  private readonly binOf: number[];
  private readonly binMs: number;

  constructor(
    windowMs: number,
    private readonly bins: number,
  ) {
    this.binMs = windowMs / bins;
    this.sketches = Array.from({ length: bins }, () => newSketch());
    this.binOf = Array.from({ length: bins }, () => -1);
  }

  /** Record one latency (ms, >= 0) observed at time `now` (ms). */
  record(latencyMs: number, now: number): void {
    const bin = Math.floor(now / this.binMs);
    const index = mod(bin, this.bins);
    if (this.binOf[index] !== bin) {
      // This ring entry held an older bin (or none): start it afresh.
      this.sketches[index] = newSketch();
      this.binOf[index] = bin;
    }
    (this.sketches[index] as DDSketch).accept(latencyMs);
  }

  /**
   * The samples recorded in the window that ends at `now` (the current bin and the `bins - 1` before it),
   * merged into one sketch.
   */
  snapshot(now: number): { count: number; quantile(q: number): number } {
    const current = Math.floor(now / this.binMs);
    const merged = newSketch();
    for (let i = 0; i < this.bins; i++) {
      const bin = this.binOf[i] as number;
      if (bin < 0 || bin > current || bin <= current - this.bins) {
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
