/**
 * Records a trace of adaptive hedging against bench:adaptive's server (bench/adaptive-server.ts, its own process):
 * one adaptive client, at bench:adaptive's rate and through its three phases (regime A, B, then A again), and every
 * outcome its AdaptiveHedging recorded, with the delay the call used.
 *
 *   npm run trace:adaptive -- --seed=7 [--out=bench/traces/seed-7.csv --learn-calls=300 --measured-calls=1200]
 *
 * `npm run replay:adaptive -- <trace files>` then reads the same outcomes through the current delay estimator
 * (bench/adaptive-replay.ts), and test/adaptive/recorded-traces.test.ts replays the traces committed in
 * bench/traces/.
 */
import { relative, resolve } from 'node:path';
import { createRetryInterceptor } from 'grpc-retry-hedging';
import { ADAPTIVE_PHASES, adaptiveBenchConfig, adaptiveCallMetadata } from './lib/adaptive-phases.js';
import {
  COUNT,
  failure,
  NON_NEGATIVE,
  orUsageExit,
  POSITIVE,
  POSITIVE_COUNT,
  type Script,
  scriptArgs,
  userOutputPath,
} from './lib/args.js';
import { PACKAGE_ROOT, spawnBenchServer } from './lib/child-server.js';
import { machineInfo, machineLine } from './lib/env.js';
import { createClient, unary, waitForReady } from './lib/grpc-calls.js';
import { scriptSeed } from './lib/latency-script.js';
import { openLoop } from './lib/load.js';
import { RecordingAdaptiveHedging } from './lib/recording-adaptive-hedging.js';

const SCRIPT: Script = {
  name: 'trace:adaptive',
  about:
    "Records every outcome an adaptive client learns against bench:adaptive's server, through its three phases. " +
    'Writes a trace, by default bench/traces/seed-<seed>.csv.',
};

const args = scriptArgs(
  SCRIPT,
  {
    rate: 200,
    learnCalls: 300,
    measuredCalls: 1200,
    maxExtraLoad: 0.05,
    budgetMinPerSecond: 3,
    /** The latency script's seed; 0 picks one at random. */
    seed: 0,
  },
  {
    others: ['out'],
    limits: {
      rate: POSITIVE,
      learnCalls: COUNT,
      measuredCalls: POSITIVE_COUNT,
      maxExtraLoad: { above: 0, max: 1 },
      budgetMinPerSecond: NON_NEGATIVE,
      seed: COUNT,
    },
    notes: {
      seed: "the latency script's seed; 0 picks one at random",
      out: 'the trace file (default bench/traces/seed-<seed>.csv)',
    },
  },
);
const opts = args.options;
const seed = scriptSeed(opts.seed);
const outArg = args.values.get('out');
const out =
  outArg === undefined
    ? resolve(PACKAGE_ROOT, `bench/traces/seed-${seed}.csv`)
    : orUsageExit(SCRIPT, () => userOutputPath('--out', outArg));

async function main(): Promise<void> {
  const info = machineInfo();
  const server = await spawnBenchServer('bench/adaptive-server.ts', [`--seed=${seed}`]);
  const adaptive = new RecordingAdaptiveHedging({
    maxExtraLoad: opts.maxExtraLoad,
    budget: { minPerSecond: opts.budgetMinPerSecond },
  });
  const client = createClient(server.address, {
    interceptors: [createRetryInterceptor(adaptiveBenchConfig(30), { adaptiveHedging: adaptive })],
  });
  let failed = 0;
  try {
    await waitForReady(client);
    const total = opts.learnCalls + opts.measuredCalls;
    for (const [phaseNumber, phase] of ADAPTIVE_PHASES.entries()) {
      adaptive.phase = phase.key;
      await openLoop(
        opts.rate,
        total,
        (index) =>
          unary(
            client,
            { payload: 'x' },
            adaptiveCallMetadata('adaptive', phase.regime, `${phaseNumber}:${index}`),
            { deadline: Date.now() + 5000 },
          ),
        (_index, _startedS, _latencyMs, error) => {
          if (error !== undefined) failed++;
        },
      );
    }
  } finally {
    client.close();
    await server.stop();
  }
  const command = `npm run trace:adaptive -- ${process.argv.slice(2).join(' ')}`.trim();
  adaptive.writeTrace(out, {
    ...opts,
    command: `Command: \`${command}\` (seed ${seed}).`,
    machine: machineLine(info),
    failed: `${failed} calls`,
  });
  process.stdout.write(
    `${adaptive.outcomes.length} outcomes, ${failed} failed calls: ${relative(PACKAGE_ROOT, out)}\n`,
  );
}

main().catch(failure(SCRIPT));
