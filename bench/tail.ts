/**
 * Tail latency under hedging: no hedging vs grpc-js's built-in hedging vs this package's interceptor, against the
 * same long-tail server (bench/tail-server.ts, its own process), interleaved in rounds.
 *
 *   npm run bench:tail [-- --rounds=10 --calls-per-round=600 --concurrency=4]
 *
 * Prints a markdown table and writes it to bench/results/tail.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { FLAKY_TEST_SERVICE } from 'grpc-retry-hedging/testing';
import { a6Duration } from './lib/a6-duration.js';
import {
  COUNT,
  FRACTION,
  failure,
  NON_NEGATIVE,
  POSITIVE,
  POSITIVE_COUNT,
  type Script,
  scriptArgs,
} from './lib/args.js';
import { PACKAGE_ROOT, spawnBenchServer } from './lib/child-server.js';
import { CpuWatch, machineInfo, machineLine } from './lib/env.js';
import { type BenchClient, createClient, unary, variantMetadata, waitForReady } from './lib/grpc-calls.js';
import { roundOrder, runClosedLoop, sleep } from './lib/load.js';
import { roundsToUse, waitForQuiet } from './lib/quiet.js';
import { bootstrapPercentileDiff, summarize } from './lib/stats.js';
import { fmt, markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'bench:tail',
  about:
    "Tail latency: no hedging vs grpc-js's built-in hedging vs this package's, against a long-tail server. " +
    'Writes bench/results/tail.md (--write=0: does not).',
};

const defaults = {
  /** Uncontended rounds wanted (see bench/lib/quiet.ts); contended ones are rerun while the budget lasts. */
  rounds: 10,
  /** Seconds for the measured rounds, waiting for a quiet machine included. */
  budgetS: 150,
  /** A round during which everything else used more than this many cores counts as contended. */
  contendedCores: 0.2,
  callsPerRound: 600,
  concurrency: 4,
  warmup: 200,
  hedgingDelayMs: 20,
  maxAttempts: 2,
  fastMs: 2,
  slowExtraMs: 200,
  slowFraction: 0.05,
  /** Write bench/results/tail.md (0 for exploratory runs). */
  write: 1,
};
const opts = scriptArgs(SCRIPT, defaults, {
  switches: ['write'],
  limits: {
    rounds: POSITIVE_COUNT,
    budgetS: POSITIVE,
    contendedCores: NON_NEGATIVE,
    callsPerRound: POSITIVE_COUNT,
    concurrency: POSITIVE_COUNT,
    warmup: COUNT,
    hedgingDelayMs: NON_NEGATIVE,
    maxAttempts: { integer: true, min: 2, max: 5 },
    fastMs: NON_NEGATIVE,
    slowExtraMs: NON_NEGATIVE,
    slowFraction: FRACTION,
  },
  notes: { rounds: 'uncontended rounds wanted', budgetS: 'seconds for the measured rounds' },
}).options;

const hedgingConfig = {
  methodConfig: [
    {
      name: [{ service: FLAKY_TEST_SERVICE, method: 'Unary' }],
      hedgingPolicy: {
        maxAttempts: opts.maxAttempts,
        hedgingDelay: a6Duration(opts.hedgingDelayMs),
        nonFatalStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

/** What one variant did in one round. */
interface RoundData {
  latencies: number[];
  errors: number;
  attempts: number;
  cancelled: number;
  slow: number;
}

interface Variant {
  name: string;
  label: string;
  client: BenchClient;
  rounds: RoundData[];
  firstError: unknown;
}

interface CountsReply {
  variants: Record<string, { attempts: number; cancelled: number; slow: number }>;
  running: number;
  slowDrawn: number;
}

async function main(): Promise<void> {
  const info = machineInfo();
  const server = await spawnBenchServer('bench/tail-server.ts', [
    `--fast-ms=${opts.fastMs}`,
    `--slow-extra-ms=${opts.slowExtraMs}`,
    `--slow-fraction=${opts.slowFraction}`,
  ]);
  const make = (name: string, label: string, client: BenchClient): Variant => ({
    name,
    label,
    client,
    rounds: [],
    firstError: undefined,
  });
  // Every client uses grpc-js's default channel options; only the hedging mechanism differs.
  const variants: Variant[] = [
    make('no hedging', 'none', createClient(server.address)),
    make(
      'grpc-js built-in hedging',
      'builtin',
      createClient(server.address, { 'grpc.service_config': JSON.stringify(hedgingConfig) }),
    ),
    make(
      'grpc-retry-hedging interceptor',
      'ours',
      createClient(server.address, { interceptors: [createRetryInterceptor(hedgingConfig)] }),
    ),
  ];
  const watch = await CpuWatch.begin(() => server.request<number>('cpu'));
  if (watch.busyBefore > 0.2) {
    console.error(
      `warning: the machine is ${(watch.busyBefore * 100).toFixed(0)}% busy before the start; figures will be noisy`,
    );
  }
  const started = Date.now();
  let cpuLine = '';
  const contended: boolean[] = [];
  let waitedMs = 0;
  try {
    for (const v of variants) {
      await waitForReady(v.client);
      await runClosedLoop({
        concurrency: opts.concurrency,
        maxCalls: opts.warmup,
        recordLatency: false,
        call: () => unary(v.client, { payload: 'warmup' }, variantMetadata('warmup')),
      });
    }
    await sleep(300);
    await server.request('reset');

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
      const data = new Map<Variant, RoundData>();
      for (const v of order) {
        const result = await runClosedLoop({
          concurrency: opts.concurrency,
          maxCalls: opts.callsPerRound,
          call: () => unary(v.client, { payload: 'x' }, variantMetadata(v.label)),
        });
        data.set(v, {
          latencies: result.latenciesMs,
          errors: result.errors,
          attempts: 0,
          cancelled: 0,
          slow: 0,
        });
        v.firstError ??= result.firstError;
      }
      const use = await roundWatch.measure();
      // Let cancelled hedges reach the server before counting.
      await sleep(250);
      const counts = await server.request<CountsReply>('counts');
      for (const v of variants) {
        const c = counts.variants[v.label];
        const d = data.get(v) as RoundData;
        d.attempts = c?.attempts ?? 0;
        d.cancelled = c?.cancelled ?? 0;
        d.slow = c?.slow ?? 0;
        v.rounds.push(d);
      }
      if (counts.running > 0) console.error(`round ${round + 1}: ${counts.running} attempts still running`);
      await server.request('reset');
      const isContended = use.other > opts.contendedCores;
      contended.push(isContended);
      if (!isContended) clean++;
      process.stderr.write(
        `round ${round + 1} (${order.map((v) => v.label).join(', ')}) ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
          `other load ${use.other.toFixed(2)} cores${isContended ? ' (contended)' : ''}, ${clean}/${opts.rounds} clean\n`,
      );
    }
    cpuLine = await watch.describe();
  } finally {
    for (const v of variants) v.client.close();
    await server.stop();
  }

  // Pool the uncontended rounds when there are enough of them for a p99.9 (5 rounds: 3000 calls by default).
  const selection = roundsToUse(contended, Math.min(opts.rounds, 5));
  const rows = variants.map((v) => {
    const used = selection.indices.map((i) => v.rounds[i] as RoundData);
    const sum = (f: (d: RoundData) => number): number => used.reduce((acc, d) => acc + f(d), 0);
    const s = summarize(used.flatMap((d) => d.latencies));
    const errors = sum((d) => d.errors);
    const calls = s.count + errors;
    const attempts = sum((d) => d.attempts);
    return {
      v,
      s,
      calls,
      errors,
      attempts,
      slow: sum((d) => d.slow),
      attemptsPerCall: attempts / calls,
      cancelledPerCall: sum((d) => d.cancelled) / calls,
    };
  });
  const roundsLine =
    `${contended.length} rounds run, ${contended.filter((c) => !c).length} uncontended (everything else below ` +
    `${opts.contendedCores} cores); ${selection.cleanOnly ? 'figures from the uncontended rounds only' : 'too few uncontended rounds: figures from ALL rounds, treat them as noisy'}; ` +
    `waited ${(waitedMs / 1000).toFixed(0)} s in total for a quiet machine.`;
  const table = markdownTable(
    [
      'variant',
      'calls',
      'errors',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'server attempts/call',
      'cancelled attempts/call',
    ],
    rows.map((r) => [
      r.v.name,
      r.calls,
      r.errors,
      fmt(r.s.p50, 1),
      fmt(r.s.p90, 1),
      fmt(r.s.p99, 1),
      fmt(r.s.p999, 1),
      fmt(r.s.max, 1),
      fmt(r.attemptsPerCall, 3),
      fmt(r.cancelledPerCall, 3),
    ]),
  );

  const [none, builtin, ours] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  const fastPath = none.s.p50;
  const p99Limit = fastPath + 2 * opts.hedgingDelayMs;
  const latenciesOf = (r: (typeof rows)[0]): number[] =>
    selection.indices.flatMap((i) => (r.v.rounds[i] as RoundData).latencies);
  const p99Diff = bootstrapPercentileDiff(latenciesOf(builtin), latenciesOf(ours), 99);
  const p99Verdict =
    p99Diff.diff <= 0
      ? 'no worse: met'
      : p99Diff.low <= 0
        ? `higher by ${fmt(p99Diff.diff)} ms, but within the noise (the interval includes 0): met within noise`
        : `worse by ${fmt(p99Diff.diff)} ms: NOT met`;
  const checks = [
    `- ours p99 ${fmt(ours.s.p99)} ms vs built-in p99 ${fmt(builtin.s.p99)} ms ` +
      `(difference ${fmt(p99Diff.diff)} ms, bootstrap 95% interval ${fmt(p99Diff.low)} to ${fmt(p99Diff.high)} ms): ${p99Verdict}`,
    `- ours p99 ${fmt(ours.s.p99)} ms vs fast path (no-hedging p50 ${fmt(fastPath)} ms) + 2 × hedgingDelay = ` +
      `${fmt(p99Limit)} ms: ${ours.s.p99 <= p99Limit ? 'met' : 'NOT met'}`,
    `- ours ${fmt(ours.attemptsPerCall, 3)} attempts/call vs built-in ${fmt(builtin.attemptsPerCall, 3)} + 0.02 = ` +
      `${fmt(builtin.attemptsPerCall + 0.02, 3)}: ${ours.attemptsPerCall <= builtin.attemptsPerCall + 0.02 ? 'met' : 'NOT met'}`,
  ];
  const elapsed = (Date.now() - started) / 1000;
  const slowShare =
    rows.reduce((a, r) => a + r.slow, 0) /
    Math.max(
      1,
      rows.reduce((a, r) => a + r.attempts, 0),
    );
  const params =
    `Server: every attempt ~${opts.fastMs} ms, or with probability ${opts.slowFraction} ~${opts.fastMs + opts.slowExtraMs} ms ` +
    `(drawn per attempt; observed slow share ${(slowShare * 100).toFixed(2)}%). ` +
    `Hedging: maxAttempts ${opts.maxAttempts}, hedgingDelay ${opts.hedgingDelayMs} ms. ` +
    `Load: closed loop, concurrency ${opts.concurrency}, rounds of ${opts.callsPerRound} calls per variant, ` +
    `order rotated each round. Took ${elapsed.toFixed(0)} s.`;
  const markdown = [
    '# Tail latency: hedging',
    '',
    machineLine(info),
    '',
    'Command: `npm run bench:tail`',
    '',
    params,
    cpuLine,
    roundsLine,
    '',
    table,
    '',
    'Targets:',
    ...checks,
    '',
  ].join('\n');
  console.log(markdown);
  for (const r of rows) {
    if (r.v.firstError !== undefined) console.error(`${r.v.name}: errors, first: ${String(r.v.firstError)}`);
  }
  if (opts.write) {
    const dir = join(PACKAGE_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tail.md'), markdown);
    console.error(`wrote ${join('bench', 'results', 'tail.md')}`);
  }
}

main().catch(failure(SCRIPT));
