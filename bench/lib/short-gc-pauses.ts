/**
 * V8 settings that keep a bench process's garbage-collection pauses short, for benchmarks whose variants run one
 * after another and are compared by their tail latency.
 *
 * With Node's defaults, a bench client calling through grpc-js at 200 calls/s promotes about 1.4 MB/s into the old
 * generation (Node's HTTP/2 alone, about a third of that): its young-generation collections then copy megabytes of
 * survivors and pause it for 5–20 ms, and a mark-compact of the grown old generation pauses it, or the server, for
 * 10–80 ms. Such a pause holds every call in flight, whatever its hedging delay, and it falls on one variant and
 * not on the next: in three runs of `bench:adaptive` with Node's defaults, the same static delay run twice
 * differed by ×0.70–1.18 in a phase's p99, and the longest pause per phase was 22–25 ms in the client and
 * 69–76 ms in the server.
 *
 * - `--max-semi-space-size=1`: a young generation of 1 MB. It is collected more often (about every 0.1 s), each
 *   time with fewer survivors: pauses of 1–3 ms instead of 5–20 ms. (A larger one does the opposite: at 64 MB,
 *   fewer collections of up to 120 ms, because the objects grpc-js keeps for a second or more are all copied.)
 * - `--initial-old-space-size=1024`: no mark-compact until the old generation holds 1 GB. Instead, the bench calls
 *   {@link collectGarbage} in the client and the server between variants, with no call in flight (`--expose-gc`).
 *   Without it the old generation's garbage piles up over the run, and the young collections slow down with it: in
 *   one run of `bench:adaptive`, the client's went from 0.2 s of GC per phase (the longest pause 6 ms) in the first
 *   variant to 0.7 s (17 ms) in the last.
 *
 * Measured with `--trace-gc` on a bare grpc-js client at 190 calls/s for 20 s: Node's defaults 22 scavenges
 * (12 over 5 ms, the longest 18.9 ms) and 2 mark-compacts (the longest 12.8 ms); with the first two flags 202
 * scavenges, the longest 3.2 ms, and no mark-compact. The total time in GC is higher (0.39 s against 0.20 s in
 * 20 s); the pauses are what changes. In `bench:adaptive` (216 phases of six runs against 108 of three), the
 * longest client pause per phase went from a median of 14.4 ms to 3.4 ms, the server's from 3.7 ms to 1.4 ms
 * (at most 76 ms before, 19 ms after).
 */
import { spawn } from 'node:child_process';

export const SHORT_GC_PAUSE_FLAGS: readonly string[] = [
  '--max-semi-space-size=1',
  '--initial-old-space-size=1024',
  '--expose-gc',
];

/** Whether this process runs with {@link SHORT_GC_PAUSE_FLAGS}. */
export function hasShortGcPauses(execArgv: readonly string[] = process.execArgv): boolean {
  return SHORT_GC_PAUSE_FLAGS.every((flag) => execArgv.includes(flag));
}

/**
 * Runs this script again in a child process with {@link SHORT_GC_PAUSE_FLAGS} (the same Node options, arguments,
 * environment and standard streams) and resolves with its exit code. The young generation's size is fixed when
 * the heap is made, so a running process cannot take it.
 */
export function rerunWithShortGcPauses(): Promise<number> {
  const child = spawn(
    process.execPath,
    [...SHORT_GC_PAUSE_FLAGS, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** `gc()` where this process runs with `--expose-gc`, undefined otherwise. */
export function exposedGc(): (() => void) | undefined {
  return (globalThis as { gc?: () => void }).gc;
}

/** A full garbage collection now. Throws unless this process runs with `--expose-gc`. */
export function collectGarbage(): true {
  const gc = exposedGc();
  if (gc === undefined) throw new Error('collectGarbage: this process does not run with --expose-gc');
  gc();
  return true;
}
