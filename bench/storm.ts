/**
 * Retry-storm benchmark (`npm run bench:storm`).
 *
 * A server that sheds load beyond a fixed number of concurrent calls (bench/storm-server.ts, its own process) is
 * driven above its capacity for a fixed time, once per variant:
 *
 *   - no retries
 *   - retries without throttling (this package; and grpc-js built-in, for reference)
 *   - retries with retryThrottling (this package; and grpc-js built-in)
 *
 * and we measure amplification (server attempts per logical call), goodput (successful calls per second), latency
 * and success rate. Two load shapes: closed-loop callers (each waits for its call, then starts the next) and an
 * open-loop arrival of new calls at a fixed rate (requests that keep coming whatever happens to earlier ones).
 * Variants are interleaved: two rounds, the second in reverse order.
 *
 *   npm run bench:storm [-- --parts=classic --rounds=4 --work-ms=40 ...]     (npm run bench:storm -- --help: all)
 *
 * Every option can be set by a STORM_* environment variable too (STORM_PARTS=overload, STORM_ROUNDS=4), as
 * BENCHMARKS.md's command lines do. Writes bench/results/storm.md (--write=0: prints it only).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { createAdaptiveThrottleInterceptor, createRetryInterceptor, RetryBudget } from 'grpc-retry-hedging';
import { loadFlakyTestService } from 'grpc-retry-hedging/testing';
import {
  failure,
  type Limit,
  NON_NEGATIVE,
  orUsageExit,
  POSITIVE,
  POSITIVE_COUNT,
  readNumber,
  readNumberList,
  type Script,
  scriptArgs,
  UsageError,
} from './lib/args.js';
import type { StormControlMessage, StormServerMessage, StormServerStats } from './storm-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

// ---- parameters: options, or STORM_* environment variables (for exploring; an option wins over its variable) ----
const SCRIPT: Script = {
  name: 'bench:storm',
  about:
    'Retry storms against a load-shedding server: no retries vs retries vs retryThrottling, then overload and ' +
    'recovery. Writes bench/results/storm.md (--write=0: does not).',
  footer:
    'Each option can also be set by an environment variable: STORM_ and its name in capitals, - as _\n' +
    '(STORM_PARTS=overload, STORM_WORK_MS=5); an option given wins over its variable.',
};
const STORM_DEFAULTS = {
  capacity: 8,
  workMs: 40,
  callers: 64,
  thinkMs: 60,
  runMs: 4000,
  openRate: 0,
  openRunMs: 2000,
  rounds: 2,
  warmupMs: 1500,
  overloadCapacity: 10,
  overloadWorkMs: 40,
  overloadRate: 500,
  overloadMs: 2500,
  recoveryRate: 125,
  recoveryMs: 2000,
  overloadRounds: 2,
  write: 1,
};
const STORM_LIMITS: { readonly [K in keyof typeof STORM_DEFAULTS]: Limit } = {
  capacity: POSITIVE_COUNT,
  workMs: POSITIVE,
  callers: POSITIVE_COUNT,
  thinkMs: NON_NEGATIVE,
  runMs: POSITIVE,
  openRate: NON_NEGATIVE,
  openRunMs: POSITIVE,
  rounds: POSITIVE_COUNT,
  warmupMs: NON_NEGATIVE,
  overloadCapacity: POSITIVE_COUNT,
  overloadWorkMs: POSITIVE,
  overloadRate: POSITIVE,
  overloadMs: POSITIVE,
  recoveryRate: POSITIVE,
  recoveryMs: POSITIVE,
  overloadRounds: POSITIVE_COUNT,
  write: { integer: true, min: 0, max: 1 },
};
/** The options read elsewhere: which parts to run, and the CPU the overloaded server spends per shed call. */
const STORM_OTHERS = ['parts', 'reject-cpu-ms'];
const PART_NAMES = ['all', 'classic', 'overload'];

/** `STORM_WORK_MS` for `workMs`. */
const envName = (key: string): string =>
  `STORM_${key
    .replace(/[A-Z]/g, (c) => `_${c}`)
    .replace(/-/g, '_')
    .toUpperCase()}`;
const stormArgs = orUsageExit(SCRIPT, () => {
  /** The defaults, with the environment's values over them. */
  const defaults = { ...STORM_DEFAULTS };
  for (const key of Object.keys(STORM_DEFAULTS) as (keyof typeof STORM_DEFAULTS)[]) {
    const raw = process.env[envName(key)];
    if (raw !== undefined && raw !== '') defaults[key] = readNumber(envName(key), raw, STORM_LIMITS[key]);
  }
  const { options, values } = scriptArgs(SCRIPT, defaults, {
    others: STORM_OTHERS,
    switches: ['write'],
    limits: STORM_LIMITS,
    notes: {
      openRate: 'new calls per second in the open loop; 0: twice the ideal capacity',
      parts: `${PART_NAMES.join(', ')} (default all)`,
      'reject-cpu-ms':
        'CPU ms the overloaded server spends per shed call: one server per value (default 0,0.5,2)',
    },
  });
  const known = [...Object.keys(STORM_DEFAULTS), ...STORM_OTHERS].map(envName);
  const unknown = Object.keys(process.env).find((name) => name.startsWith('STORM_') && !known.includes(name));
  if (unknown !== undefined) {
    throw new UsageError(`unknown environment variable ${unknown} (known: ${known.join(', ')})`);
  }
  const parts = values.get('parts') ?? (process.env.STORM_PARTS || 'all');
  if (!PART_NAMES.includes(parts)) {
    throw new UsageError(
      `--parts (or STORM_PARTS) must be one of ${PART_NAMES.join(', ')}, got ${JSON.stringify(parts)}`,
    );
  }
  const rejectCpuMs = values.has('reject-cpu-ms')
    ? readNumberList('--reject-cpu-ms', values.get('reject-cpu-ms') ?? '', NON_NEGATIVE)
    : readNumberList('STORM_REJECT_CPU_MS', process.env.STORM_REJECT_CPU_MS || '0,0.5,2', NON_NEGATIVE);
  return { options, parts, rejectCpuMs };
});
const opts = stormArgs.options;
/** How this run was started, for the results: its STORM_* variables and options. */
const COMMAND = [
  ...Object.keys(process.env)
    .filter((name) => name.startsWith('STORM_'))
    .sort()
    .map((name) => `${name}=${process.env[name]}`),
  'npm run bench:storm',
  ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
].join(' ');

/** Calls the server works on at once; more are shed with UNAVAILABLE. */
const CAPACITY = opts.capacity;
/**
 * Simulated work per call. 40 ms (ideal capacity 200 OK/s) rather than a few ms: on the 2-core machine this was
 * written on, the two processes top out at roughly 1,000-1,500 gRPC attempts/s, so a faster server would be limited
 * by CPU (shedding is not free) instead of by its capacity, and the numbers would mostly measure CPU contention.
 */
const WORK_MS = opts.workMs;
const CALLERS = opts.callers;
/** Pause of each caller between two calls (a client doing some work per request). */
const THINK_MS = opts.thinkMs;
const RUN_MS = opts.runMs;
/** Open loop: new calls per second (by default twice the ideal capacity) and how long each variant runs. */
const OPEN_RATE = opts.openRate > 0 ? opts.openRate : 2 * Math.round((CAPACITY * 1000) / WORK_MS);
const OPEN_RUN_MS = opts.openRunMs;
/**
 * Rounds per load shape, odd ones in one order and even ones in the other. Four short rounds rather than two long
 * ones: other work on a shared machine drifts over minutes, and more interleaving spreads that drift evenly.
 */
const ROUNDS = opts.rounds;
const CALL_DEADLINE_MS = 5000;
/** Sequential calls on each new client before its run, so that the run starts on a connected channel. */
const WARMUP_CALLS = 5;
/** Unrecorded load per variant at the start, to JIT-compile both processes on every code path. */
const WARMUP_RUN_MS = opts.warmupMs;
const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
const RETRY_POLICY = {
  maxAttempts: 5,
  initialBackoff: '0.01s',
  maxBackoff: '0.1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};
const THROTTLING = { maxTokens: 10, tokenRatio: 0.1 };

function serviceConfig(throttled: boolean): object {
  return {
    methodConfig: [{ name: [{ service: SERVICE }], retryPolicy: RETRY_POLICY }],
    ...(throttled ? { retryThrottling: THROTTLING } : {}),
  };
}

interface Variant {
  key: string;
  label: string;
  makeClient(address: string): grpc.Client;
}

const FlakyTest = loadFlakyTestService();
const insecure = grpc.credentials.createInsecure();

const VARIANTS: Variant[] = [
  {
    key: 'none',
    label: 'no retries',
    makeClient: (address) => new FlakyTest(address, insecure),
  },
  {
    key: 'ours',
    label: 'retries, no throttling (ours)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, { interceptors: [createRetryInterceptor(serviceConfig(false))] }),
  },
  {
    key: 'ours-throttled',
    label: 'retries + retryThrottling (ours)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, { interceptors: [createRetryInterceptor(serviceConfig(true))] }),
  },
  {
    key: 'builtin',
    label: 'retries, no throttling (grpc-js built-in)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, { 'grpc.service_config': JSON.stringify(serviceConfig(false)) }),
  },
  {
    // grpc-js keeps one throttle per target string across channels, carried over when a new channel to the same
    // target comes with retryThrottling (and dropped when one comes without): in round 2 this variant may start
    // with the tokens round 1 left. Under this load the bucket reaches its threshold within a handful of calls.
    key: 'builtin-throttled',
    label: 'retries + retryThrottling (grpc-js built-in)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, { 'grpc.service_config': JSON.stringify(serviceConfig(true)) }),
  },
];

// ---- server process ----

class ServerProcess {
  private pending: Array<(stats: StormServerStats) => void> = [];
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.on('message', (message: StormServerMessage) => {
      if (message.type === 'stats') this.pending.shift()?.(message.stats);
    });
  }

  static start(capacity = CAPACITY, workMs = WORK_MS, rejectCpuMs = 0): Promise<ServerProcess> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(here, 'storm-server.ts'),
        '--capacity',
        String(capacity),
        '--work-ms',
        String(workMs),
        '--reject-cpu-ms',
        String(rejectCpuMs),
      ],
      { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('storm-server did not start within 20 s')), 20_000);
      child.once('exit', (code) => reject(new Error(`storm-server exited early (code ${code})`)));
      child.once('message', (message: StormServerMessage) => {
        clearTimeout(timer);
        if (message.type === 'ready') resolve(new ServerProcess(child, message.port));
      });
    });
  }

  private request(message: StormControlMessage): Promise<StormServerStats> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.child.send(message);
    });
  }

  reset(): Promise<StormServerStats> {
    return this.request({ type: 'reset' });
  }

  stats(): Promise<StormServerStats> {
    return this.request({ type: 'stats' });
  }

  stop(): void {
    this.child.removeAllListeners('exit');
    this.child.kill('SIGTERM');
  }
}

// ---- load ----

type Mode = 'closed' | 'open';

interface RunResult {
  mode: Mode;
  variant: string;
  round: number;
  calls: number;
  ok: number;
  /** Non-OK statuses by code name. */
  failures: Record<string, number>;
  latenciesMs: number[];
  elapsedMs: number;
  server: StormServerStats;
}

function unary(client: grpc.Client, payload: string): Promise<grpc.status> {
  return new Promise((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => unknown>).Unary!(
      { payload },
      new grpc.Metadata(),
      { deadline: Date.now() + CALL_DEADLINE_MS },
      (error: grpc.ServiceError | null) => resolve(error ? error.code : grpc.status.OK),
    );
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function runVariant(
  server: ServerProcess,
  variant: Variant,
  mode: Mode,
  round: number,
  runMs: number,
): Promise<RunResult> {
  const client = variant.makeClient(`127.0.0.1:${server.port}`);
  // Connect below capacity (one call at a time) so that the run starts on a ready channel.
  for (let i = 0; i < WARMUP_CALLS; i++) await unary(client, 'warmup');
  await server.reset();
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  let ok = 0;
  const oneCall = async (): Promise<void> => {
    const t0 = performance.now();
    const code = await unary(client, 'x');
    latenciesMs.push(performance.now() - t0);
    if (code === grpc.status.OK) ok += 1;
    else {
      const name = grpc.status[code] ?? String(code);
      failures[name] = (failures[name] ?? 0) + 1;
    }
  };
  const startedAt = performance.now();
  const endAt = startedAt + runMs;
  if (mode === 'closed') {
    const caller = async (): Promise<void> => {
      while (performance.now() < endAt) {
        await oneCall();
        if (THINK_MS > 0) await sleep(THINK_MS);
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
  } else {
    // Start calls on a fixed schedule, whatever happened to earlier ones; a late timer catches up.
    const calls: Promise<void>[] = [];
    for (let now = performance.now(); now < endAt; now = performance.now()) {
      const due = Math.floor(((now - startedAt) * OPEN_RATE) / 1000);
      while (calls.length < due) calls.push(oneCall());
      await sleep(2);
    }
    await Promise.all(calls);
  }
  const elapsedMs = performance.now() - startedAt;
  // Every call has ended, so every attempt the server will ever see for this run has arrived.
  const stats = await server.stats();
  client.close();
  return {
    mode,
    variant: variant.key,
    round,
    calls: latenciesMs.length,
    ok,
    failures,
    latenciesMs,
    elapsedMs,
    server: stats,
  };
}

// ---- reporting ----

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

interface Summary {
  key: string;
  label: string;
  calls: number;
  attempts: number;
  ok: number;
  amplification: number;
  goodput: number;
  successRate: number;
  p50: number;
  p99: number;
  attemptsPerSec: number;
  perRound: Array<{ amplification: number; goodput: number; p99: number }>;
  failures: Record<string, number>;
}

function summarize(variant: Variant, runs: RunResult[]): Summary {
  const mine = runs.filter((r) => r.variant === variant.key);
  const calls = mine.reduce((s, r) => s + r.calls, 0);
  const attempts = mine.reduce((s, r) => s + r.server.attempts, 0);
  const ok = mine.reduce((s, r) => s + r.ok, 0);
  const seconds = mine.reduce((s, r) => s + r.elapsedMs, 0) / 1000;
  const latencies = mine.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const failures: Record<string, number> = {};
  for (const r of mine) {
    for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
  }
  return {
    key: variant.key,
    label: variant.label,
    calls,
    attempts,
    ok,
    amplification: attempts / calls,
    goodput: ok / seconds,
    successRate: ok / calls,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    attemptsPerSec: attempts / seconds,
    perRound: mine.map((r) => {
      const sorted = [...r.latenciesMs].sort((a, b) => a - b);
      return {
        amplification: r.server.attempts / r.calls,
        goodput: r.ok / (r.elapsedMs / 1000),
        p99: percentile(sorted, 99),
      };
    }),
    failures,
  };
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const ratio = (n: number, base: number) => `${(n / base).toFixed(2)}×`;
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

function table(summaries: Summary[]): string {
  const base = summaries.find((s) => s.key === 'none')!;
  const lines = [
    '| variant | amplification (attempts/call) | goodput (OK/s) | goodput vs none | p99 (ms) | p99 vs none | p50 (ms) | success rate | server attempts/s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of summaries) {
    lines.push(
      `| ${s.label} | ${f2(s.amplification)} | ${Math.round(s.goodput)} | ${ratio(s.goodput, base.goodput)} | ${f1(s.p99)} | ${ratio(s.p99, base.p99)} | ${f1(s.p50)} | ${pct(s.successRate)} | ${Math.round(s.attemptsPerSec)} |`,
    );
  }
  return lines.join('\n');
}

/** Per round, goodput of `s` over that of no retries in the same round (paired, so slow drift cancels out). */
function pairedRatios(s: Summary, none: Summary): number[] {
  return s.perRound.map((r, i) => r.goodput / (none.perRound[i]?.goodput ?? Number.NaN));
}

function roundsTable(summaries: Summary[]): string {
  const none = summaries.find((s) => s.key === 'none')!;
  const lines = [
    `| variant | ${Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`).join(' | ')} |`,
    `|---|${'---:|'.repeat(ROUNDS)}`,
  ];
  for (const s of summaries) {
    const ratios = pairedRatios(s, none);
    lines.push(
      `| ${s.label} | ${s.perRound.map((r, i) => `${f2(r.amplification)} / ${Math.round(r.goodput)} (${f2(ratios[i]!)}×) / ${Math.round(r.p99)}`).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function failureNotes(summaries: Summary[]): string {
  return summaries
    .map((s) => {
      const parts = Object.entries(s.failures).map(([k, v]) => `${v} ${k}`);
      return `- ${s.label}: ${parts.join(', ') || 'none'}`;
    })
    .join('\n');
}

/** Conclusions drawn from the numbers of this run (so the text never contradicts the table). */
function reading(summaries: Summary[]): string {
  const by = (key: string) => summaries.find((s) => s.key === key)!;
  const none = by('none');
  const verdict = (s: Summary) => {
    const ratios = pairedRatios(s, none);
    const range = `per-round ratios ${f2(Math.min(...ratios))}–${f2(Math.max(...ratios))}`;
    if (s.goodput >= none.goodput) return `at least that of no retries (${range})`;
    if (Math.max(...ratios) >= 1) return `equal to no retries within the round-to-round variation (${range})`;
    return `**below that of no retries in every round** (${range})`;
  };
  const lines: string[] = [];
  for (const key of ['ours', 'builtin']) {
    const s = by(key);
    lines.push(
      `- ${s.label}: ${f2(s.amplification)} server attempts per call; server attempts/s ` +
        `${ratio(s.attemptsPerSec, none.attemptsPerSec)}, goodput ${ratio(s.goodput, none.goodput)}, ` +
        `p99 ${ratio(s.p99, none.p99)} those of no retries; success rate ${pct(s.successRate)} ` +
        `(no retries: ${pct(none.successRate)}).`,
    );
  }
  for (const key of ['ours-throttled', 'builtin-throttled']) {
    const s = by(key);
    lines.push(
      `- ${s.label}: amplification ${f2(s.amplification)} (${s.attempts - s.calls} retries in ${s.calls} calls), ` +
        `goodput ${ratio(s.goodput, none.goodput)}: ${verdict(s)}; p99 ${ratio(s.p99, none.p99)}.`,
    );
  }
  return lines.join('\n');
}

// ---- overload and recovery: retry budget and adaptive throttling, with shedding that costs CPU ----

/**
 * The server of this part: 10 calls at a time, 40 ms each (ideal capacity 250 OK/s). Issue 13 describes 10 ms
 * calls (1,000 OK/s) at 2,000 calls/s; on the shared 2-core machine this was written on, that load alone (with free
 * shedding) left no-retry goodput at 4% of capacity: it measured CPU contention. A quarter of the rate keeps the
 * processes' own overhead out of the way; the 2 ms setting then spends as much CPU per second of overload on
 * shedding (250 × 2 ms) as 0.5 ms does at the issue's rate (1,000 × 0.5 ms).
 */
const OVERLOAD_CAPACITY = opts.overloadCapacity;
const OVERLOAD_WORK_MS = opts.overloadWorkMs;
/** New calls per second while overloaded (twice the ideal capacity), and for how long. */
const OVERLOAD_RATE = opts.overloadRate;
const OVERLOAD_MS = opts.overloadMs;
/** New calls per second once the overload is over (half the ideal capacity), and for how long. */
const RECOVERY_RATE = opts.recoveryRate;
const RECOVERY_MS = opts.recoveryMs;
const OVERLOAD_ROUNDS = opts.overloadRounds;
/** CPU the server spends on each call it sheds, in ms: one server process per setting. */
const REJECT_CPU_SETTINGS = stormArgs.rejectCpuMs;
/** Calls are grouped by start time into buckets of this width to find when they succeed again. */
const RECOVERY_BUCKET_MS = 100;
const RECOVERED_SUCCESS_RATE = 0.95;

const OVERLOAD_VARIANTS: Variant[] = [
  VARIANTS.find((v) => v.key === 'none')!,
  { ...VARIANTS.find((v) => v.key === 'ours-throttled')!, label: 'retries + A6 retryThrottling (ours)' },
  {
    ...VARIANTS.find((v) => v.key === 'builtin-throttled')!,
    label: 'retries + A6 retryThrottling (grpc-js built-in)',
  },
  {
    key: 'budget',
    label: 'retries + RetryBudget (ours)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, {
        interceptors: [createRetryInterceptor(serviceConfig(false), { gate: new RetryBudget() })],
      }),
  },
  {
    key: 'adaptive',
    label: 'retries + adaptive throttle (ours)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, {
        interceptors: [createRetryInterceptor(serviceConfig(false)), createAdaptiveThrottleInterceptor()],
      }),
  },
  {
    key: 'adaptive-only',
    label: 'adaptive throttle, no retries (ours)',
    makeClient: (address) =>
      new FlakyTest(address, insecure, { interceptors: [createAdaptiveThrottleInterceptor()] }),
  },
];

interface OverloadCall {
  /** Start, in ms since the run began. */
  startMs: number;
  ok: boolean;
  latencyMs: number;
}

interface OverloadRun {
  variant: string;
  rejectCpuMs: number;
  calls: OverloadCall[];
  /** Server counters when the overload ended, and at the end of the run. */
  atSwitch: StormServerStats;
  atEnd: StormServerStats;
}

async function runOverloadVariant(
  server: ServerProcess,
  variant: Variant,
  rejectCpuMs: number,
): Promise<OverloadRun> {
  const client = variant.makeClient(`127.0.0.1:${server.port}`);
  for (let i = 0; i < WARMUP_CALLS; i++) await unary(client, 'warmup');
  await server.reset();
  const calls: OverloadCall[] = [];
  const pending: Promise<void>[] = [];
  const startedAt = performance.now();
  const oneCall = async (): Promise<void> => {
    const t0 = performance.now();
    const code = await unary(client, 'x');
    const t1 = performance.now();
    calls.push({ startMs: t0 - startedAt, ok: code === grpc.status.OK, latencyMs: t1 - t0 });
  };
  let atSwitch: Promise<StormServerStats> | undefined;
  let started = 0;
  const endAt = OVERLOAD_MS + RECOVERY_MS;
  for (let now = 0; now < endAt; now = performance.now() - startedAt) {
    const due =
      now < OVERLOAD_MS
        ? Math.floor((now * OVERLOAD_RATE) / 1000)
        : Math.floor((OVERLOAD_MS * OVERLOAD_RATE) / 1000) +
          Math.floor(((now - OVERLOAD_MS) * RECOVERY_RATE) / 1000);
    if (now >= OVERLOAD_MS && !atSwitch) atSwitch = server.stats();
    while (started < due) {
      started += 1;
      pending.push(oneCall());
    }
    await sleep(2);
  }
  await Promise.all(pending);
  const atEnd = await server.stats();
  client.close();
  return { variant: variant.key, rejectCpuMs, calls, atSwitch: await atSwitch!, atEnd };
}

interface OverloadSummary {
  key: string;
  label: string;
  rejectCpuMs: number;
  /** OK calls/s among calls started during the overload. */
  goodput: number;
  /** Server attempts per call, during the overload. */
  amplification: number;
  p99: number;
  /** Per round: ms after the overload ended from which calls succeed again; undefined = not within the run. */
  recoverMs: Array<number | undefined>;
  perRoundGoodput: number[];
}

function recoveryTime(calls: OverloadCall[]): number | undefined {
  const buckets = Math.ceil(RECOVERY_MS / RECOVERY_BUCKET_MS);
  const total = new Array<number>(buckets).fill(0);
  const ok = new Array<number>(buckets).fill(0);
  for (const c of calls) {
    if (c.startMs < OVERLOAD_MS) continue;
    const b = Math.min(buckets - 1, Math.floor((c.startMs - OVERLOAD_MS) / RECOVERY_BUCKET_MS));
    total[b]! += 1;
    if (c.ok) ok[b]! += 1;
  }
  let recovered: number | undefined;
  for (let b = buckets - 1; b >= 0; b--) {
    if (total[b]! > 0 && ok[b]! / total[b]! < RECOVERED_SUCCESS_RATE) break;
    recovered = b;
  }
  return recovered === undefined ? undefined : recovered * RECOVERY_BUCKET_MS;
}

function summarizeOverload(variant: Variant, rejectCpuMs: number, runs: OverloadRun[]): OverloadSummary {
  const mine = runs.filter((r) => r.variant === variant.key && r.rejectCpuMs === rejectCpuMs);
  const during = mine.flatMap((r) => r.calls.filter((c) => c.startMs < OVERLOAD_MS));
  const latencies = during.map((c) => c.latencyMs).sort((a, b) => a - b);
  const attempts = mine.reduce((s, r) => s + r.atSwitch.attempts, 0);
  const okDuring = (r: OverloadRun) => r.calls.filter((c) => c.startMs < OVERLOAD_MS && c.ok).length;
  return {
    key: variant.key,
    label: variant.label,
    rejectCpuMs,
    goodput: during.filter((c) => c.ok).length / ((mine.length * OVERLOAD_MS) / 1000),
    amplification: attempts / during.length,
    p99: percentile(latencies, 99),
    recoverMs: mine.map((r) => recoveryTime(r.calls)),
    perRoundGoodput: mine.map((r) => okDuring(r) / (OVERLOAD_MS / 1000)),
  };
}

function overloadTable(summaries: OverloadSummary[]): string {
  const ideal = (OVERLOAD_CAPACITY * 1000) / OVERLOAD_WORK_MS;
  const none = summaries.find((s) => s.key === 'none')!;
  const lines = [
    '| variant | goodput (OK/s) | % of capacity | goodput vs none | amplification (attempts/call) | p99 (ms) | time to recover, per round |',
    '|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const s of summaries) {
    const recover = s.recoverMs
      .map((ms) => (ms === undefined ? `> ${RECOVERY_MS / 1000} s` : `${(ms / 1000).toFixed(1)} s`))
      .join(', ');
    lines.push(
      `| ${s.label} | ${Math.round(s.goodput)} | ${pct(s.goodput / ideal)} | ${ratio(s.goodput, none.goodput)} | ${f2(s.amplification)} | ${Math.round(s.p99)} | ${recover} |`,
    );
  }
  return lines.join('\n');
}

async function runOverloadPart(): Promise<{ markdown: string; seconds: number }> {
  const startedAt = Date.now();
  const sections: string[] = [];
  for (const rejectCpuMs of REJECT_CPU_SETTINGS) {
    const server = await ServerProcess.start(OVERLOAD_CAPACITY, OVERLOAD_WORK_MS, rejectCpuMs);
    const runs: OverloadRun[] = [];
    try {
      // Unrecorded: JIT-compile both processes on the shedding and the throttling paths.
      for (const key of ['adaptive']) {
        await runOverloadVariant(server, OVERLOAD_VARIANTS.find((v) => v.key === key)!, rejectCpuMs);
      }
      for (let round = 1; round <= OVERLOAD_ROUNDS; round++) {
        const order = round % 2 === 1 ? OVERLOAD_VARIANTS : [...OVERLOAD_VARIANTS].reverse();
        for (const variant of order) {
          const run = await runOverloadVariant(server, variant, rejectCpuMs);
          runs.push(run);
          console.error(
            `overload (shed cost ${rejectCpuMs} ms) round ${round} ${variant.label}: ${run.calls.length} calls, ` +
              `${run.atEnd.attempts} attempts, ${run.calls.filter((c) => c.ok).length} OK`,
          );
        }
      }
    } finally {
      server.stop();
    }
    const summaries = OVERLOAD_VARIANTS.map((v) => summarizeOverload(v, rejectCpuMs, runs));
    const table = overloadTable(summaries);
    console.log(`\noverload, ${rejectCpuMs} ms of CPU per shed call\n\n${table}`);
    sections.push(`### Shedding costs ${rejectCpuMs} ms of CPU\n\n${table}\n`);
  }
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  const ideal = (OVERLOAD_CAPACITY * 1000) / OVERLOAD_WORK_MS;
  const markdown = `## Overload and recovery: retry budget and adaptive throttling

This part alone: \`npm run bench:storm -- --parts=overload\`, ${seconds} s.

- Server (\`bench/storm-server.ts\`, its own process, one per setting): works on at most ${OVERLOAD_CAPACITY} calls at once,
  ${OVERLOAD_WORK_MS} ms each (ideal capacity ${ideal} OK calls/s), and sheds every call beyond that with UNAVAILABLE after
  spending ${REJECT_CPU_SETTINGS.join(' or ')} ms of CPU on it (busy loop, blocking its event loop, as decoding, auth and
  logging would).
- Load: open loop, ${OVERLOAD_RATE} new calls/s (${f1(OVERLOAD_RATE / ideal)}× capacity) for ${OVERLOAD_MS / 1000} s, then
  ${RECOVERY_RATE} calls/s (${f1(RECOVERY_RATE / ideal)}× capacity) for ${RECOVERY_MS / 1000} s. ${OVERLOAD_ROUNDS} rounds per variant, alternating order;
  a new client (channel) per run.
- Retry policy: as above. A6: \`${JSON.stringify(THROTTLING)}\`. Budget: \`new RetryBudget()\` (20%, no floor, 10 s).
  Adaptive: \`interceptors: [createRetryInterceptor(config), createAdaptiveThrottleInterceptor()]\` (k 2, 1 s window,
  padding 8, retries rejected while it rejects); a local rejection is not retried.
- Goodput, amplification (server attempts / calls) and p99 are over the calls started during the overload
  (attempts counted until it ended). Time to recover: from the end of the overload, the start of the first
  ${RECOVERY_BUCKET_MS} ms slice from which at least ${pct(RECOVERED_SUCCESS_RATE)} of the calls started in every slice succeed.

${sections.join('\n')}`;
  return { markdown, seconds };
}

function machineNotes(): string {
  const require = createRequire(import.meta.url);
  const grpcVersion = (require('@grpc/grpc-js/package.json') as { version: string }).version;
  const cpus = os.cpus();
  return [
    `- ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.platform()} ${os.release()}`,
    `- Node ${process.version}, @grpc/grpc-js ${grpcVersion}`,
    '- server and clients in two processes on the same machine, over 127.0.0.1; other work was running on the',
    '  machine at the same time, which is what the round-to-round variation shows',
  ].join('\n');
}

function section(title: string, summaries: Summary[]): string {
  return `${title}

${table(summaries)}

Per round (amplification / goodput OK/s (× no retries in the same round) / p99 ms):

${roundsTable(summaries)}

Failed calls by status:

${failureNotes(summaries)}

Reading it:

${reading(summaries)}
`;
}

/** Which parts to run: `all` (default), `classic` (retry storm, closed and open loop) or `overload`. */
const PARTS = stormArgs.parts;

async function runClassicPart(): Promise<string> {
  const server = await ServerProcess.start();
  const runs: RunResult[] = [];
  const startedAt = Date.now();
  const plan: Array<{ mode: Mode; runMs: number }> = [
    { mode: 'closed', runMs: RUN_MS },
    { mode: 'open', runMs: OPEN_RUN_MS },
  ];
  try {
    // Warm-up, not recorded: JIT-compile both processes on every code path (the first seconds of a cold Node
    // process run several times slower than later ones).
    for (const variant of VARIANTS) await runVariant(server, variant, 'closed', 0, WARMUP_RUN_MS);
    console.error('warm-up done');
    for (const { mode, runMs } of plan) {
      for (let round = 1; round <= ROUNDS; round++) {
        const order = round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse();
        for (const variant of order) {
          const run = await runVariant(server, variant, mode, round, runMs);
          runs.push(run);
          console.error(
            `${mode} round ${round} ${variant.label}: ${run.calls} calls, ${run.server.attempts} attempts, ` +
              `${run.ok} OK, peak in flight ${run.server.peakInFlight}`,
          );
        }
      }
    }
  } finally {
    server.stop();
  }
  const closed = VARIANTS.map((v) =>
    summarize(
      v,
      runs.filter((r) => r.mode === 'closed'),
    ),
  );
  const open = VARIANTS.map((v) =>
    summarize(
      v,
      runs.filter((r) => r.mode === 'open'),
    ),
  );
  const totalSeconds = Math.round((Date.now() - startedAt) / 1000);
  const ideal = Math.round((CAPACITY * 1000) / WORK_MS);

  console.log(`closed loop (${CALLERS} callers, ${ROUNDS} × ${RUN_MS / 1000} s per variant)\n`);
  console.log(table(closed));
  console.log(`\nopen loop (${OPEN_RATE} new calls/s, ${ROUNDS} × ${OPEN_RUN_MS / 1000} s per variant)\n`);
  console.log(table(open));

  return `## Retry storm: closed and open loop

This part alone: \`npm run bench:storm -- --parts=classic\`, ${totalSeconds} s.

### Setup

- Server (\`bench/storm-server.ts\`, its own process): works on at most ${CAPACITY} calls at once, each taking
  ${WORK_MS} ms of simulated work (a timer), and sheds every call beyond that at once with UNAVAILABLE. It counts
  every arriving call (attempt). Ideal capacity: ${CAPACITY} / ${WORK_MS} ms = ${ideal} OK calls/s.
- Closed loop: ${CALLERS} callers, each starting its next unary call ${THINK_MS} ms after the previous one ended,
  for ${RUN_MS / 1000} s per variant and round.
- Open loop: ${OPEN_RATE} new unary calls per second (${f1(OPEN_RATE / ideal)}× the ideal capacity) started on a
  fixed schedule whatever happens to earlier calls, for ${OPEN_RUN_MS / 1000} s per variant and round.
- ${ROUNDS} rounds per load shape (${(ROUNDS * RUN_MS) / 1000} s closed-loop and ${(ROUNDS * OPEN_RUN_MS) / 1000} s open-loop per variant in all), variants in alternating order; each variant gets a new client (channel), connected
  with ${WARMUP_CALLS} sequential calls before the server counters are reset. Per-call deadline
  ${CALL_DEADLINE_MS / 1000} s. Unrecorded warm-up of ${WARMUP_RUN_MS / 1000} s per variant first.
- Retry policy (all retrying variants): \`${JSON.stringify(RETRY_POLICY)}\`.
- Throttling: \`${JSON.stringify({ retryThrottling: THROTTLING })}\`.
- "ours" = \`createRetryInterceptor(config)\` with nothing in the channel's \`grpc.service_config\`; "grpc-js
  built-in" = the same config as the channel option \`grpc.service_config\` and no interceptor.
- Amplification = server attempts / logical calls. Goodput = OK calls / wall time of the run (drain included).
  Latency is per logical call, OK or not. Ratios are against "no retries".

${section('### Closed loop', closed)}
${section('### Open loop', open)}
### What it shows

- Without throttling each shed call comes back up to ${RETRY_POLICY.maxAttempts - 1} more times, so an overloaded
  server gets several attempts per logical call. With closed-loop callers a call in backoff holds its caller, so
  the retries replace new calls rather than add to them: the cost shows as server attempts and tail latency. With an
  open-loop arrival the retries come on top of new calls.
- With retryThrottling each shed attempt takes 1 token and each success gives back ${THROTTLING.tokenRatio}, so under
  this overload the bucket stays at its threshold (${THROTTLING.maxTokens / 2} of ${THROTTLING.maxTokens}) and almost
  every retry is refused at once, without waiting: the server sees about one attempt per call, as without retries.
- grpc-js checks its throttle only when the backoff timer fires (\`maybeRetryCall\` in its retrying-call.js), so a
  call whose retry is throttled still waits out the backoff before it fails: hence the built-in throttled
  variant's higher p50 in both tables (with closed-loop callers, held longer, it also starts fewer calls). This
  package refuses a throttled retry at once, as A6 asks.
- Defaults chosen for this machine: with a server ten times cheaper per call
  (\`STORM_WORK_MS=5 STORM_THINK_MS=0 npm run bench:storm\`, ideal capacity 1,600 calls/s) the two processes run out
  of CPU on shed calls before the server's capacity is reached, and goodput swings by tens of percent from round
  to round: that measures CPU contention, not the retry policy.

`;
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const parts: string[] = [];
  if (PARTS !== 'overload') parts.push(await runClassicPart());
  if (PARTS !== 'classic') parts.push((await runOverloadPart()).markdown);
  const totalSeconds = Math.round((Date.now() - startedAt) / 1000);
  const md = `# Retry storm

Command: \`${COMMAND}\`, ${new Date().toISOString().slice(0, 10)}, ${totalSeconds} s in all.

${parts.join('\n')}
## Machine

${machineNotes()}
`;
  if (opts.write) {
    writeFileSync(join(root, 'bench', 'results', 'storm.md'), md);
    console.error(`wrote bench/results/storm.md (${totalSeconds} s)`);
  } else {
    console.log(md);
  }
}

main().catch(failure(SCRIPT));
