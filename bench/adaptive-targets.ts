/**
 * Adaptive hedging through one interceptor shared by clients of two servers that serve the same method with
 * different latencies (two regions, a canary): a fast one (regime A: 2 ms × U[0.5, 1.5], 5% at 200 ms) and a slow
 * one (regime B: 20 ms, 5% at 400 ms), each its own process running bench/adaptive-server.ts.
 *
 *   npm run bench:adaptive-targets    (options: -- --rate=100 --learn-calls=300 --measured-calls=1200 --seed=N)
 *
 * Variants, each in turn with its own interceptor and two clients (one per server), both servers' calls
 * interleaved at `rate` per second each (open loop): the interceptor's own adaptive hedging (`adaptiveHedging:
 * { ... }`, one per target), one `AdaptiveHedging` passed in (one for both targets, as every interceptor kept
 * before stop 70), and static delays (one delay for both targets: a single service config cannot give two).
 * Per server: p50 and p99 of the measured calls, and the extra load (attempts that reached it per measured call −
 * 1). Every variant meets the same slow attempts (bench/lib/latency-script.ts). Three processes share the
 * machine's cores, unpinned; the client and both servers run with bench:adaptive's short GC pauses.
 */
import type * as grpc from '@grpc/grpc-js';
import { AdaptiveHedging, type AdaptiveHedgingOptions, createRetryInterceptor } from 'grpc-retry-hedging';
import { adaptiveBenchConfig, adaptiveCallMetadata } from './lib/adaptive-phases.js';
import { POSITIVE_COUNT, type Script, scriptArgs } from './lib/args.js';
import { type BenchServerProcess, spawnBenchServer } from './lib/child-server.js';
import { machineInfo, machineLine } from './lib/env.js';
import { extraLoad } from './lib/extra-load.js';
import { type BenchClient, createClient, unary, waitForReady } from './lib/grpc-calls.js';
import { scriptSeed } from './lib/latency-script.js';
import { openLoop, sleep } from './lib/load.js';
import {
  collectGarbage,
  hasShortGcPauses,
  rerunWithShortGcPauses,
  SHORT_GC_PAUSE_FLAGS,
} from './lib/short-gc-pauses.js';
import { percentile, sorted } from './lib/stats.js';
import { markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'bench:adaptive-targets',
  about:
    'Adaptive hedging through one interceptor shared by clients of a fast and a slow server: learned per target, ' +
    'learned once for both, and static delays, side by side. Writes no file.',
};
const args = scriptArgs(
  SCRIPT,
  { rate: 100, learnCalls: 300, measuredCalls: 1200, seed: 0, configuredDelayMs: 30 },
  {
    limits: {
      rate: POSITIVE_COUNT,
      learnCalls: POSITIVE_COUNT,
      measuredCalls: POSITIVE_COUNT,
      configuredDelayMs: POSITIVE_COUNT,
    },
    notes: { seed: 'the latency script; 0 draws one (printed)' },
  },
);
const opts = args.options;
const seed = scriptSeed(opts.seed);
/** bench:adaptive's adaptive variant: maxExtraLoad 0.05, a budget floor of 3 hedges a second. */
const ADAPTIVE: AdaptiveHedgingOptions = { maxExtraLoad: 0.05, budget: { minPerSecond: 3 } };
const STATIC_DELAYS_MS = [5, 10, 20, 40];

const TARGETS = [
  { key: 'fast', regime: 'a', phase: 0 },
  { key: 'slow', regime: 'b', phase: 1 },
] as const;
type TargetKey = (typeof TARGETS)[number]['key'];

interface Variant {
  readonly label: string;
  readonly name: string;
  readonly delayMs: number;
  readonly adaptiveHedging?: AdaptiveHedgingOptions | AdaptiveHedging;
}

interface Measured {
  latencies: number[];
  failed: number;
  attempts: number;
}

async function attemptsOf(server: BenchServerProcess, variantKey: string): Promise<number> {
  // Losers end as their cancel reaches the server: wait until none is running.
  for (let i = 0; i < 100; i++) {
    const reply = await server.request<{ counts: Record<string, { attempts: number }>; running: number }>(
      'counts',
    );
    if (reply.running === 0 || i === 99) {
      let n = 0;
      for (const [key, c] of Object.entries(reply.counts))
        if (key.startsWith(`${variantKey}/`)) n += c.attempts;
      return n;
    }
    await sleep(20);
  }
  return Number.NaN;
}

async function runVariant(
  v: Variant,
  servers: Record<TargetKey, BenchServerProcess>,
): Promise<Record<TargetKey, Measured>> {
  const interceptor = createRetryInterceptor(adaptiveBenchConfig(v.delayMs), {
    ...(v.adaptiveHedging === undefined ? {} : { adaptiveHedging: v.adaptiveHedging }),
  });
  const clients = {
    fast: createClient(servers.fast.address, { interceptors: [interceptor] }),
    slow: createClient(servers.slow.address, { interceptors: [interceptor] }),
  } satisfies Record<TargetKey, BenchClient>;
  const out: Record<TargetKey, Measured> = {
    fast: { latencies: [], failed: 0, attempts: 0 },
    slow: { latencies: [], failed: 0, attempts: 0 },
  };
  try {
    await Promise.all(TARGETS.map((t) => waitForReady(clients[t.key])));
    const total = opts.learnCalls + opts.measuredCalls;
    await Promise.all(
      TARGETS.map((t) =>
        openLoop(
          opts.rate,
          total,
          (index) => {
            const stage = index < opts.learnCalls ? 'learn' : 'measured';
            const metadata: grpc.Metadata = adaptiveCallMetadata(
              `${v.label}-${stage}`,
              t.regime,
              `${t.phase}:${index}`,
            );
            return unary(clients[t.key], { payload: 'x' }, metadata, { deadline: Date.now() + 5_000 });
          },
          (index, _startedS, latencyMs, error) => {
            if (index < opts.learnCalls) return;
            if (error === undefined) out[t.key].latencies.push(latencyMs);
            else out[t.key].failed++;
          },
        ),
      ),
    );
    for (const t of TARGETS) out[t.key].attempts = await attemptsOf(servers[t.key], `${v.label}-measured`);
  } finally {
    for (const t of TARGETS) clients[t.key].close();
  }
  return out;
}

async function main(): Promise<void> {
  // bench:adaptive's short GC pauses (see BENCHMARKS.md, "Adaptive hedging"): a 1 MB young generation in every
  // process, and a full collection in each between variants.
  if (!hasShortGcPauses()) {
    process.exitCode = await rerunWithShortGcPauses();
    return;
  }
  const serverArgs = [`--seed=${seed}`];
  const spawn = () =>
    spawnBenchServer('bench/adaptive-server.ts', serverArgs, { nodeArgs: SHORT_GC_PAUSE_FLAGS });
  const [fast, slow] = await Promise.all([spawn(), spawn()]);
  const servers = { fast, slow } as Record<TargetKey, BenchServerProcess>;
  const variants: Variant[] = [
    {
      label: 'per-target',
      name: "adaptive, the interceptor's own (per target)",
      delayMs: opts.configuredDelayMs,
      adaptiveHedging: ADAPTIVE,
    },
    {
      label: 'shared',
      name: 'adaptive, one AdaptiveHedging for both',
      delayMs: opts.configuredDelayMs,
      adaptiveHedging: new AdaptiveHedging(ADAPTIVE),
    },
    ...STATIC_DELAYS_MS.map((d) => ({ label: `static-${d}`, name: `static ${d} ms`, delayMs: d })),
  ];
  console.log(machineLine(machineInfo()));
  console.log(
    `latency script ${seed}; per variant and server ${opts.learnCalls} calls to learn, then ${opts.measuredCalls} measured, ${opts.rate}/s to each server`,
  );
  const rows: string[][] = [];
  try {
    for (const v of variants) {
      collectGarbage();
      await Promise.all([fast.request('collectGarbage'), slow.request('collectGarbage')]);
      const m = await runVariant(v, servers);
      const cells = TARGETS.map((t) => {
        const s = sorted(m[t.key].latencies);
        const load = extraLoad(m[t.key].attempts, opts.measuredCalls);
        return `${percentile(s, 50).toFixed(1)} / ${percentile(s, 99).toFixed(1)} ms, ${load.toFixed(3)}`;
      });
      rows.push([v.name, ...cells, String(m.fast.failed + m.slow.failed)]);
      console.error(`${v.name}: done`);
    }
  } finally {
    await Promise.all([fast.stop(), slow.stop()]);
  }
  console.log('');
  console.log(
    markdownTable(
      [
        'variant',
        'fast server (A): p50 / p99, extra load',
        'slow server (B): p50 / p99, extra load',
        'failed calls',
      ],
      rows,
    ),
  );
}

await main();
