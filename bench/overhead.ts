/**
 * Per-call overhead when every call succeeds: bare grpc-js vs grpc-js's built-in retry policy vs this package's
 * interceptor (with and without a policy for the method), against bench/overhead-server.ts in its own process.
 *
 *   npm run bench:overhead [-- --rounds=16 --throughput-ms=750 --latency-ms=500 --stream-ms=750 --upload-ms=750]
 *   node --import tsx bench/overhead.ts --variants=bare,ours-retry     (a subset, e.g. under --cpu-prof)
 *
 * Cases: unary throughput at concurrency 32, unary latency at concurrency 1, server-streaming throughput
 * (20 messages per call) at concurrency 16, client-streaming uploads (64 protobuf messages of 16 KiB, 1 MiB a call,
 * within the interceptor's default 1 MiB replay buffer, so every message is buffered until the answer) at
 * concurrency 4. Every round runs every variant on every case, in an order rotated
 * each round; the table shows medians over rounds and ratios against bare.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { FLAKY_TEST_SERVICE } from 'grpc-retry-hedging/testing';
import {
  failure,
  NON_NEGATIVE,
  POSITIVE,
  POSITIVE_COUNT,
  type Script,
  scriptArgs,
  usageExit,
} from './lib/args.js';
import { PACKAGE_ROOT, spawnBenchServer } from './lib/child-server.js';
import { CpuWatch, machineInfo, machineLine } from './lib/env.js';
import {
  type BenchClient,
  clientStream,
  createClient,
  serverStream,
  unary,
  waitForReady,
} from './lib/grpc-calls.js';
import { roundOrder, runClosedLoop, sleep } from './lib/load.js';
import { retryConfig, retryPolicy } from './lib/overhead-policy.js';
import { roundsToUse, waitForQuiet } from './lib/quiet.js';
import { median, summarize } from './lib/stats.js';
import { fmt, fmtInt, markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'bench:overhead',
  about:
    "Per-call overhead when every call succeeds: bare grpc-js vs its built-in retries vs this package's interceptor. " +
    'Writes bench/results/overhead.md (not with --write=0 or --variants).',
};
/** The variants, by key (`--variants=bare,ours-retry` runs some of them). */
const VARIANT_KEYS: readonly string[] = [
  'bare',
  'builtin-retry',
  'ours-retry',
  'ours-no-policy',
] satisfies VariantKey[];
type VariantKey = 'bare' | 'builtin-retry' | 'ours-retry' | 'ours-no-policy';

const args = scriptArgs(
  SCRIPT,
  {
    /** Uncontended rounds wanted (see bench/lib/quiet.ts); contended ones are rerun while the budget lasts. */
    rounds: 12,
    /** Seconds for the measured rounds, waiting for a quiet machine included. */
    budgetS: 200,
    /** A round during which everything else used more than this many cores counts as contended. */
    contendedCores: 0.2,
    throughputMs: 750,
    latencyMs: 500,
    streamMs: 750,
    uploadMs: 750,
    warmupMs: 700,
    throughputConcurrency: 32,
    streamConcurrency: 16,
    streamMessages: 20,
    uploadConcurrency: 4,
    uploadMessages: 64,
    uploadMessageBytes: 16_384,
    /** Write bench/results/overhead.md (0 for profiling runs). */
    write: 1,
  },
  {
    others: ['variants'],
    switches: ['write'],
    limits: {
      rounds: POSITIVE_COUNT,
      budgetS: POSITIVE,
      contendedCores: NON_NEGATIVE,
      throughputMs: POSITIVE,
      latencyMs: POSITIVE,
      streamMs: POSITIVE,
      uploadMs: POSITIVE,
      warmupMs: NON_NEGATIVE,
      throughputConcurrency: POSITIVE_COUNT,
      streamConcurrency: POSITIVE_COUNT,
      streamMessages: POSITIVE_COUNT,
      uploadConcurrency: POSITIVE_COUNT,
      uploadMessages: POSITIVE_COUNT,
      uploadMessageBytes: POSITIVE_COUNT,
    },
    notes: { variants: `a subset, comma-separated, of ${VARIANT_KEYS.join(', ')} (default: all)` },
  },
);
const opts = args.options;
const only = args.values.get('variants')?.split(',');
const unknownVariant = only?.find((key) => !VARIANT_KEYS.includes(key));
if (unknownVariant !== undefined) {
  usageExit(
    SCRIPT,
    `--variants: no variant ${JSON.stringify(unknownVariant)} (known: ${VARIANT_KEYS.join(', ')})`,
  );
}
/** Which build the interceptor comes from: `npm run bench:overhead` resolves the package to dist/ (bench/tsconfig.json). */
const impl = import.meta.resolve('grpc-retry-hedging').includes('/dist/') ? 'dist' : 'src';

/** A policy only for Bidi, which the benchmark never calls: Unary and ServerStream have none. */
const otherMethodConfig = {
  methodConfig: [{ name: [{ service: FLAKY_TEST_SERVICE, method: 'Bidi' }], retryPolicy }],
};

interface Variant {
  key: string;
  name: string;
  client: BenchClient;
  unaryThroughput: number[];
  unaryP50: number[];
  unaryP99: number[];
  streamThroughput: number[];
  uploadThroughput: number[];
  /** Client-process CPU time per call (µs), unary at high concurrency and streaming. */
  unaryCpuUs: number[];
  streamCpuUs: number[];
  uploadCpuUs: number[];
  errors: number;
  firstError: unknown;
}

type CaseName = 'unary-throughput' | 'unary-latency' | 'stream-throughput' | 'upload-throughput';

/** What each upload writes, `uploadMessages` times (protobuf `bytes`, serialized by proto-loader). */
const uploadRequest = { blob: Buffer.alloc(opts.uploadMessageBytes, 0x61) };

async function runCase(v: Variant, which: CaseName, durationMs: number, record: boolean): Promise<void> {
  const request = { payload: 'overhead' };
  const cpuBefore = process.cpuUsage();
  const result =
    which === 'stream-throughput'
      ? await runClosedLoop({
          concurrency: opts.streamConcurrency,
          durationMs,
          recordLatency: false,
          call: () => serverStream(v.client, request),
        })
      : which === 'upload-throughput'
        ? await runClosedLoop({
            concurrency: opts.uploadConcurrency,
            durationMs,
            recordLatency: false,
            call: () => clientStream(v.client, uploadRequest, opts.uploadMessages),
          })
        : await runClosedLoop({
            concurrency: which === 'unary-latency' ? 1 : opts.throughputConcurrency,
            durationMs,
            recordLatency: which === 'unary-latency',
            call: () => unary(v.client, request),
          });
  const cpu = process.cpuUsage(cpuBefore);
  const cpuUsPerCall = (cpu.user + cpu.system) / Math.max(1, result.completed);
  v.errors += result.errors;
  v.firstError ??= result.firstError;
  if (!record) return;
  if (which === 'unary-throughput') {
    v.unaryThroughput.push(result.throughput);
    v.unaryCpuUs.push(cpuUsPerCall);
  } else if (which === 'stream-throughput') {
    v.streamThroughput.push(result.throughput);
    v.streamCpuUs.push(cpuUsPerCall);
  } else if (which === 'upload-throughput') {
    v.uploadThroughput.push(result.throughput);
    v.uploadCpuUs.push(cpuUsPerCall);
  } else {
    const s = summarize(result.latenciesMs);
    v.unaryP50.push(s.p50 * 1000);
    v.unaryP99.push(s.p99 * 1000);
  }
}

async function main(): Promise<void> {
  const info = machineInfo();
  const server = await spawnBenchServer('bench/overhead-server.ts', [
    `--stream-messages=${opts.streamMessages}`,
  ]);
  const make = (key: VariantKey, name: string, client: BenchClient): Variant => ({
    key,
    name,
    client,
    unaryThroughput: [],
    unaryP50: [],
    unaryP99: [],
    streamThroughput: [],
    uploadThroughput: [],
    unaryCpuUs: [],
    streamCpuUs: [],
    uploadCpuUs: [],
    errors: 0,
    firstError: undefined,
  });
  // Default channel options everywhere (grpc-js's own retry machinery stays enabled, as a user would have it).
  const all: Variant[] = [
    make('bare', 'bare grpc-js', createClient(server.address)),
    make(
      'builtin-retry',
      'grpc-js built-in retry policy',
      createClient(server.address, { 'grpc.service_config': JSON.stringify(retryConfig) }),
    ),
    make(
      'ours-retry',
      'ours, retry policy',
      createClient(server.address, { interceptors: [createRetryInterceptor(retryConfig)] }),
    ),
    make(
      'ours-no-policy',
      'ours, method without policy',
      createClient(server.address, { interceptors: [createRetryInterceptor(otherMethodConfig)] }),
    ),
  ];
  const variants = only ? all.filter((v) => only.includes(v.key)) : all;
  for (const v of all) if (!variants.includes(v)) v.client.close();

  const watch = await CpuWatch.begin(() => server.request<number>('cpu'));
  if (watch.busyBefore > 0.2) {
    console.error(
      `warning: the machine is ${(watch.busyBefore * 100).toFixed(0)}% busy before the start; figures will be noisy`,
    );
  }
  const started = Date.now();
  const cases: [CaseName, number][] = [
    ['unary-throughput', opts.throughputMs],
    ['unary-latency', opts.latencyMs],
    ['stream-throughput', opts.streamMs],
    ['upload-throughput', opts.uploadMs],
  ];
  let cpuLine = '';
  /** CPU (cores) used by everything but the benchmark's two processes, per round. */
  const otherLoad: number[] = [];
  const contended: boolean[] = [];
  let waitedMs = 0;
  try {
    for (const v of variants) await waitForReady(v.client);
    for (const v of variants) {
      for (const [which] of cases) await runCase(v, which, opts.warmupMs, false);
    }
    const deadline = Date.now() + opts.budgetS * 1000;
    let clean = 0;
    for (let round = 0; clean < opts.rounds && Date.now() < deadline; round++) {
      // Wait (a bounded time) for other processes on the machine to go quiet, so rounds compare like with like.
      const wait = await waitForQuiet({
        maxWaitMs: Math.min(30_000, Math.max(0, deadline - Date.now() - 10_000)),
      });
      waitedMs += wait.waitedMs;
      const order = roundOrder(variants, round);
      const roundWatch = await CpuWatch.mark(() => server.request<number>('cpu'));
      for (const [which, ms] of cases) {
        for (const v of order) await runCase(v, which, ms, true);
        await sleep(50);
      }
      const use = await roundWatch.measure();
      otherLoad.push(use.other);
      const isContended = use.other > opts.contendedCores;
      contended.push(isContended);
      if (!isContended) clean++;
      process.stderr.write(
        `round ${round + 1} (${order.map((v) => v.key).join(', ')}) ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
          `other load ${use.other.toFixed(2)} cores${isContended ? ' (contended)' : ''}, ${clean}/${opts.rounds} clean\n`,
      );
    }
    cpuLine = await watch.describe();
  } finally {
    for (const v of variants) v.client.close();
    await server.stop();
  }

  // Raw per-round figures, for judging the noise.
  process.stderr.write(
    `per-round unary calls/s | stream calls/s | uploads/s | unary client CPU µs/call (contended rounds: ${contended.flatMap((c, i) => (c ? [i + 1] : [])).join(' ') || 'none'}):\n`,
  );
  for (const v of variants) {
    const list = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(' ');
    process.stderr.write(
      `  ${v.key.padEnd(15)} ${list(v.unaryThroughput)} | ${list(v.streamThroughput)} | ${list(v.uploadThroughput)} | ${list(v.unaryCpuUs)}\n`,
    );
  }
  // Summarize the uncontended rounds when there are enough of them.
  const selection = roundsToUse(contended, Math.min(opts.rounds, 5));
  const keep = (xs: number[]): number[] => selection.indices.map((i) => xs[i] as number);
  for (const v of variants) {
    v.unaryThroughput = keep(v.unaryThroughput);
    v.unaryP50 = keep(v.unaryP50);
    v.unaryP99 = keep(v.unaryP99);
    v.streamThroughput = keep(v.streamThroughput);
    v.unaryCpuUs = keep(v.unaryCpuUs);
    v.streamCpuUs = keep(v.streamCpuUs);
    v.uploadThroughput = keep(v.uploadThroughput);
    v.uploadCpuUs = keep(v.uploadCpuUs);
  }
  const roundsLine =
    `${contended.length} rounds run, ${contended.filter((c) => !c).length} uncontended (everything else below ` +
    `${opts.contendedCores} cores); ${selection.cleanOnly ? 'figures from the uncontended rounds only' : 'too few uncontended rounds: figures from ALL rounds, treat them as noisy'}; ` +
    `waited ${(waitedMs / 1000).toFixed(0)} s in total for a quiet machine.`;
  const bare = variants.find((v) => v.key === 'bare');
  /** Ratio of medians over rounds, and the median of the per-round (paired) ratios, against bare. */
  const ratios = (pick: (v: Variant) => number[], v: Variant): { ofMedians: number; paired: number } => {
    if (!bare) return { ofMedians: Number.NaN, paired: Number.NaN };
    const base = pick(bare);
    const xs = pick(v);
    return {
      ofMedians: median(xs) / median(base),
      paired: median(xs.map((x, i) => x / (base[i] as number))),
    };
  };
  const both = (r: { ofMedians: number; paired: number }): string =>
    `${fmt(r.ofMedians, 3)} (${fmt(r.paired, 3)})`;
  const rows = variants.map((v) => ({
    v,
    tput: ratios((x) => x.unaryThroughput, v),
    cpu: ratios((x) => x.unaryCpuUs, v),
    p50: ratios((x) => x.unaryP50, v),
    stream: ratios((x) => x.streamThroughput, v),
    streamCpu: ratios((x) => x.streamCpuUs, v),
    upload: ratios((x) => x.uploadThroughput, v),
    uploadCpu: ratios((x) => x.uploadCpuUs, v),
  }));
  const unaryTable = markdownTable(
    [
      'variant',
      `calls/s, c=${opts.throughputConcurrency}`,
      'ratio',
      'client CPU µs/call',
      'ratio',
      'p50 µs, c=1',
      'ratio',
      'p99 µs, c=1',
      'errors',
    ],
    rows.map((r) => [
      r.v.name,
      fmtInt(median(r.v.unaryThroughput)),
      both(r.tput),
      fmtInt(median(r.v.unaryCpuUs)),
      both(r.cpu),
      fmtInt(median(r.v.unaryP50)),
      both(r.p50),
      fmtInt(median(r.v.unaryP99)),
      r.v.errors,
    ]),
  );
  const streamTable = markdownTable(
    ['variant', `calls/s, c=${opts.streamConcurrency}`, 'ratio', 'client CPU µs/call', 'ratio'],
    rows.map((r) => [
      r.v.name,
      fmtInt(median(r.v.streamThroughput)),
      both(r.stream),
      fmtInt(median(r.v.streamCpuUs)),
      both(r.streamCpu),
    ]),
  );
  const uploadTable = markdownTable(
    ['variant', `uploads/s, c=${opts.uploadConcurrency}`, 'ratio', 'client CPU µs/upload', 'ratio'],
    rows.map((r) => [
      r.v.name,
      fmt(median(r.v.uploadThroughput), 1),
      both(r.upload),
      fmtInt(median(r.v.uploadCpuUs)),
      both(r.uploadCpu),
    ]),
  );
  const ours = rows.find((r) => r.v.key === 'ours-retry');
  const oursNoPolicy = rows.find((r) => r.v.key === 'ours-no-policy');
  const checks: string[] = [];
  for (const r of [ours, oursNoPolicy]) {
    if (!r || !bare) continue;
    const worst = Math.min(r.tput.ofMedians, r.tput.paired);
    checks.push(
      `- ${r.v.name}: unary throughput ${both(r.tput)} of bare, streaming ${both(r.stream)}, uploads ` +
        `${both(r.upload)}; ` +
        `client CPU per unary call ${both(r.cpu)} of bare: ` +
        `${worst >= 0.97 ? 'meets' : 'BELOW'} the 0.97 throughput target`,
    );
  }
  const elapsed = (Date.now() - started) / 1000;
  const params =
    `Per round and variant: unary at concurrency ${opts.throughputConcurrency} for ` +
    `${opts.throughputMs} ms, unary at concurrency 1 for ${opts.latencyMs} ms, server streaming ` +
    `(${opts.streamMessages} messages per call) at concurrency ${opts.streamConcurrency} for ${opts.streamMs} ms, ` +
    `client-streaming uploads (${opts.uploadMessages} × ${opts.uploadMessageBytes} B) at concurrency ` +
    `${opts.uploadConcurrency} for ${opts.uploadMs} ms; ` +
    `order rotated each round. Interceptor code: ${impl === 'dist' ? 'dist/ (built package)' : 'src/ through tsx'}. ` +
    `Figures are medians over rounds. Took ${elapsed.toFixed(0)} s.`;
  const markdown = [
    '# Overhead: all calls succeed',
    '',
    machineLine(info),
    '',
    'Command: `npm run bench:overhead`',
    '',
    params,
    cpuLine,
    roundsLine,
    '',
    'Ratios: median of ours over median of bare, and in parentheses the median over rounds of the ratio to bare in',
    'the same round. Client CPU is the benchmark process’s user+system time divided by the calls completed.',
    '',
    '### Unary',
    '',
    unaryTable,
    '',
    `### Server streaming (${opts.streamMessages} responses per call)`,
    '',
    streamTable,
    '',
    `### Client-streaming uploads (${opts.uploadMessages} messages of ${opts.uploadMessageBytes} B per call)`,
    '',
    uploadTable,
    '',
    'Target (ours ≥ 0.97 of bare throughput):',
    ...checks,
    '',
  ].join('\n');
  console.log(markdown);
  for (const r of rows) {
    if (r.v.errors > 0) console.error(`${r.v.name}: ${r.v.errors} errors, first: ${String(r.v.firstError)}`);
  }
  if (opts.write && !only && impl === 'dist') {
    const dir = join(PACKAGE_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'overhead.md'), markdown);
    console.error(`wrote ${join('bench', 'results', 'overhead.md')}`);
  }
}

main().catch(failure(SCRIPT));
