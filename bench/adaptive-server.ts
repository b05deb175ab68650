/**
 * Regime-shifting long-tail server for bench/adaptive.ts, run in its own process:
 *   node --import tsx bench/adaptive-server.ts [--fast-a-ms=2 --slow-a-ms=200 --fast-b-ms=20 --slow-b-ms=400
 *                                                --slow-fraction=0.05 --seed=1]
 *
 * The latency regime of an attempt is named by its `x-bench-regime` request header (`a` or `b`): with probability
 * `slowFraction` it takes about the regime's slow time, otherwise its fast time × U[0.5, 1.5], drawn per attempt
 * (hedges included). An attempt that names its call (`x-bench-call`, see bench/lib/latency-script.ts) takes what
 * the script under `seed` holds for that call and its attempt number (`grpc-previous-rpc-attempts`), so every
 * variant meets the same slow attempts; others draw from Math.random. It prints `PORT <n>` on stdout and, over IPC, reports the attempts it saw per variant
 * (`x-bench-variant`) and regime, cancelled ones included.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { FlakyServer, type RecordedAttempt } from 'grpc-retry-hedging/testing';
import { REGIME_METADATA_KEY } from './lib/adaptive-phases.js';
import { numericArgs } from './lib/args.js';
import { serveControl } from './lib/child-server.js';
import { VARIANT_METADATA_KEY } from './lib/grpc-calls.js';
import { parseScriptCall, SCRIPT_CALL_METADATA_KEY, scriptedAttempt } from './lib/latency-script.js';
import { collectGarbage } from './lib/short-gc-pauses.js';

const opts = numericArgs({
  fastAMs: 2,
  slowAMs: 200,
  fastBMs: 20,
  slowBMs: 400,
  slowFraction: 0.05,
  /** The latency script's seed. */
  seed: 1,
  port: 0,
});

interface Counts {
  attempts: number;
  cancelled: number;
}

const counts = new Map<string, Counts>();
/** Attempts that arrived with `grpc-previous-rpc-attempts` above 0 (a check that the script sees hedges). */
let hedgesSeen = 0;

function header(metadata: RecordedAttempt['metadata'], key: string): string {
  const v = metadata[key];
  return typeof v === 'string' ? v : '(none)';
}

/** This process's GC pauses: start (ms since the epoch) and length (ms), for the bench to place in its phases. */
const gcPauses: { startMs: number; durationMs: number }[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.push({ startMs: performance.timeOrigin + entry.startTime, durationMs: entry.duration });
  }
}).observe({ entryTypes: ['gc'] });

const server = await FlakyServer.start({
  port: opts.port,
  // Attempts are counted in onAttemptEnd; a log of every attempt would only grow the heap and the GC pauses.
  maxRecordedAttempts: 0,
  onAttempt: (info) => {
    const regime = info.metadata.get(REGIME_METADATA_KEY)[0] === 'b' ? 'b' : 'a';
    const fast = regime === 'a' ? opts.fastAMs : opts.fastBMs;
    const slow = regime === 'a' ? opts.slowAMs : opts.slowBMs;
    const call = parseScriptCall(info.metadata.get(SCRIPT_CALL_METADATA_KEY)[0]);
    const attempt = Number(info.metadata.get('grpc-previous-rpc-attempts')[0] ?? 0);
    const drawn = call
      ? scriptedAttempt(
          opts.seed,
          call.phase,
          call.index,
          Number.isInteger(attempt) ? attempt : 0,
          opts.slowFraction,
        )
      : { slow: Math.random() < opts.slowFraction, fastFactor: 0.5 + Math.random() };
    if (attempt > 0) hedgesSeen++;
    return { delayMs: Math.round(drawn.slow ? slow : fast * drawn.fastFactor) };
  },
  onAttemptEnd: (attempt) => {
    const key = `${header(attempt.metadata, VARIANT_METADATA_KEY)}/${header(attempt.metadata, REGIME_METADATA_KEY)}`;
    let c = counts.get(key);
    if (!c) {
      c = { attempts: 0, cancelled: 0 };
      counts.set(key, c);
    }
    c.attempts++;
    if (attempt.cancelled) c.cancelled++;
  },
});

serveControl(
  server.port,
  {
    /** Attempts per `variant/regime` since the last reset, plus attempts still running. */
    counts: () => ({ counts: Object.fromEntries(counts), running: server.activeAttempts(), hedgesSeen }),
    /** Every GC pause of this process so far. */
    gcPauses: () => gcPauses,
    /** A full garbage collection (between variants; the process must run with `--expose-gc`). */
    collectGarbage: () => collectGarbage(),
    reset: () => {
      counts.clear();
      hedgesSeen = 0;
      server.reset();
      return true;
    },
  },
  () => server.stop(100),
);
