/**
 * Adaptive hedging through latency shifts, up and down: no hedging, static hedging delays, grpc-js's built-in
 * hedging and adaptive hedging, side by side against the same server (bench/adaptive-server.ts, its own process).
 *
 *   npm run bench:adaptive [-- --rate=200 --learn-calls=300 --measured-calls=1200 --warm-up-calls=800]
 *
 * Each variant runs in turn, on its own connection, at a fixed arrival rate (open loop), through three phases:
 * regime A, then regime B (the shift up), then A again (the shift down). Regime A: a 2 ms fast path (× U[0.5, 1.5])
 * with 5% at 200 ms; regime B: 20 ms with 5% at 400 ms. Each phase starts with `learnCalls` calls that are not
 * measured (the time to learn, in the first phase a warm-up), then `measuredCalls` measured ones. Every variant
 * meets the same latency script (bench/lib/latency-script.ts): call i of a phase is slow on the same attempts for
 * all of them. Time to adapt after a shift: seconds from the shift until the p99 of a 1 s sliding window stays
 * within 1.15× the best static delay's (the lowest p99 among static delays with extra load ≤ 0.06 and no failed
 * call): paired, against that delay's p99 over the same calls; and against its p99 over the whole phase.
 * The control (`--control=0` leaves it out): each phase's best static delay runs again after all the others; its
 * ratio and paired time to adapt against its first run show what the machine's noise alone does to those figures.
 * The client and the server run with short GC pauses (bench/lib/short-gc-pauses.ts: this script starts itself
 * again with the V8 flags; `--short-gc-pauses=0` keeps Node's defaults). Each variant first makes `warmUpCalls`
 * calls of regime A, not measured (the JIT's warm-up; see the option). The client and the server run on a core each
 * (bench/lib/pin-cores.ts; `--pin-cores=0` leaves them to the scheduler).
 * Prints a markdown table and writes it to bench/results/adaptive.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import {
  AdaptiveHedging,
  createRetryInterceptor,
  type RetryEvent,
  type RetryInterceptorOptions,
} from 'grpc-retry-hedging';
import {
  adaptiveBenchConfig,
  adaptiveCallMetadata,
  ADAPTIVE_PHASES as PHASES,
} from './lib/adaptive-phases.js';
import {
  COUNT,
  FRACTION,
  failure,
  NON_NEGATIVE,
  orUsageExit,
  POSITIVE,
  POSITIVE_COUNT,
  type Script,
  scriptArgs,
  usageExit,
  userOutputPath,
} from './lib/args.js';
import { PACKAGE_ROOT, spawnBenchServer } from './lib/child-server.js';
import { CpuWatch, machineInfo, machineLine } from './lib/env.js';
import { extraLoad, STATIC_LOAD_LIMIT, withinLoadLimit } from './lib/extra-load.js';
import { type BenchClient, createClient, unary, waitForReady } from './lib/grpc-calls.js';
import { scriptedAttempt, scriptSeed } from './lib/latency-script.js';
import { openLoop, sleep } from './lib/load.js';
import { lastPairedWindowOver, pairedTimeToAdapt } from './lib/paired-time-to-adapt.js';
import { type PausesMet, pausesMet, type Span } from './lib/pauses-met.js';
import { emptyPhaseCalls, type PhaseCalls, recordPhaseCall } from './lib/phase-calls.js';
import { coresToPin, type PinnedCores, pinClientAndServer } from './lib/pin-cores.js';
import { RecordingAdaptiveHedging } from './lib/recording-adaptive-hedging.js';
import {
  collectGarbage,
  hasShortGcPauses,
  rerunWithShortGcPauses,
  SHORT_GC_PAUSE_FLAGS,
} from './lib/short-gc-pauses.js';
import { type SlidingTimeToAdapt, slidingTimeToAdapt } from './lib/sliding-time-to-adapt.js';
import { summarize } from './lib/stats.js';
import { fmt, markdownTable } from './lib/table.js';
import { shortPhaseProblem } from './sim/adaptive-sim-options.js';

const SCRIPT: Script = {
  name: 'bench:adaptive',
  about:
    'Adaptive hedging through latency shifts vs no hedging, static delays and grpc-js built-in, against a real ' +
    'server. Writes bench/results/adaptive.md (--write=0: does not), and with --trace=FILE a trace.',
};

const args = scriptArgs(
  SCRIPT,
  {
    /** Calls started per second (open loop). */
    rate: 200,
    /** Calls at the start of each phase that are not measured (the time to learn a shift). */
    learnCalls: 300,
    /** Measured calls per phase. */
    measuredCalls: 1200,
    /**
     * Calls of regime A each variant makes before its first phase, not measured (0: none): the JIT's warm-up. After
     * the garbage collection between variants (or on a new process), V8 optimizes the hot code again, and about
     * 2.5 s into the load its compiler threads take both cores from the client and the server for 20–40 ms.
     */
    warmUpCalls: 800,
    fastAMs: 2,
    slowAMs: 200,
    fastBMs: 20,
    slowBMs: 400,
    slowFraction: 0.05,
    maxExtraLoad: 0.05,
    /** The hedge budget's floor (hedges per second whatever the traffic). */
    budgetMinPerSecond: 3,
    /** The delay's window in calls (0: the default, 20 / maxExtraLoad). */
    recentCalls: 0,
    deadlineMs: 5_000,
    /** Run each phase's best static delay again at the end, as a control of the machine's noise (0: not). */
    control: 1,
    /** Write bench/results/adaptive.md (0 for exploratory runs). */
    write: 1,
    /** The latency script's seed (bench/lib/latency-script.ts); 0 picks one at random, printed with the results. */
    seed: 0,
    /** Run the client and the server with V8 flags that keep GC pauses short (bench/lib/short-gc-pauses.ts; 0: Node's defaults). */
    shortGcPauses: 1,
    /**
     * Pin the client and the server to a core each, the first two this process may use (bench/lib/pin-cores.ts; Linux
     * with `taskset` and two cores or more, otherwise the run says why it is not pinned; 0: let the scheduler place
     * them).
     */
    pinCores: 1,
  },
  {
    others: ['trace'],
    switches: ['control', 'write', 'shortGcPauses', 'pinCores'],
    limits: {
      rate: POSITIVE,
      learnCalls: COUNT,
      measuredCalls: POSITIVE_COUNT,
      warmUpCalls: COUNT,
      fastAMs: NON_NEGATIVE,
      slowAMs: NON_NEGATIVE,
      fastBMs: NON_NEGATIVE,
      slowBMs: NON_NEGATIVE,
      slowFraction: FRACTION,
      maxExtraLoad: { above: 0, max: 1 },
      budgetMinPerSecond: NON_NEGATIVE,
      recentCalls: COUNT,
      deadlineMs: POSITIVE,
      seed: COUNT,
    },
    notes: {
      seed: "the latency script's seed; 0 picks one at random",
      recentCalls: "the delay's window in calls; 0: its default",
      trace: "also write the adaptive variant's outcomes to this file, as a trace",
    },
  },
);
const opts = args.options;
// A phase shorter than the 1 s window of the time to adapt reads as "never" adapting for every variant.
const shortPhase = shortPhaseProblem(opts);
if (shortPhase !== undefined) usageExit(SCRIPT, shortPhase);
const seed = scriptSeed(opts.seed);
/** `--trace=FILE`: also write the adaptive variant's outcomes as a trace (see bench/adaptive-trace.ts). */
const traceArg = args.values.get('trace');
const traceOut =
  traceArg === undefined ? undefined : orUsageExit(SCRIPT, () => userOutputPath('--trace', traceArg));

type Phase = (typeof PHASES)[number];
type PhaseKey = Phase['key'];
const ABOUT_RIGHT_MS = 30;
const STATIC_DELAYS_MS = [5, 10, 20, 30, 40, 50, 150];
/** The targets of issue 22. */
const P99_RATIO_TARGET = 1.15;
const ADAPT_TARGET_S = 2;
const SLIDING_WINDOW_S = 1;

interface PhaseData extends PhaseCalls {
  /** Attempts of the measured calls that reached the server, and of those cancelled. */
  attempts: number;
  cancelled: number;
  budgetRefused: number;
  /** Hedges held while the calls stalled (`hedge-held`), and of those sent after the wait. */
  held: number;
  heldSent: number;
}

interface Variant {
  name: string;
  label: string;
  client: BenchClient;
  adaptive?: AdaptiveHedging;
  /** A static delay's, ms. */
  staticMs?: number;
  /** The control: a best static delay run again after the others (not a candidate for the best). */
  control?: boolean;
  data: Record<PhaseKey, PhaseData>;
  /** Adaptive only: the delay every half second of each phase. */
  delays: { phase: PhaseKey; t: number; delayMs: number | undefined }[];
  /** Adaptive only: the reporting window's first-attempt p95 at the end of each phase. */
  windowP95: Partial<Record<PhaseKey, number>>;
  budgetRefused: number;
  /** Adaptive only: hedges held while the calls stalled, and of those sent after the wait (whole run so far). */
  held: number;
  heldSent: number;
}

/**
 * The measured calls of phase number `phase` whose first attempt the script makes slow, and how many of those it
 * makes slow on their hedge too.
 */
function scriptedSlow(phase: number): { first: number; both: number } {
  let first = 0;
  let both = 0;
  for (let index = opts.learnCalls; index < opts.learnCalls + opts.measuredCalls; index++) {
    if (!scriptedAttempt(seed, phase, index, 0, opts.slowFraction).slow) continue;
    first++;
    if (scriptedAttempt(seed, phase, index, 1, opts.slowFraction).slow) both++;
  }
  return { first, both };
}

/** One process's garbage-collection pauses while a variant ran a phase: how many, their sum and the longest, ms. */
interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
}
type GcPauseList = { startMs: number; durationMs: number }[];
/** Every client GC pause of the run (ms since the epoch at its start, and its length, ms). */
const gcPauses: GcPauseList = [];
/** The server's, fetched at the end of the run. */
let serverGcPauses: GcPauseList = [];
const epochNow = (): number => performance.timeOrigin + performance.now();
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.push({ startMs: performance.timeOrigin + entry.startTime, durationMs: entry.duration });
  }
});
/** When each variant ran each phase (ms since the epoch), by `label|phase`. */
const phaseSpans = new Map<string, { fromMs: number; toMs: number }>();

function gcDuring(key: string, pauses: GcPauseList): GcPauses {
  const span = phaseSpans.get(key);
  const g: GcPauses = { count: 0, totalMs: 0, maxMs: 0 };
  if (!span) return g;
  for (const p of pauses) {
    if (p.startMs < span.fromMs || p.startMs >= span.toMs) continue;
    g.count++;
    g.totalMs += p.durationMs;
    g.maxMs = Math.max(g.maxMs, p.durationMs);
  }
  return g;
}

const emptyData = (): PhaseData => ({
  ...emptyPhaseCalls(),
  attempts: 0,
  cancelled: 0,
  budgetRefused: 0,
  held: 0,
  heldSent: 0,
});

function gcCell(g: GcPauses): string {
  return g.count === 0 ? '0' : `${g.count}, ${fmt(g.totalMs, 0)}, ${fmt(g.maxMs, 1)}`;
}

/** The script's phase number of the warm-up calls (the phases are 0, 1 and 2). */
const WARM_UP_SCRIPT_PHASE = PHASES.length;

/**
 * One call of variant `v`: its server-side count key (`label|stage|phase`, the server counts attempts by it), its
 * regime and its place in the latency script (`phase:index`).
 */
function benchCall(v: Variant, countKey: string, regime: string, scriptCall: string): Promise<unknown> {
  const metadata = adaptiveCallMetadata(`${v.label}|${countKey}`, regime, scriptCall);
  return unary(v.client, { payload: 'x' }, metadata, { deadline: Date.now() + opts.deadlineMs });
}

async function runVariant(v: Variant): Promise<void> {
  await waitForReady(v.client);
  // Regime A, scripted alike for every variant, counted by the server apart from the phases; the adaptive variant
  // learns from these calls too, and starts the first phase with the delay they left (the warm-up's own burst may
  // have raised it: 10–20 ms in seven runs, back to 8–11 ms by the first measured call in six of them).
  await openLoop(
    opts.rate,
    opts.warmUpCalls,
    (index) => benchCall(v, 'warm-up|a1', 'a', `${WARM_UP_SCRIPT_PHASE}:${index}`),
    () => {},
  );
  for (const [phaseNumber, phase] of PHASES.entries()) {
    const d = v.data[phase.key];
    if (v.adaptive instanceof RecordingAdaptiveHedging) v.adaptive.phase = phase.key;
    const refusedBefore = v.budgetRefused;
    const [heldBefore, heldSentBefore] = [v.held, v.heldSent];
    const fromMs = epochNow();
    await openLoop(
      opts.rate,
      opts.learnCalls + opts.measuredCalls,
      // Learning calls are counted apart by the server.
      (index) =>
        benchCall(
          v,
          `${index < opts.learnCalls ? 'learn' : 'measured'}|${phase.key}`,
          phase.regime,
          `${phaseNumber}:${index}`,
        ),
      (index, startedS, latencyMs, error) =>
        recordPhaseCall(d, opts.learnCalls, fromMs, index, startedS, latencyMs, error),
      v.adaptive
        ? (t) =>
            v.delays.push({ phase: phase.key, t, delayMs: v.adaptive?.currentDelays().values().next().value })
        : undefined,
    );
    phaseSpans.set(`${v.label}|${phase.key}`, { fromMs, toMs: epochNow() });
    d.budgetRefused = v.budgetRefused - refusedBefore;
    d.held = v.held - heldBefore;
    d.heldSent = v.heldSent - heldSentBefore;
    const method = v.adaptive?.currentDelays().keys().next().value;
    const report = method === undefined ? undefined : v.adaptive?.latencies(method);
    if (report) v.windowP95[phase.key] = report.p95;
  }
}

/** A variant's figures in one phase, as the tables show them. */
interface PhaseRow {
  v: Variant;
  d: PhaseData;
  s: ReturnType<typeof summarize>;
  calls: number;
  failed: number;
  extraLoad: number;
  cancelled: number;
}

/** The best static delay of a phase: the lowest p99 among the static delays with extra load ≤ 0.06 and no failed call. */
function bestStatic(rows: readonly PhaseRow[]): PhaseRow | undefined {
  return rows
    .filter((r) => r.v.staticMs !== undefined && !r.v.control)
    .filter((r) => withinLoadLimit(r.extraLoad, STATIC_LOAD_LIMIT) && r.failed === 0)
    .reduce<PhaseRow | undefined>((b, r) => (!b || r.s.p99 < b.s.p99 ? r : b), undefined);
}

/**
 * The last paired window over its limit of row `r` against `best` in phase number `phase`: the window's calls (s),
 * the limit, and the calls over it, split by what the script made of their first attempt.
 */
function describePairedOver(r: PhaseRow, best: PhaseRow, phase: number): string | undefined {
  const over = lastPairedWindowOver(r.d.byIndex, best.d.byIndex, {
    windowCalls: Math.round(opts.rate * SLIDING_WINDOW_S),
    ratio: P99_RATIO_TARGET,
  });
  if (!over) return undefined;
  const fast: number[] = [];
  const slow: number[] = [];
  const spans: Span[] = [];
  for (let index = over.from; index < over.to; index++) {
    const ms = r.d.byIndex[index] as number;
    if (!(ms > over.limitMs)) continue;
    (scriptedAttempt(seed, phase, index, 0, opts.slowFraction).slow ? slow : fast).push(ms);
    if (Number.isFinite(ms)) spans.push({ startMs: r.d.startByIndex[index] as number, durationMs: ms });
  }
  const metCell = (who: string, met: PausesMet) =>
    met.calls === 0 ? `${who} none` : `${who} ${met.calls} (the longest ${fmt(met.longestMs, 0)} ms)`;
  const list = (xs: number[]) =>
    xs.length === 0
      ? 'none'
      : `${xs.length} (${xs
          .sort((x, y) => y - x)
          .map((ms) => fmt(ms, 0))
          .join(', ')} ms)`;
  return (
    `${fmt(over.from / opts.rate, 1)}–${fmt(over.to / opts.rate, 1)} s (limit ${fmt(over.limitMs, 1)} ms); ` +
    `fast by the script: ${list(fast)}; slow first attempt: ${list(slow)}; ` +
    `in flight during a GC pause: ${metCell('of the client', pausesMet(spans, gcPauses))}, ` +
    `${metCell('of the server', pausesMet(spans, serverGcPauses))}`
  );
}

/** The time to adapt against `limitMs` over 1 s sliding windows, and the last window over it (see the helper). */
function lastWindowOver(
  timeline: readonly { t: number; latencyMs: number }[],
  limitMs: number,
): SlidingTimeToAdapt {
  return slidingTimeToAdapt(
    timeline.map(({ t, latencyMs }) => ({ startMs: t * 1000, latencyMs })),
    limitMs,
    SLIDING_WINDOW_S * 1000,
  );
}

async function main(): Promise<void> {
  if (opts.shortGcPauses && !hasShortGcPauses()) {
    process.exitCode = await rerunWithShortGcPauses();
    return;
  }
  const info = machineInfo();
  const gcFlags = opts.shortGcPauses ? SHORT_GC_PAUSE_FLAGS : [];
  const server = await spawnBenchServer(
    'bench/adaptive-server.ts',
    [
      `--fast-a-ms=${opts.fastAMs}`,
      `--slow-a-ms=${opts.slowAMs}`,
      `--fast-b-ms=${opts.fastBMs}`,
      `--slow-b-ms=${opts.slowBMs}`,
      `--slow-fraction=${opts.slowFraction}`,
      `--seed=${seed}`,
    ],
    { nodeArgs: gcFlags },
  );
  const cores = opts.pinCores ? coresToPin() : 'not asked for (`--pin-cores=0`)';
  const pinned: PinnedCores | undefined = typeof cores === 'string' ? undefined : cores;
  const notPinned = typeof cores === 'string' ? cores : undefined;
  if (pinned) pinClientAndServer(server.pid, pinned);
  const variants: Variant[] = [];
  const make = (
    name: string,
    label: string,
    client: BenchClient,
    extra: Pick<Variant, 'adaptive' | 'staticMs' | 'control'> = {},
  ): Variant => {
    const v: Variant = {
      name,
      label,
      client,
      data: { a1: emptyData(), b: emptyData(), a2: emptyData() },
      delays: [],
      windowP95: {},
      budgetRefused: 0,
      held: 0,
      heldSent: 0,
      ...extra,
    };
    variants.push(v);
    return v;
  };
  const ours = (delayMs: number, extra: object = {}, onEvent?: (e: RetryEvent) => void): BenchClient => {
    const options: RetryInterceptorOptions = { ...extra, ...(onEvent ? { onEvent } : {}) };
    return createClient(server.address, {
      interceptors: [createRetryInterceptor(adaptiveBenchConfig(delayMs), options)],
    });
  };
  make('no hedging', 'none', createClient(server.address));
  for (const ms of STATIC_DELAYS_MS) make(`static ${ms} ms`, `s${ms}`, ours(ms), { staticMs: ms });
  make(
    `grpc-js built-in, ${ABOUT_RIGHT_MS} ms`,
    'builtin',
    createClient(server.address, {
      'grpc.service_config': JSON.stringify(adaptiveBenchConfig(ABOUT_RIGHT_MS)),
    }),
  );
  const adaptiveOptions = {
    maxExtraLoad: opts.maxExtraLoad,
    budget: { minPerSecond: opts.budgetMinPerSecond },
    ...(opts.recentCalls > 0 ? { recentCalls: opts.recentCalls } : {}),
  };
  // The recorder keeps every outcome: only when a trace is asked for.
  const adaptive = traceOut
    ? new RecordingAdaptiveHedging(adaptiveOptions)
    : new AdaptiveHedging(adaptiveOptions);
  let adaptiveVariant: Variant | undefined;
  /** Calls of the adaptive variant whose hedge is held, until it is sent. */
  const heldCalls = new Set<number>();
  adaptiveVariant = make(
    `adaptive (maxExtraLoad ${opts.maxExtraLoad}, budget floor ${opts.budgetMinPerSecond}/s, configured ${ABOUT_RIGHT_MS} ms)`,
    'adaptive',
    ours(ABOUT_RIGHT_MS, { adaptiveHedging: adaptive }, (e) => {
      if (!adaptiveVariant) return;
      if (e.type === 'throttled' && e.gate === 'hedge-budget') adaptiveVariant.budgetRefused++;
      if (e.type === 'hedge-held') {
        adaptiveVariant.held++;
        heldCalls.add(e.callId);
      }
      if (e.type === 'hedge-sent' && heldCalls.delete(e.callId)) adaptiveVariant.heldSent++;
    }),
    { adaptive },
  );

  /** When the run started (ms since the epoch), for the progress lines and the time it took. */
  const started = Date.now();
  /** Runs one variant through the three phases and fetches the server's attempt counts for it. */
  const runAndCount = async (v: Variant): Promise<void> => {
    await server.request('reset');
    // With short GC pauses, every variant starts with the garbage of the ones before collected (no call in flight).
    if (gcFlags.length > 0) {
      collectGarbage();
      await server.request('collectGarbage');
    }
    await runVariant(v);
    await sleep(300); // let cancelled hedges and losers reach the server
    const reply = await server.request<{
      counts: Record<string, { attempts: number; cancelled: number }>;
      hedgesSeen: number;
    }>('counts');
    // The server counts by variant header (label, learning or measured, phase) and regime.
    for (const phase of PHASES) {
      const c = reply.counts[`${v.label}|measured|${phase.key}/${phase.regime}`];
      v.data[phase.key].attempts = c?.attempts ?? 0;
      v.data[phase.key].cancelled = c?.cancelled ?? 0;
    }
    const sent = PHASES.reduce((n, p) => n + v.data[p.key].attempts - v.data[p.key].latencies.length, 0);
    if (sent > 0 && reply.hedgesSeen === 0) {
      throw new Error(
        `${v.name}: the server saw no attempt with grpc-previous-rpc-attempts, so the script cannot tell hedges apart`,
      );
    }
    process.stderr.write(`${v.name}: done at ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  };

  const rowsFor = (phase: PhaseKey): PhaseRow[] =>
    variants.map((v) => {
      const d = v.data[phase];
      const s = summarize(d.latencies);
      const calls = s.count + d.failed;
      return {
        v,
        d,
        s,
        calls,
        failed: d.failed,
        extraLoad: extraLoad(d.attempts, calls),
        cancelled: d.cancelled / calls,
      };
    });
  gcObserver.observe({ entryTypes: ['gc'] });
  const watch = await CpuWatch.begin(() => server.request<number>('cpu'));
  let cpuLine = '';
  try {
    // A copy: the control below adds its variants to the list.
    for (const v of variants.slice()) await runAndCount(v);
    // The control: each phase's best static delay run again, after everything else. Its ratio and time to adapt
    // against the first run are what the machine's noise alone gives those figures.
    if (opts.control) {
      const delays = new Set<number>();
      for (const phase of PHASES) {
        const best = bestStatic(rowsFor(phase.key));
        if (best?.v.staticMs !== undefined) delays.add(best.v.staticMs);
      }
      for (const ms of [...delays].sort((x, y) => x - y)) {
        await runAndCount(
          make(`static ${ms} ms, run again (control)`, `c${ms}`, ours(ms), { staticMs: ms, control: true }),
        );
      }
    }
    cpuLine = await watch.describe();
    serverGcPauses = await server.request<GcPauseList>('gcPauses');
  } finally {
    gcObserver.disconnect();
    for (const v of variants) v.client.close();
    await server.stop();
  }

  const sections: string[] = [];
  const checks: string[] = [];
  const summary: string[][] = [];
  /** The adaptive variant's last 1 s window over the limit in each phase, with the calls over it. */
  const windowsOver: string[] = [];
  /** The last paired window over the limit of the adaptive variant and of the control, with its calls over it. */
  const pairedOver: string[] = [];
  for (const phase of PHASES) {
    const rows = rowsFor(phase.key);
    const best = bestStatic(rows);
    const limit = best ? best.s.p99 * P99_RATIO_TARGET : Number.NaN;
    const adapt = (r: (typeof rows)[0]) =>
      best ? lastWindowOver(r.d.timeline, limit).timeToAdapt : undefined;
    const paired = (r: (typeof rows)[0]): number | undefined => {
      if (!best) return undefined;
      const calls = pairedTimeToAdapt(r.d.byIndex, best.d.byIndex, {
        windowCalls: Math.round(opts.rate * SLIDING_WINDOW_S),
        ratio: P99_RATIO_TARGET,
      });
      return calls === undefined ? undefined : calls / opts.rate;
    };
    const seconds = (t: number | undefined): string => (t === undefined ? 'never' : fmt(t, 1));
    const withUnit = (t: string): string => (t === 'never' ? t : `${t} s`);
    const regimeLabel =
      phase.regime === 'a'
        ? `${opts.fastAMs} ms fast path, ${opts.slowFraction * 100}% at ${opts.slowAMs} ms`
        : `${opts.fastBMs} ms fast path, ${opts.slowFraction * 100}% at ${opts.slowBMs} ms`;
    const slow = scriptedSlow(PHASES.indexOf(phase));
    sections.push(
      `### ${phase.title}: ${regimeLabel}`,
      '',
      `The script made the first attempt slow in ${slow.first} of the ${opts.measuredCalls} measured calls ` +
        `(${fmt((100 * slow.first) / opts.measuredCalls, 1)}%), and its hedge too in ${slow.both} of them.`,
      '',
      markdownTable(
        [
          'variant',
          'calls',
          'failed',
          'p50 ms',
          'p99 ms',
          'p99.9 ms',
          'extra load',
          'cancelled/call',
          'time to adapt, paired (s)',
          'time to adapt, phase limit (s)',
          'GC pauses, client: n, sum, longest ms',
          'server',
        ],
        rows.map((r) => {
          const t = adapt(r);
          return [
            r.v.name,
            r.calls,
            r.failed,
            fmt(r.s.p50, 1),
            fmt(r.s.p99, 1),
            fmt(r.s.p999, 1),
            fmt(r.extraLoad, 3),
            fmt(r.cancelled, 3),
            best ? seconds(paired(r)) : '–',
            best ? seconds(t) : '–',
            gcCell(gcDuring(`${r.v.label}|${phase.key}`, gcPauses)),
            gcCell(gcDuring(`${r.v.label}|${phase.key}`, serverGcPauses)),
          ];
        }),
      ),
      '',
    );
    const ad = rows.find((r) => r.v.label === 'adaptive');
    if (!ad) continue;
    const t = paired(ad);
    const tLimit = adapt(ad);
    const lastOver = best ? lastWindowOver(ad.d.timeline, limit) : undefined;
    if (lastOver?.fromS !== undefined) {
      windowsOver.push(
        `- ${phase.title} (limit ${fmt(limit, 1)} ms): ${fmt(lastOver.fromS, 1)}–${fmt(lastOver.fromS + SLIDING_WINDOW_S, 1)} s, ` +
          `${(lastOver.overMs ?? []).map((ms) => (Number.isFinite(ms) ? fmt(ms, 0) : 'failed')).join(', ')} ms`,
      );
    }
    const ratio = best ? ad.s.p99 / best.s.p99 : Number.NaN;
    // The best static delay run again: the ratio and the time to adapt that the machine's noise alone gives.
    const control = best ? rows.find((r) => r.v.control && r.v.staticMs === best.v.staticMs) : undefined;
    const controlCell = !control
      ? '–'
      : `×${fmt(control.s.p99 / (best?.s.p99 ?? Number.NaN), 2)}` +
        (phase.key === 'a1' ? '' : `, ${withUnit(seconds(paired(control)))}`);
    if (best) {
      for (const r of control ? [ad, control] : [ad]) {
        const line = describePairedOver(r, best, PHASES.indexOf(phase));
        if (line) pairedOver.push(`- ${phase.title}, ${r.v.control ? 'control' : 'adaptive'}: ${line}`);
      }
    }
    const loadOk = withinLoadLimit(ad.extraLoad, opts.maxExtraLoad + 0.01);
    summary.push([
      phase.title,
      fmt(ad.s.p99, 1),
      best ? `${fmt(best.s.p99, 1)} (${best.v.name})` : 'none',
      best ? `×${fmt(ratio, 2)}` : '–',
      fmt(ad.extraLoad, 3),
      phase.key === 'a1' ? '(warm-up)' : best ? seconds(t) : '–',
      phase.key === 'a1' ? '(warm-up)' : best ? seconds(tLimit) : '–',
      String(ad.failed),
      String(ad.d.budgetRefused),
      controlCell,
    ]);
    const p99Check = best
      ? `p99 ×${fmt(ratio, 2)} the best static — ${ratio <= P99_RATIO_TARGET ? 'met' : 'NOT met'}`
      : `p99 — no static delay spent ≤ ${STATIC_LOAD_LIMIT} extra load, nothing to compare with`;
    const adaptCheck = !best
      ? '; time to adapt — no best static delay'
      : `; time to adapt (paired) ${t === undefined ? 'never' : `${fmt(t, 1)} s`} — ${t !== undefined && t <= ADAPT_TARGET_S ? 'met' : 'NOT met'} (≤ ${ADAPT_TARGET_S} s; against the phase limit: ${seconds(tLimit)})`;
    checks.push(
      `- ${phase.title}: ${p99Check}; ` +
        `extra load ${fmt(ad.extraLoad, 3)} — ${loadOk ? 'met' : 'NOT met'} (≤ ${fmt(opts.maxExtraLoad + 0.01, 2)})` +
        (phase.key === 'a1' ? '' : adaptCheck) +
        `; failed calls ${ad.failed} — ${ad.failed === 0 ? 'met' : 'NOT met'}` +
        (control ? ` (control, ${control.v.name.replace(' (control)', '')}: ${controlCell})` : ''),
    );
  }
  const delayLine = (phase: PhaseKey): string =>
    (adaptiveVariant?.delays ?? [])
      .filter((d) => d.phase === phase)
      .map((d) => `${d.t.toFixed(1)}s:${d.delayMs === undefined ? '–' : fmt(d.delayMs, 1)}`)
      .join(' ');
  const elapsed = (Date.now() - started) / 1000;
  const markdown = [
    '# Adaptive hedging through latency shifts',
    '',
    machineLine(info, pinned !== undefined),
    '',
    `Command: \`npm run bench:adaptive -- ${process.argv.slice(2).join(' ')}\``.replace(' -- `', '`'),
    '',
    `Open loop at ${opts.rate} calls/s per variant, one variant at a time, each on its own connection, through three ` +
      `phases: regime A, regime B, regime A again, after ${opts.warmUpCalls} calls of regime A not measured (the ` +
      `JIT's warm-up: V8 optimizes the code again after the garbage collection between variants, and its compiler ` +
      `threads take the cores about 2.5 s in). Each phase: ${opts.learnCalls} calls not measured (learning), ` +
      `then ${opts.measuredCalls} measured. Hedging: maxAttempts 2. Fast-path times are × U[0.5, 1.5]. A script ` +
      `every variant meets alike (seed ${seed}; \`--seed=${seed}\` repeats it) makes the same calls slow on the ` +
      `same attempts: first attempts in exactly ${opts.slowFraction * 100}% of each block of 100 calls, hedges ` +
      `with probability ${opts.slowFraction}. Extra load = attempts that reached the server ` +
      `per measured call − 1. Time to adapt, paired: seconds (calls / rate) from the start of the phase (the shift) ` +
      `until the p99 of every ${SLIDING_WINDOW_S} s window of calls stays within ×${P99_RATIO_TARGET} the best ` +
      `static delay's p99 over the same calls. Time to adapt, phase limit: the same, against ×${P99_RATIO_TARGET} ` +
      `the best static delay's p99 over the whole phase, by call start time (for the static rows, their own noise). ` +
      (opts.control
        ? "Control: after all the others, each phase's best static delay runs again through the three phases, and " +
          "its p99 ratio and paired time to adapt against its first run are what the machine's noise alone gives. "
        : '') +
      `Took ${elapsed.toFixed(0)} s.`,
    cpuLine,
    '',
    pinned
      ? `Cores: the client runs on core ${pinned.client} and the server on core ${pinned.server}, each with all its ` +
        "threads (bench/lib/pin-cores.ts): unpinned, each waits now and then behind the other's threads, and that " +
        'falls on one variant and not on the next. `--pin-cores=0` lets the scheduler place them.'
      : `Cores: not pinned, ${notPinned}; the client and the server share the cores as the scheduler places them.`,
    '',
    gcFlags.length > 0
      ? `GC: the client and the server run with \`${gcFlags.join(' ')}\` and collect their garbage between ` +
        'variants (bench/lib/short-gc-pauses.ts), so that their garbage-collection pauses stay short: a long one ' +
        'holds every call in flight and falls on one variant and not on the next. `--short-gc-pauses=0` runs ' +
        "with Node's defaults."
      : "GC: Node's defaults (`--short-gc-pauses=0`).",
    '',
    markdownTable(
      [
        'phase',
        'adaptive p99 ms',
        `best static (extra load ≤ ${STATIC_LOAD_LIMIT}) p99 ms`,
        'ratio',
        'adaptive extra load',
        'time to adapt, paired (s)',
        'time to adapt, phase limit (s)',
        'failed',
        'hedges refused by the budget',
        'control: the best static run again, p99 ratio, time to adapt (paired)',
      ],
      summary,
    ),
    '',
    ...sections,
    'Adaptive delay (ms) every half second of each phase:',
    ...PHASES.map((p) => `- ${p.title}: ${delayLine(p.key)}`),
    '',
    "The adaptive variant's last 1 s window whose p99 (its third slowest call of 200) was over ×1.15 the best " +
      'static p99, and the calls over that limit in it (a window is over with three of them):',
    ...(windowsOver.length > 0 ? windowsOver : ['- none']),
    '',
    'The last paired window over the limit (×1.15 the best static p99 over the same calls), of the adaptive variant ' +
      'and of the control, and its calls over that limit: those the script made fast on their first attempt took ' +
      'that long through a pause of the machine (no hedging delay helps them: the hedge meets the same pause); ' +
      'those it made slow waited for their hedge. Then how many of those calls were in flight while the client or ' +
      'the server stood still for garbage collection (the other pauses, of the scheduler or the machine, leave no ' +
      'record):',
    ...(pairedOver.length > 0 ? pairedOver : ['- none']),
    '',
    `First-attempt p95 of the reporting window (30 s of DDSketch) at the end of each phase: ${PHASES.map((p) => `${p.key} ${fmt(adaptiveVariant?.windowP95[p.key], 1)} ms`).join(', ')}.`,
    '',
    'Hedges the adaptive variant held while the calls stalled (a hedge had come due with no call answering since), ' +
      'and of those sent once a call answered (the others: their own call answered first), learning calls included: ' +
      `${PHASES.map((p) => `${p.key} ${adaptiveVariant?.data[p.key].held ?? 0} held, ${adaptiveVariant?.data[p.key].heldSent ?? 0} sent`).join('; ')}.`,
    '',
    'Targets of issue 22 (measured, not asserted):',
    ...checks,
    '',
  ].join('\n');
  console.log(markdown);
  for (const v of variants) {
    for (const phase of PHASES) {
      const e = v.data[phase.key].firstError;
      if (e) console.error(`${v.name} (${phase.title}): first error: ${e}`);
    }
  }
  if (traceOut && adaptive instanceof RecordingAdaptiveHedging) {
    adaptive.writeTrace(traceOut, {
      ...opts,
      command: `Command: \`npm run bench:adaptive -- ${process.argv.slice(2).join(' ')}\` (seed ${seed}), its adaptive variant.`,
      machine: machineLine(info, pinned !== undefined),
      failed: `${PHASES.reduce((n, p) => n + (adaptiveVariant?.data[p.key].failed ?? 0), 0)} measured calls`,
    });
    console.error(`wrote ${relative(PACKAGE_ROOT, traceOut)}`);
  }
  if (opts.write) {
    const dir = join(PACKAGE_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'adaptive.md'), markdown);
    console.error(`wrote ${join('bench', 'results', 'adaptive.md')}`);
  }
}

main().catch(failure(SCRIPT));
