/**
 * Hedges and retries across replicas: where attempts go under round_robin, with and without avoiding the replicas
 * a call already tried. Replicas are grpc-js servers on 127.0.0.1 (bench/replicas-server.ts, its own process);
 * the client names them all in one target (`ipv4:127.0.0.1:p1,...`).
 *
 *   npm run bench:replicas [-- --calls=1000 --rate=500 --rounds=2 --hedging-delay-ms=20 --slow-ms=200]
 *
 * Scenarios: one slow replica (slowMs) of 3 and of 5, the others answering in 2–5 ms, hedging with maxAttempts 2;
 * then one replica of 3 answering UNAVAILABLE to everything, retries with maxAttempts 2. Variants side by side:
 * no hedging (or retries), grpc-js built-in, ours under grpc-js's default pick_first, ours under round_robin, ours
 * avoiding tried replicas. Load is open
 * loop at `rate` calls/s; each variant gets `calls` calls, split over `rounds` rounds in rotating order. Prints
 * markdown tables and writes them to bench/results/replicas.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type * as grpc from '@grpc/grpc-js';
import { createChannelOptions, createRetryInterceptor } from 'grpc-retry-hedging';
import { FLAKY_TEST_SERVICE, type ReplicaScript } from 'grpc-retry-hedging/testing';
import { a6Duration } from './lib/a6-duration.js';
import { NON_NEGATIVE, POSITIVE, POSITIVE_COUNT, type Script, scriptArgs, usageExit } from './lib/args.js';
import { PACKAGE_ROOT, spawnBenchServer } from './lib/child-server.js';
import { cpuSnapshot, machineInfo, machineLine } from './lib/env.js';
import { type BenchClient, createClient, unary, waitForReady } from './lib/grpc-calls.js';
import { roundOrder, sleep } from './lib/load.js';
import { waitForQuiet } from './lib/quiet.js';
import { summarize } from './lib/stats.js';
import { fmt, markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'bench:replicas',
  about:
    'Hedges and retries across replicas: where attempts go under round_robin, with and without avoiding tried ' +
    'replicas. Writes bench/results/replicas.md (--write=0: does not).',
};

const defaults = {
  calls: 1000,
  rate: 500,
  rounds: 2,
  hedgingDelayMs: 20,
  maxAttempts: 2,
  slowMs: 200,
  fastMinMs: 2,
  fastMaxMs: 5,
  /** Longest wait for a quiet machine before each measured run, ms. */
  quietWaitMs: 5000,
  /** Write bench/results/replicas.md (0 for exploratory runs). */
  write: 1,
};
const opts = scriptArgs(SCRIPT, defaults, {
  switches: ['write'],
  limits: {
    calls: POSITIVE_COUNT,
    rate: POSITIVE,
    rounds: POSITIVE_COUNT,
    hedgingDelayMs: NON_NEGATIVE,
    maxAttempts: { integer: true, min: 2, max: 5 },
    slowMs: NON_NEGATIVE,
    fastMinMs: NON_NEGATIVE,
    fastMaxMs: NON_NEGATIVE,
    quietWaitMs: NON_NEGATIVE,
  },
  notes: { quietWaitMs: 'longest wait for a quiet machine before each measured run' },
}).options;
if (opts.fastMaxMs < opts.fastMinMs) {
  usageExit(SCRIPT, `--fast-max-ms (${opts.fastMaxMs}) must not be below --fast-min-ms (${opts.fastMinMs})`);
}

type Kind = 'hedging' | 'retry';
type VariantName = 'none' | 'builtin' | 'pickFirst' | 'ours' | 'avoid';

const VARIANT_LABELS: Record<Kind, Record<VariantName, string>> = {
  hedging: {
    none: 'no hedging',
    builtin: 'grpc-js built-in hedging',
    pickFirst: 'ours, pick_first (no loadBalancingConfig)',
    ours: 'ours, round_robin',
    avoid: 'ours, avoiding tried replicas',
  },
  retry: {
    none: 'no retries',
    builtin: 'grpc-js built-in retries',
    pickFirst: 'ours, pick_first (no loadBalancingConfig)',
    ours: 'ours, round_robin',
    avoid: 'ours, avoiding tried replicas',
  },
};
const VARIANTS: VariantName[] = ['none', 'builtin', 'pickFirst', 'ours', 'avoid'];
const ROUND_ROBIN = [{ round_robin: {} }];

function policyConfig(kind: Kind): Record<string, unknown> {
  const name = [{ service: FLAKY_TEST_SERVICE, method: 'Unary' }];
  const policy =
    kind === 'hedging'
      ? {
          hedgingPolicy: {
            maxAttempts: opts.maxAttempts,
            hedgingDelay: a6Duration(opts.hedgingDelayMs),
            nonFatalStatusCodes: ['UNAVAILABLE'],
          },
        }
      : {
          retryPolicy: {
            maxAttempts: opts.maxAttempts,
            initialBackoff: '0.005s',
            maxBackoff: '0.05s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        };
  return { methodConfig: [{ name, ...policy }] };
}

/** The client options of one variant. */
function clientOptions(kind: Kind, variant: VariantName): grpc.ClientOptions {
  const config = policyConfig(kind);
  switch (variant) {
    case 'none':
      return { 'grpc.service_config': JSON.stringify({ loadBalancingConfig: ROUND_ROBIN }) };
    case 'builtin':
      return { 'grpc.service_config': JSON.stringify({ ...config, loadBalancingConfig: ROUND_ROBIN }) };
    case 'pickFirst':
      return { ...createChannelOptions(config), interceptors: [createRetryInterceptor(config)] };
    case 'ours': {
      const withRr = { ...config, loadBalancingConfig: ROUND_ROBIN };
      return { ...createChannelOptions(withRr), interceptors: [createRetryInterceptor(withRr)] };
    }
    case 'avoid':
      return {
        ...createChannelOptions(config, { avoidTriedReplicas: true }),
        interceptors: [createRetryInterceptor(config)],
      };
  }
}

interface VariantResult {
  latencies: number[];
  errors: number;
  firstError: string | undefined;
  served: number[];
  cancelled: number;
  /** Whole-machine busy time during the measured calls (this client and the replicas included), ms, and wall ms. */
  busyMs: number;
  wallMs: number;
}

interface Scenario {
  title: string;
  kind: Kind;
  scripts: ReplicaScript[];
}

type Server = Awaited<ReturnType<typeof spawnBenchServer>>;

/** Open loop: one call every 1000/rate ms (catching up after a late timer), until `count` calls have started. */
async function openLoop(client: BenchClient, count: number, result: VariantResult): Promise<void> {
  const interval = 1000 / opts.rate;
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  let started = 0;
  while (started < count) {
    const due = t0 + started * interval;
    const now = performance.now();
    if (now < due) {
      await sleep(Math.max(0, due - now - 0.5));
      continue;
    }
    const begin = performance.now();
    pending.push(
      unary(client, { payload: 'x' }).then(
        () => {
          result.latencies.push(performance.now() - begin);
        },
        (error: unknown) => {
          result.errors += 1;
          result.firstError ??= error instanceof Error ? error.message : String(error);
        },
      ),
    );
    started += 1;
  }
  await Promise.all(pending);
}

/**
 * Connects every subchannel: calls until each replica has answered (failing ones included; under pick_first there
 * is one connection), then forgets.
 */
async function warmUp(
  server: Server,
  client: BenchClient,
  replicas: number,
  oneConnection: boolean,
): Promise<void> {
  await waitForReady(client);
  for (let i = 0; i < 400; i++) {
    await unary(client, { payload: 'warm' }).catch(() => undefined);
    const { attempts } = await server.request<{ attempts: number[] }>('served');
    const connected = oneConnection || (attempts.length === replicas && attempts.every((n) => n > 0));
    if (connected && i >= 2 * replicas) {
      break;
    }
  }
  await server.request('reset');
}

async function runScenario(server: Server, scenario: Scenario): Promise<Map<VariantName, VariantResult>> {
  const { target } = await server.request<{ target: string }>('start', { scripts: scenario.scripts });
  const results = new Map<VariantName, VariantResult>(
    VARIANTS.map((v) => [
      v,
      {
        latencies: [],
        errors: 0,
        firstError: undefined,
        served: scenario.scripts.map(() => 0),
        cancelled: 0,
        busyMs: 0,
        wallMs: 0,
      },
    ]),
  );
  const perRound = Math.ceil(opts.calls / opts.rounds);
  for (let round = 0; round < opts.rounds; round++) {
    for (const variant of roundOrder(VARIANTS, round)) {
      const result = results.get(variant) as VariantResult;
      const client = createClient(target, clientOptions(scenario.kind, variant));
      try {
        await warmUp(server, client, scenario.scripts.length, variant === 'pickFirst');
        // A shared machine: wait a little for the others to go quiet; the busy column says how it went.
        await waitForQuiet({ maxWaitMs: opts.quietWaitMs, thresholdCores: 0.3 });
        const before = cpuSnapshot();
        const t0 = performance.now();
        await openLoop(client, perRound, result);
        result.wallMs += performance.now() - t0;
        result.busyMs += cpuSnapshot().busyMs - before.busyMs;
        // Let cancelled hedges reach the replicas before counting.
        await sleep(50);
        const served = await server.request<{ attempts: number[]; cancelled: number }>('served');
        served.attempts.forEach((n, i) => {
          result.served[i] = (result.served[i] ?? 0) + n;
        });
        result.cancelled += served.cancelled;
        await server.request('reset');
      } finally {
        client.close();
      }
    }
  }
  return results;
}

function scenarioTable(scenario: Scenario, results: Map<VariantName, VariantResult>): string {
  const header = [
    'variant',
    'calls',
    'failed',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'p99.9 ms',
    'attempts/call',
    'attempts per replica',
    'busy cores',
  ];
  const rows = VARIANTS.map((variant) => {
    const r = results.get(variant) as VariantResult;
    const s = summarize(r.latencies);
    const calls = r.latencies.length + r.errors;
    const attempts = r.served.reduce((a, b) => a + b, 0);
    return [
      VARIANT_LABELS[scenario.kind][variant],
      calls,
      r.errors,
      fmt(s.p50),
      fmt(s.p90),
      fmt(s.p99),
      fmt(s.p999),
      fmt(attempts / calls, 3),
      r.served.join(' / '),
      fmt(r.busyMs / r.wallMs, 2),
    ];
  });
  return markdownTable(header, rows);
}

/** The fast replicas' p99 as the no-hedging client saw it (calls faster than half the slow replica's latency). */
function fastP99(results: Map<VariantName, VariantResult>): number {
  const none = results.get('none') as VariantResult;
  return summarize(none.latencies.filter((ms) => ms < opts.slowMs / 2)).p99;
}

async function main(): Promise<void> {
  const info = machineInfo();
  const fast: ReplicaScript = { delayMs: [opts.fastMinMs, opts.fastMaxMs] };
  const slow: ReplicaScript = { delayMs: opts.slowMs };
  const scenarios: Scenario[] = [
    {
      title: `One slow replica (${opts.slowMs} ms) of 3, hedging`,
      kind: 'hedging',
      scripts: [slow, fast, fast],
    },
    {
      title: `One slow replica (${opts.slowMs} ms) of 5, hedging`,
      kind: 'hedging',
      scripts: [slow, fast, fast, fast, fast],
    },
    {
      title: 'One replica of 3 answers UNAVAILABLE to everything, retries',
      kind: 'retry',
      scripts: [{ status: 'UNAVAILABLE' }, fast, fast],
    },
  ];
  const server = await spawnBenchServer('bench/replicas-server.ts');
  const started = Date.now();
  const sections: string[] = [];
  const verdicts: string[] = [];
  try {
    for (const scenario of scenarios) {
      const results = await runScenario(server, scenario);
      const table = scenarioTable(scenario, results);
      sections.push(`### ${scenario.title}\n\n${table}`);
      process.stdout.write(`\n### ${scenario.title}\n\n${table}\n`);
      const avoid = results.get('avoid') as VariantResult;
      const builtin = results.get('builtin') as VariantResult;
      const attemptsPerCall = (r: VariantResult) =>
        r.served.reduce((a, b) => a + b, 0) / (r.latencies.length + r.errors);
      if (scenario.kind === 'hedging') {
        const bound = opts.hedgingDelayMs + 2 * fastP99(results);
        const p99 = summarize(avoid.latencies).p99;
        verdicts.push(
          `${scenario.title}: avoiding p99 ${fmt(p99)} ms vs bound hedgingDelay + 2 × fast p99 = ${fmt(bound)} ms: ${p99 <= bound ? 'met' : 'NOT met'}; attempts/call ${fmt(attemptsPerCall(avoid), 3)} vs built-in ${fmt(attemptsPerCall(builtin), 3)}: ${attemptsPerCall(avoid) <= attemptsPerCall(builtin) ? 'met' : 'NOT met'}.`,
        );
      } else {
        verdicts.push(
          `${scenario.title}: calls failed with avoidance: ${avoid.errors} (${avoid.errors === 0 ? 'met' : 'NOT met'}${avoid.firstError ? `; first: ${avoid.firstError}` : ''}).`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const head = [
    '## Hedging and retries across replicas',
    '',
    machineLine(info),
    '',
    `Command: \`npm run bench:replicas -- --calls=${opts.calls} --rate=${opts.rate} --rounds=${opts.rounds}\`; ` +
      `hedgingDelay ${opts.hedgingDelayMs} ms, maxAttempts ${opts.maxAttempts}, fast replicas ${opts.fastMinMs}–${opts.fastMaxMs} ms, ` +
      `open loop at ${opts.rate} calls/s, ${opts.calls} calls per variant in ${opts.rounds} rounds; ${seconds} s.`,
  ].join('\n');
  const text = `${head}\n\n${sections.join('\n\n')}\n\n${verdicts.map((v) => `- ${v}`).join('\n')}\n`;
  process.stdout.write(`\n${verdicts.map((v) => `- ${v}`).join('\n')}\n`);
  if (opts.write) {
    const dir = join(PACKAGE_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'replicas.md'), text);
  }
}

await main();
