/**
 * Regime-shifting long-tail server for bench/adaptive.ts, run in its own process:
 *   node --import tsx bench/adaptive-server.ts [--fast-a-ms=2 --slow-a-ms=200 --fast-b-ms=20 --slow-b-ms=400
 *                                                --slow-fraction=0.05]
 *
 * The latency regime of an attempt is named by its `x-bench-regime` request header (`a` or `b`): with probability
 * `slowFraction` it takes about the regime's slow time, otherwise its fast time × U[0.5, 1.5] (drawn per attempt,
 * hedges included). It prints `PORT <n>` on stdout and, over IPC, reports the attempts it saw per variant
 * (`x-bench-variant`) and regime, cancelled ones included.
 */
import { FlakyServer, type RecordedAttempt } from 'grpc-retry-hedging/testing';
import { numericArgs, serveControl } from './lib/child-server.js';
import { VARIANT_METADATA_KEY } from './lib/grpc-calls.js';

/** Request header naming the latency regime of an attempt. */
const REGIME_METADATA_KEY = 'x-bench-regime';

const opts = numericArgs({
  fastAMs: 2,
  slowAMs: 200,
  fastBMs: 20,
  slowBMs: 400,
  slowFraction: 0.05,
  port: 0,
});

interface Counts {
  attempts: number;
  cancelled: number;
}

const counts = new Map<string, Counts>();

function header(metadata: RecordedAttempt['metadata'], key: string): string {
  const v = metadata[key];
  return typeof v === 'string' ? v : '(none)';
}

const server = await FlakyServer.start({
  port: opts.port,
  onAttempt: (info) => {
    const regime = info.metadata.get(REGIME_METADATA_KEY)[0] === 'b' ? 'b' : 'a';
    const fast = regime === 'a' ? opts.fastAMs : opts.fastBMs;
    const slow = regime === 'a' ? opts.slowAMs : opts.slowBMs;
    const delayMs = Math.random() < opts.slowFraction ? slow : fast * (0.5 + Math.random());
    return { delayMs: Math.round(delayMs) };
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
    counts: () => ({ counts: Object.fromEntries(counts), running: server.activeCalls() }),
    reset: () => {
      counts.clear();
      server.reset();
      return true;
    },
  },
  () => server.stop(100),
);
