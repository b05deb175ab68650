/**
 * Which quantile sketch backs adaptive hedging: hdr-histogram-js vs @datadog/sketches-js (DDSketch), side by side
 * on the same latency samples. Measures what matters for a hedging delay: the relative error of p50/p95/p99, the
 * memory of one window, the cost of recording one value, and the cost of one recomputation (merge three windows,
 * read one quantile).
 *
 * Then what the call engine pays per hedged call: AdaptiveHedging.recordOutcome (one step, one sketch insert) and delayFor (one lookup).
 *
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json node --expose-gc --import tsx bench/adaptive-sketch.ts [--values=1000000]
 */
import { DDSketch } from '@datadog/sketches-js';
import { AdaptiveHedging } from 'grpc-retry-hedging';
import { seededRandom } from 'grpc-retry-hedging/testing';
import * as hdr from 'hdr-histogram-js';
import { POSITIVE_COUNT, scriptArgs } from './lib/args.js';
import { exposedGc } from './lib/short-gc-pauses.js';
import { percentile, sorted } from './lib/stats.js';
import { fmt, markdownTable } from './lib/table.js';

const opts = scriptArgs(
  {
    name: 'adaptive-sketch',
    command: 'node --expose-gc --import tsx bench/adaptive-sketch.ts',
    about:
      'Compares the quantile sketches behind adaptive hedging (hdr-histogram-js, DDSketch): error, memory, cost. Writes no file.',
  },
  { values: 1_000_000, windowValues: 30_000, rounds: 5, recomputes: 2_000 },
  {
    limits: {
      values: POSITIVE_COUNT,
      windowValues: POSITIVE_COUNT,
      rounds: POSITIVE_COUNT,
      recomputes: POSITIVE_COUNT,
    },
  },
).options;

interface Candidate {
  name: string;
  make(): Sketch;
}

interface Sketch {
  record(ms: number): void;
  quantile(q: number): number;
  /** A fresh sketch holding this one and `others`. */
  mergedWith(others: Sketch[]): Sketch;
  footprint(): number | undefined;
}

class Hdr implements Sketch {
  readonly h: hdr.Histogram;
  constructor(bitBucketSize: 32 | 'packed') {
    // Microseconds, 1 µs to 60 s, 2 significant digits (1% like the DDSketch below).
    this.h = hdr.build({
      bitBucketSize,
      lowestDiscernibleValue: 1,
      highestTrackableValue: 60_000_000,
      numberOfSignificantValueDigits: 2,
      autoResize: true,
    });
  }
  record(ms: number): void {
    this.h.recordValue(Math.round(ms * 1000));
  }
  quantile(q: number): number {
    return this.h.getValueAtPercentile(q * 100) / 1000;
  }
  mergedWith(others: Sketch[]): Sketch {
    const out = new Hdr(32);
    out.h.add(this.h);
    for (const o of others) out.h.add((o as Hdr).h);
    return out;
  }
  footprint(): number {
    return this.h.estimatedFootprintInBytes;
  }
}

class Dd implements Sketch {
  readonly s = new DDSketch({ relativeAccuracy: 0.01 });
  record(ms: number): void {
    this.s.accept(ms);
  }
  quantile(q: number): number {
    return this.s.getValueAtQuantile(q);
  }
  mergedWith(others: Sketch[]): Sketch {
    const out = new Dd();
    out.s.merge(this.s);
    for (const o of others) out.s.merge((o as Dd).s);
    return out;
  }
  footprint(): undefined {
    return undefined;
  }
}

const candidates: Candidate[] = [
  { name: 'hdr-histogram-js (32-bit buckets)', make: () => new Hdr(32) },
  { name: 'hdr-histogram-js (packed)', make: () => new Hdr('packed') },
  { name: '@datadog/sketches-js DDSketch (1%)', make: () => new Dd() },
];

/** Latencies like the adaptive benchmark's regimes: a fast path with jitter and a 5% slow tail. */
function latencies(n: number, fastMs: number, slowMs: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = random() < 0.05 ? slowMs : fastMs;
    out[i] = base * (0.8 + 0.6 * random()) + random() * 0.5;
  }
  return out;
}

function heapUsed(): number {
  const gc = exposedGc();
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  // Typed arrays (hdr-histogram-js's counts) live outside the JS heap.
  return usage.heapUsed + usage.arrayBuffers;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const regimes = [
  { name: '2 ms / 5% 200 ms', data: latencies(opts.windowValues, 2, 200, 1) },
  { name: '20 ms / 5% 400 ms', data: latencies(opts.windowValues, 20, 400, 2) },
];
const recordData = latencies(opts.values, 2, 200, 3);

const rows: (string | number)[][] = [];
for (const c of candidates) {
  // Accuracy: worst relative error of p50, p95, p99 over both regimes.
  let worstError = 0;
  for (const r of regimes) {
    const s = c.make();
    for (const v of r.data) s.record(v);
    const exact = sorted(r.data);
    for (const q of [0.5, 0.95, 0.99]) {
      const truth = percentile(exact, q * 100);
      worstError = Math.max(worstError, Math.abs(s.quantile(q) - truth) / truth);
    }
  }
  // Memory: heap growth for 100 windows holding a regime's samples each.
  const before = heapUsed();
  const keep: Sketch[] = [];
  for (let i = 0; i < 100; i++) {
    const s = c.make();
    for (const v of (regimes[i % 2] as (typeof regimes)[0]).data.subarray(0, 5000)) s.record(v);
    keep.push(s);
  }
  const perWindow = (heapUsed() - before) / keep.length;
  const footprint = keep[0]?.footprint();
  // Cost of recording one value.
  const recordNs: number[] = [];
  for (let round = 0; round < opts.rounds + 1; round++) {
    const s = c.make();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < recordData.length; i++) s.record(recordData[i] as number);
    const ns = Number(process.hrtime.bigint() - t0) / recordData.length;
    if (round > 0) recordNs.push(ns); // round 0 warms up
  }
  // Cost of one recomputation: merge three windows and read p95.
  const windows = [c.make(), c.make(), c.make()];
  windows.forEach((w, i) => {
    for (const v of (regimes[i % 2] as (typeof regimes)[0]).data.subarray(0, 10_000)) w.record(v);
  });
  const [w0, ...rest] = windows as [Sketch, Sketch, Sketch];
  const t0 = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < opts.recomputes; i++) sink += w0.mergedWith(rest).quantile(0.95);
  const recomputeUs = Number(process.hrtime.bigint() - t0) / 1000 / opts.recomputes;
  if (!Number.isFinite(sink)) throw new Error('bad quantile');
  rows.push([
    c.name,
    `${fmt(worstError * 100, 2)}%`,
    fmt(median(recordNs), 1),
    fmt(recomputeUs, 1),
    `${fmt(perWindow / 1024, 1)} KiB${footprint === undefined ? '' : ` (footprint ${fmt(footprint / 1024, 1)} KiB)`}`,
  ]);
}

console.log(
  `${opts.values} values recorded per round, ${opts.rounds} rounds (median); accuracy on ${opts.windowValues} samples per regime; ` +
    `memory: heap + array-buffer growth per window of 5,000 samples${exposedGc() ? '' : ' (run with --expose-gc for stable figures)'}`,
);
console.log('');
console.log(
  markdownTable(
    [
      'sketch',
      'worst relative error (p50/p95/p99)',
      'record ns/value',
      'recompute µs (merge 3 + p95)',
      'memory per window',
    ],
    rows,
  ),
);

// What the engine pays per call: one recordOutcome() and one delayFor(), on the real clock, for one method.
{
  const hedging = new AdaptiveHedging();
  const method = '/pkg.Service/Read';
  const recordNs: number[] = [];
  const delayNs: number[] = [];
  let sink = 0;
  for (let round = 0; round < opts.rounds + 1; round++) {
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < recordData.length; i++) hedging.recordOutcome(method, 20, recordData[i] as number);
    const r = Number(process.hrtime.bigint() - t0) / recordData.length;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < recordData.length; i++) sink += hedging.delayFor(method, 20).delayMs;
    const d = Number(process.hrtime.bigint() - t0) / recordData.length;
    if (round > 0) {
      recordNs.push(r);
      delayNs.push(d);
    }
  }
  if (!Number.isFinite(sink)) throw new Error('bad delay');
  console.log('');
  console.log(
    `AdaptiveHedging, per call: record ${fmt(median(recordNs), 1)} ns, delayFor ${fmt(median(delayNs), 1)} ns ` +
      `(median of ${opts.rounds} rounds of ${opts.values} calls; includes Date.now() and the method lookup)`,
  );
}
