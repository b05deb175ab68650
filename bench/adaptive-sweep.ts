/**
 * A sweep of `simulate:adaptive` (`npm run simulate:adaptive:sweep`): every run of a named set (BENCHMARKS.md,
 * "Virtual time"), each phase tallied against issue 22's targets. Deterministic: the same build gives the same counts.
 *
 *   npm run simulate:adaptive:sweep [-- --sweep=main --jobs=2 --list=0 --json=0 <simulate:adaptive options>]
 *
 * `--sweep` is one of main, burst, client-stalls, server-stalls, long-server-stalls. The simulator's options go to
 * every run (checked here first, and after the run's own, so they override them): `-- --sweep=burst
 * --superseded-exact=1` runs the burst sweep with that diagnostic. `--list=1` lists the phases that missed a
 * target; `--json=1` prints the tally as one JSON line.
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { orUsageExit, POSITIVE_COUNT, type Script, scriptArgs, usageExit } from './lib/args.js';
import { fmt, markdownTable } from './lib/table.js';
import { ADAPTIVE_SIM_DEFAULTS, ADAPTIVE_SIM_SETTINGS, staticDelays } from './sim/adaptive-sim-options.js';
import { type SimulatedPhase, SWEEPS, tallySweep } from './sim/adaptive-sweep-tally.js';

const run = promisify(execFile);
const SIMULATOR = fileURLToPath(new URL('./adaptive-sim.ts', import.meta.url));

const SCRIPT: Script = {
  name: 'simulate:adaptive:sweep',
  about:
    "Runs every simulate:adaptive run of a named sweep and tallies its phases against issue 22's targets. " +
    'Writes no file.',
  footer:
    'Options but --sweep, --jobs, --list and --json go to every run, after its own (npm run simulate:adaptive -- --help).',
};
/** The sweep's own options; the simulator's go on to every run. */
const OWN = ['sweep', 'jobs', 'list', 'json'];
const args = scriptArgs(
  SCRIPT,
  {
    ...ADAPTIVE_SIM_DEFAULTS,
    /** Runs of the simulator at once. */
    jobs: Math.max(1, Math.min(2, availableParallelism())),
    /** 1: list the phases that missed a target. */
    list: 0,
    /** 1: print the tally as one JSON line (the runs always print theirs). */
    json: 0,
  },
  {
    ...ADAPTIVE_SIM_SETTINGS,
    others: ['sweep', ...ADAPTIVE_SIM_SETTINGS.others],
    switches: [...ADAPTIVE_SIM_SETTINGS.switches, 'list'],
    limits: { ...ADAPTIVE_SIM_SETTINGS.limits, jobs: POSITIVE_COUNT },
    notes: {
      ...ADAPTIVE_SIM_SETTINGS.notes,
      sweep: `one of ${Object.keys(SWEEPS).join(', ')} (default main)`,
      jobs: 'runs of the simulator at once',
      list: 'list the phases that missed a target',
      json: 'print the tally as one JSON line',
    },
  },
);
const name = args.values.get('sweep') ?? 'main';
const sweep = SWEEPS[name];
if (sweep === undefined) {
  usageExit(SCRIPT, `no sweep ${JSON.stringify(name)}: --sweep is one of ${Object.keys(SWEEPS).join(', ')}`);
}
orUsageExit(SCRIPT, () => staticDelays(args.values.get('static-delays')));
const { jobs } = args.options;
/** The simulator's options given, each as one `--name=value` argument, for every run. */
const passed = args.given.filter((option) => !OWN.includes(option.name)).map((option) => option.arg);

/** One run of the simulator: its phases. */
async function simulate(runArgs: string[]): Promise<SimulatedPhase[]> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', SIMULATOR, ...runArgs, ...passed, '--json=1'],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as SimulatedPhase[];
}

const results: SimulatedPhase[][] = new Array(sweep.runs.length);
let next = 0;
await Promise.all(
  Array.from({ length: jobs }, async () => {
    while (next < sweep.runs.length) {
      const i = next++;
      results[i] = await simulate(sweep.runs[i] as string[]);
    }
  }),
);
const tally = tallySweep(results.flat());

if (args.options.json === 1) {
  const { missed, ...counts } = tally;
  console.log(JSON.stringify({ sweep: name, args: passed, ...counts }));
} else {
  const lines = [
    `# simulate:adaptive, ${name} sweep`,
    '',
    `Command: \`npm run simulate:adaptive:sweep -- ${process.argv.slice(2).join(' ')}\``.replace(
      ' -- `',
      '`',
    ),
    '',
    `${sweep.description}: ${sweep.runs.length} runs, ${tally.phases} phases.`,
    '',
    markdownTable(
      [
        'phases',
        'p99 > ×1.15',
        'extra load > 0.06',
        'time to adapt > 2 s or never',
        'the same, paired',
        'mean p99 ratio',
        'worst',
        'mean extra load',
      ],
      [
        [
          String(tally.phases),
          String(tally.p99Misses),
          String(tally.loadMisses),
          String(tally.timeToAdaptMisses),
          String(tally.pairedMisses),
          `×${fmt(tally.meanRatio, 3)}`,
          `×${fmt(tally.worstRatio, 2)}`,
          fmt(tally.meanExtraLoad, 4),
        ],
      ],
    ),
  ];
  if (args.options.list === 1) {
    lines.push(
      '',
      markdownTable(
        ['run', 'phase', 'missed', 'adaptive p99 ms', 'best static', 'extra load'],
        tally.missed.map(({ phase, targets }) => [
          phase.args.join(' '),
          phase.phase,
          targets.join(', '),
          fmt(phase.adaptiveP99Ms, 1),
          phase.bestStaticMs === null
            ? 'none'
            : `${fmt(phase.bestStaticP99Ms ?? Number.NaN, 1)} (static ${phase.bestStaticMs} ms)`,
          fmt(phase.adaptiveExtraLoad, 3),
        ]),
      ),
    );
  }
  console.log(lines.join('\n'));
}
