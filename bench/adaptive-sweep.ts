/**
 * A sweep of `simulate:adaptive` (`npm run simulate:adaptive:sweep`): every run of a named set (BENCHMARKS.md,
 * "Virtual time"), each phase tallied against issue 22's targets. Deterministic: the same build gives the same counts.
 *
 *   npm run simulate:adaptive:sweep [-- --sweep=main --jobs=2 --list=0 --json=0 <simulate:adaptive options>]
 *
 * `--sweep` is one of main, burst, client-stalls, server-stalls, long-server-stalls. Other options go to every run
 * (after the sweep's own, so they override them): `-- --sweep=burst --superseded-exact=1` runs the burst sweep with
 * that diagnostic. `--list=1` lists the phases that missed a target; `--json=1` prints the tally as one JSON line.
 */
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fmt, markdownTable } from './lib/table.js';
import { type SimulatedPhase, SWEEPS, tallySweep } from './sim/adaptive-sweep-tally.js';

const run = promisify(execFile);
const SIMULATOR = fileURLToPath(new URL('./adaptive-sim.ts', import.meta.url));

const OWN = ['sweep', 'jobs', 'list', 'json'];
const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(
    `usage: npm run simulate:adaptive:sweep [-- --sweep=main --jobs=2 --list=0 --json=0 <simulate:adaptive options>]
  --sweep=NAME  one of ${Object.keys(SWEEPS).join(', ')}
  --jobs=N      runs of the simulator at once
  --list=1      list the phases that missed a target
  --json=1      print the tally as one JSON line
Other options go to every run, after the sweep's own: see npm run simulate:adaptive -- --help.
`,
  );
  process.exit(0);
}
const own = new Map<string, string>();
const passed: string[] = [];
for (const arg of argv) {
  const match = /^--([\w-]+)=(.*)$/.exec(arg);
  if (match && OWN.includes(match[1] as string)) own.set(match[1] as string, match[2] as string);
  else passed.push(arg);
}
const name = own.get('sweep') ?? 'main';
const sweep = SWEEPS[name];
if (sweep === undefined) {
  throw new Error(`unknown sweep --sweep=${name} (known: ${Object.keys(SWEEPS).join(', ')})`);
}
const jobs = Number(own.get('jobs') ?? Math.max(1, Math.min(2, availableParallelism())));
if (!Number.isInteger(jobs) || jobs < 1)
  throw new Error(`--jobs must be a whole number, 1 or more, got ${jobs}`);
for (const flag of ['list', 'json']) {
  const value = own.get(flag);
  if (value !== undefined && value !== '0' && value !== '1')
    throw new Error(`--${flag} must be 0 or 1, got ${value}`);
}

/** One run of the simulator: its phases. */
async function simulate(args: string[]): Promise<SimulatedPhase[]> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', SIMULATOR, ...args, ...passed, '--json=1'],
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

if (own.get('json') === '1') {
  const { missed, ...counts } = tally;
  console.log(JSON.stringify({ sweep: name, args: passed, ...counts }));
} else {
  const lines = [
    `# simulate:adaptive, ${name} sweep`,
    '',
    `Command: \`npm run simulate:adaptive:sweep -- ${argv.join(' ')}\``.replace(' -- `', '`'),
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
  if (own.get('list') === '1') {
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
