/**
 * Fleet simulation (`npm run simulate`): N clients, each with one retry policy built from this package's own code,
 * against a server pool, through steady load → outage → recovery, in virtual time. See bench/sim/fleet-simulation.ts
 * for the model.
 *
 *   npm run simulate -- [--clients 1000] [--offered 8000] [--capacity 10000] [--outage 20] [--duration 90]
 *                       [--reject-cost-ms 0.5] [--queue-ms 2000] [--attempt-timeout-ms 500] [--seed 1]
 *                       [--policies none,a6,budget,adaptive,retries] [--all] [--write] [--json]
 *
 * Prints a Markdown table; --write also writes it to bench/results/simulate.md. --json prints instead one JSON line
 * on stdout, keyed by policy: { "<policy>": { "attemptsPerCallDuringOutage": number, "recoverySeconds": number |
 * null, "goodput": number } }, where recoverySeconds is null when the policy never recovered and goodput is the
 * OK calls/s over the whole outage run.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_FLEET_SIMULATION,
  type FleetSimulationConfig,
  runFleetSimulation,
} from './sim/fleet-simulation.js';
import { summarizeFleetRun } from './sim/recovery.js';
import { type FleetComparison, fleetTable } from './sim/report.js';
import { SIM_POLICIES, simPolicy } from './sim/sim-policies.js';

const USAGE = `npm run simulate -- [flags]
  --clients N            clients in the fleet, 1 to 100,000 (default ${DEFAULT_FLEET_SIMULATION.clients})
  --offered N            calls/s offered by the whole fleet (default ${DEFAULT_FLEET_SIMULATION.offeredRps})
  --capacity N           requests/s the pool serves (default ${DEFAULT_FLEET_SIMULATION.capacityRps})
  --outage S             seconds the pool is down (default ${DEFAULT_FLEET_SIMULATION.outageMs / 1000}; 0: none)
  --outage-start S       when the outage starts (default ${DEFAULT_FLEET_SIMULATION.outageStartMs / 1000})
  --duration S           virtual seconds simulated (default ${DEFAULT_FLEET_SIMULATION.durationMs / 1000})
  --reject-cost-ms MS    worker time per refused request (default ${DEFAULT_FLEET_SIMULATION.rejectCostMs})
  --queue-ms MS          queue length, in ms of work (default ${DEFAULT_FLEET_SIMULATION.queueMs})
  --service-ms MS        mean service time (default ${DEFAULT_FLEET_SIMULATION.serviceMs})
  --attempt-timeout-ms MS per-attempt timeout (default ${DEFAULT_FLEET_SIMULATION.attemptTimeoutMs})
  --seed N               random seed (default ${DEFAULT_FLEET_SIMULATION.seed})
  --policies a,b         among ${SIM_POLICIES.map((p) => p.key).join(', ')} (default none,a6,budget,adaptive,retries)
  --all                  every policy
  --write                also write bench/results/simulate.md
  --json                 print one JSON line keyed by policy instead of the table`;

const FLAGS: Record<string, { key: keyof FleetSimulationConfig; scale: number }> = {
  '--clients': { key: 'clients', scale: 1 },
  '--offered': { key: 'offeredRps', scale: 1 },
  '--capacity': { key: 'capacityRps', scale: 1 },
  '--outage': { key: 'outageMs', scale: 1000 },
  '--outage-start': { key: 'outageStartMs', scale: 1000 },
  '--duration': { key: 'durationMs', scale: 1000 },
  '--reject-cost-ms': { key: 'rejectCostMs', scale: 1 },
  '--queue-ms': { key: 'queueMs', scale: 1 },
  '--service-ms': { key: 'serviceMs', scale: 1 },
  '--attempt-timeout-ms': { key: 'attemptTimeoutMs', scale: 1 },
  '--seed': { key: 'seed', scale: 1 },
};

interface Args {
  config: FleetSimulationConfig;
  policies: string[];
  write: boolean;
  json: boolean;
}

function parseArgs(argv: string[]): Args {
  const config: Record<string, unknown> = { ...DEFAULT_FLEET_SIMULATION };
  let policies = ['none', 'a6', 'budget', 'adaptive', 'retries'];
  let write = false;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    if (name === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (name === '--write') write = true;
    else if (name === '--json') json = true;
    else if (name === '--all') policies = SIM_POLICIES.map((p) => p.key);
    else if (name === '--policies') policies = value().split(',');
    else if (name !== undefined && FLAGS[name]) {
      const raw = value();
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${raw}`);
      config[FLAGS[name].key] = n * FLAGS[name].scale;
    } else
      throw new Error(
        `unknown argument ${arg} (known: ${[...Object.keys(FLAGS), '--policies', '--all', '--write', '--json'].join(', ')})`,
      );
  }
  for (const p of policies) simPolicy(p);
  return { config: config as unknown as FleetSimulationConfig, policies, write, json };
}

/** What `--json` prints for one policy. */
interface PolicyResult {
  attemptsPerCallDuringOutage: number;
  recoverySeconds: number | null;
  goodput: number;
}

function jsonResult(rows: FleetComparison[]): Record<string, PolicyResult> {
  const out: Record<string, PolicyResult> = {};
  for (const { withOutage: o } of rows) {
    out[o.policy] = {
      attemptsPerCallDuringOutage: Number(o.outageAmplification.toFixed(3)),
      recoverySeconds: o.timeToRecoverMs === undefined ? null : o.timeToRecoverMs / 1000,
      goodput: Math.round(o.goodput),
    };
  }
  return out;
}

function main(): void {
  const { config, policies, write, json } = parseArgs(process.argv.slice(2));
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
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 2;
}
