/**
 * Fleet simulation (`npm run simulate`): N clients, each with one retry policy built from this package's own code,
 * against a server pool, through steady load → outage → recovery, in virtual time. See bench/sim/fleet-simulation.ts
 * for the model.
 *
 *   npm run simulate -- [--clients 1000] [--offered 8000] [--capacity 10000] [--outage 20] [--duration 90]
 *                       (each option --name value or --name=value, as in every bench script: bench/lib/args.ts)
 *                       [--reject-cost-ms 0.5] [--queue-ms 2000] [--attempt-timeout-ms 500] [--seed 1]
 *                       [--policies none,a6,budget,adaptive,retries] [--all] [--write] [--json]
 *
 * Prints a Markdown table; --write also writes it to bench/results/simulate.md. --json prints instead one JSON line
 * on stdout, keyed by policy: { "<policy>": { "attemptsPerCallDuringOutage": number | null, "recoverySeconds":
 * number | null, "goodput": number } }, where recoverySeconds is null when the policy never recovered and goodput is
 * the OK calls/s over the whole outage run. With --outage 0 there is no outage: attemptsPerCallDuringOutage is null
 * and recoverySeconds is the time the run took to settle.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  COUNT,
  failure,
  NON_NEGATIVE,
  orUsageExit,
  POSITIVE,
  parseArgs,
  type Script,
  UsageError,
  usageText,
} from './lib/args.js';
import {
  DEFAULT_FLEET_SIMULATION,
  type FleetSimulationConfig,
  runFleetSimulation,
} from './sim/fleet-simulation.js';
import { leastBaselineEndMs, MIN_BASELINE_PER_BUCKET, summarizeFleetRun } from './sim/recovery.js';
import { type FleetComparison, fleetTable } from './sim/report.js';
import { SIM_POLICIES, simPolicy } from './sim/sim-policies.js';

const SCRIPT: Script = {
  name: 'simulate',
  about:
    'Fleet simulation in virtual time: N clients, one retry policy each, through steady load, outage and recovery. ' +
    'Writes bench/results/simulate.md with --write.',
};
const DEFAULT_POLICIES = ['none', 'a6', 'budget', 'adaptive', 'retries'];
const D = DEFAULT_FLEET_SIMULATION;

/** The options: the scenario's (in the units the user gives them), then what to run and print. */
const DEFAULTS = {
  clients: D.clients,
  offered: D.offeredRps,
  capacity: D.capacityRps,
  outage: D.outageMs / 1000,
  outageStart: D.outageStartMs / 1000,
  duration: D.durationMs / 1000,
  rejectCostMs: D.rejectCostMs,
  queueMs: D.queueMs,
  serviceMs: D.serviceMs,
  attemptTimeoutMs: D.attemptTimeoutMs,
  seed: D.seed,
  all: 0,
  write: 0,
  json: 0,
};

interface Args {
  config: FleetSimulationConfig;
  policies: string[];
  write: boolean;
  json: boolean;
}

/** The command line (`argv`) as a scenario and what to do with it; a {@link UsageError} at the first mistake. */
function parseSimulateArgs(argv: readonly string[], help?: (options: string) => void): Args {
  const { options: o, values } = parseArgs(DEFAULTS, {
    argv,
    others: ['policies'],
    switches: ['all', 'write', 'json'],
    limits: {
      clients: { integer: true, min: 1, max: 100_000 },
      offered: POSITIVE,
      capacity: POSITIVE,
      outage: NON_NEGATIVE,
      outageStart: NON_NEGATIVE,
      duration: POSITIVE,
      rejectCostMs: NON_NEGATIVE,
      queueMs: NON_NEGATIVE,
      serviceMs: POSITIVE,
      attemptTimeoutMs: POSITIVE,
      seed: COUNT,
    },
    notes: {
      clients: 'clients in the fleet',
      offered: 'calls/s offered by the whole fleet',
      capacity: 'requests/s the pool serves',
      outage: 'seconds the pool is down (0: no outage)',
      outageStart: 'when the outage starts, s',
      duration: 'virtual seconds simulated',
      rejectCostMs: 'worker time per refused request, ms',
      queueMs: 'queue length, in ms of work',
      serviceMs: 'mean service time, ms',
      attemptTimeoutMs: 'per-attempt timeout, ms',
      seed: 'random seed',
      all: 'every policy',
      write: 'also write bench/results/simulate.md',
      json: 'print one JSON line keyed by policy instead of the table',
      policies: `among ${SIM_POLICIES.map((p) => p.key).join(', ')} (default ${DEFAULT_POLICIES.join(',')})`,
    },
    ...(help === undefined ? {} : { help }),
  });
  if (o.outage > 0 && o.outageStart + o.outage >= o.duration) {
    throw new UsageError(
      `the outage (--outage-start ${o.outageStart} s, --outage ${o.outage} s) does not end before the run does ` +
        `(--duration ${o.duration} s): there would be no recovery to measure`,
    );
  }
  if (Math.round((o.capacity * o.serviceMs) / 1000) < 1) {
    throw new UsageError(
      `--capacity ${o.capacity} × --service-ms ${o.serviceMs} makes no worker: their product (in s) must be 0.5 or more`,
    );
  }
  const least = leastBaselineEndMs(D.bucketMs) / 1000;
  if (o.outage > 0 && o.outageStart < least) {
    throw new UsageError(
      `--outage-start ${o.outageStart} s leaves no time to measure the goodput before the outage, which recovery is judged against: it must be ${least} or more (5 s of warm-up, then a ${D.bucketMs} ms bucket)`,
    );
  }
  if (o.outage === 0 && o.duration < least) {
    throw new UsageError(
      `--duration ${o.duration} s leaves no time to measure the goodput after the 5 s warm-up: it must be ${least} or more`,
    );
  }
  const perBucket = (Math.min(o.offered, o.capacity) * D.bucketMs) / 1000;
  if (perBucket <= MIN_BASELINE_PER_BUCKET) {
    throw new UsageError(
      `--offered ${o.offered} calls/s to --capacity ${o.capacity} requests/s gives at most ${perBucket} OK calls per ${D.bucketMs} ms bucket, too few to tell recovery from noise: both must be above ${(MIN_BASELINE_PER_BUCKET * 1000) / D.bucketMs}`,
    );
  }
  const given = values.get('policies');
  if (o.all && given !== undefined) {
    throw new UsageError('--all runs every policy: give it or --policies, not both');
  }
  const policies = o.all ? SIM_POLICIES.map((p) => p.key) : (given?.split(',') ?? DEFAULT_POLICIES);
  const unknown = policies.find((key) => !SIM_POLICIES.some((p) => p.key === key));
  if (unknown !== undefined) {
    throw new UsageError(
      `--policies: no policy ${JSON.stringify(unknown)} (known: ${SIM_POLICIES.map((p) => p.key).join(', ')})`,
    );
  }
  const repeated = policies.find((key, i) => policies.indexOf(key) !== i);
  if (repeated !== undefined) {
    throw new UsageError(`--policies: ${JSON.stringify(repeated)} is listed twice`);
  }
  const config: FleetSimulationConfig = {
    ...D,
    clients: o.clients,
    offeredRps: o.offered,
    capacityRps: o.capacity,
    outageMs: o.outage * 1000,
    outageStartMs: o.outageStart * 1000,
    durationMs: o.duration * 1000,
    rejectCostMs: o.rejectCostMs,
    queueMs: o.queueMs,
    serviceMs: o.serviceMs,
    attemptTimeoutMs: o.attemptTimeoutMs,
    seed: o.seed,
  };
  return { config, policies, write: o.write === 1, json: o.json === 1 };
}

/** What `--json` prints for one policy. */
interface PolicyResult {
  /** Null without an outage (--outage 0). */
  attemptsPerCallDuringOutage: number | null;
  recoverySeconds: number | null;
  goodput: number;
}

function jsonResult(rows: FleetComparison[]): Record<string, PolicyResult> {
  const out: Record<string, PolicyResult> = {};
  for (const { withOutage: o } of rows) {
    out[o.policy] = {
      attemptsPerCallDuringOutage: Number.isNaN(o.outageAmplification)
        ? null
        : Number(o.outageAmplification.toFixed(3)),
      recoverySeconds: o.timeToRecoverMs === undefined ? null : o.timeToRecoverMs / 1000,
      goodput: Math.round(o.goodput),
    };
  }
  return out;
}

function main(): void {
  const { config, policies, write, json } = orUsageExit(SCRIPT, () =>
    parseSimulateArgs(process.argv.slice(2), (options) => {
      process.stdout.write(usageText(SCRIPT, options));
      process.exit(0);
    }),
  );
  const started = performance.now();
  const rows: FleetComparison[] = [];
  const speed: string[] = [];
  for (const key of policies) {
    const policy = simPolicy(key);
    const t0 = performance.now();
    const outageRun = runFleetSimulation(policy, config);
    const t1 = performance.now();
    const quietRun = runFleetSimulation(policy, { ...config, outageMs: 0 });
    const t2 = performance.now();
    rows.push({
      withOutage: summarizeFleetRun(outageRun),
      withoutOutage: summarizeFleetRun(quietRun),
      wallMs: t2 - t0,
    });
    speed.push(
      `${policy.label}: ${((t1 - t0) / 1000).toFixed(1)} s for the outage run (${outageRun.events.toLocaleString('en-US')} events), ${((t2 - t1) / 1000).toFixed(1)} s without`,
    );
    console.error(`${policy.key}: done in ${((t2 - t0) / 1000).toFixed(1)} s`);
  }
  const totalS = ((performance.now() - started) / 1000).toFixed(1);
  const command = `npm run simulate -- ${process.argv.slice(2).join(' ')}`.trim();
  const md = `# Fleet simulation

Command: \`${command}\` (${new Date().toISOString().slice(0, 10)}, ${totalS} s of wall time in all).

Scenario: ${config.clients.toLocaleString('en-US')} clients offering ${config.offeredRps.toLocaleString('en-US')} calls/s (open loop) to a pool that serves ${config.capacityRps.toLocaleString('en-US')}
requests/s (${Math.round((config.capacityRps * config.serviceMs) / 1000)} workers × ${config.serviceMs} ms), queues up to ${config.queueMs} ms of work and refuses the rest
(${config.rejectCostMs} ms of a worker per refusal); ${config.networkMs} ms each way; per-attempt timeout ${config.attemptTimeoutMs} ms, call deadline
${config.callDeadlineMs} ms; retries: maxAttempts 5, backoff ${config.initialBackoffMs} ms × ${config.backoffMultiplier} up to ${config.maxBackoffMs} ms, jitter ${config.jitter}. The pool is down
from ${config.outageStartMs / 1000} s for ${config.outageMs / 1000} s; the run lasts ${config.durationMs / 1000} s of virtual time. Seed ${config.seed}.

${fleetTable(rows, config)}

- Amplification = attempts sent / calls started, during the outage. Goodput = OK calls/s.
- Time to recover: from the end of the outage to the end of the first ${config.bucketMs} ms bucket from which goodput
  stays within 5% of its level before the outage. Settling: the same, from the start of a run without the outage.
- Metastable failure: goodput never came back and the pool was still offered at least its capacity in the last 5 s.
- Wasted work: requests the pool served after their client had given up on them.

Wall time per policy:

${speed.map((s) => `- ${s}`).join('\n')}
`;
  if (json) {
    console.log(JSON.stringify(jsonResult(rows)));
  } else {
    console.log(md);
  }
  if (write) {
    const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'simulate.md');
    writeFileSync(out, md);
    console.error(`wrote ${out}`);
  }
}

try {
  main();
} catch (error) {
  failure(SCRIPT)(error);
}
