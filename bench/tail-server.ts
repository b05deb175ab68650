/**
 * Long-tail server for bench/tail.ts, run in its own process:
 *   node --import tsx bench/tail-server.ts [--fast-ms=2] [--slow-extra-ms=200] [--slow-fraction=0.05]
 *
 * Every attempt independently takes about `fastMs`, or with probability `slowFraction` about `fastMs +
 * slowExtraMs`, then answers OK. It prints `PORT <n>` on stdout and, over IPC, reports how many attempts it saw
 * per value of the `x-bench-variant` request header (every attempt that reached the handler, cancelled ones
 * included).
 */
import { FlakyServer, type RecordedAttempt } from 'grpc-retry-hedging/testing';
import { numericArgs } from './lib/args.js';
import { serveControl } from './lib/child-server.js';
import { VARIANT_METADATA_KEY } from './lib/grpc-calls.js';

const opts = numericArgs({ fastMs: 2, slowExtraMs: 200, slowFraction: 0.05, port: 0 });

interface VariantCounts {
  attempts: number;
  cancelled: number;
  slow: number;
}

const counts = new Map<string, VariantCounts>();
let slowDrawn = 0;

function variantOf(metadata: RecordedAttempt['metadata']): string {
  const v = metadata[VARIANT_METADATA_KEY];
  return typeof v === 'string' ? v : '(none)';
}

function bucket(variant: string): VariantCounts {
  let c = counts.get(variant);
  if (!c) {
    c = { attempts: 0, cancelled: 0, slow: 0 };
    counts.set(variant, c);
  }
  return c;
}

const server = await FlakyServer.start({
  port: opts.port,
  onAttempt: (info) => {
    // Drawn independently for every attempt, hedges included.
    const slow = Math.random() < opts.slowFraction;
    if (slow) {
      slowDrawn++;
      const v = info.metadata.get(VARIANT_METADATA_KEY)[0];
      bucket(typeof v === 'string' ? v : '(none)').slow++;
    }
    return { delayMs: slow ? opts.fastMs + opts.slowExtraMs : opts.fastMs };
  },
  onAttemptEnd: (attempt) => {
    const c = bucket(variantOf(attempt.metadata));
    c.attempts++;
    if (attempt.cancelled) c.cancelled++;
  },
});

let resets = 0;
serveControl(
  server.port,
  {
    /** Attempts per variant since the last reset, plus attempts still running. */
    counts: () => ({
      variants: Object.fromEntries(counts),
      running: server.activeAttempts(),
      slowDrawn,
    }),
    /** Forget counts and the FlakyServer's records (keeps memory flat across rounds). */
    reset: () => {
      counts.clear();
      slowDrawn = 0;
      server.reset();
      resets++;
      return { resets };
    },
  },
  () => server.stop(100),
);
