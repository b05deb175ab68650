/**
 * Replays traces of adaptive hedging (recorded by bench/adaptive-trace.ts against a real server) through the
 * current delay estimator, and prints, phase by phase, how the recorded delays and the replayed ones read the same
 * outcomes. See bench/lib/adaptive-trace.ts for what a replay shows and what it cannot.
 *
 *   npm run replay:adaptive [-- --learn-outcomes=300 bench/traces/seed-7.csv bench/traces/in-bench ...]
 *                                                            (default: every trace in bench/traces/ and below)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  BENCH_SLOW_MS,
  type PhaseReading,
  parseTrace,
  replayTrace,
  TraceFormatError,
} from './lib/adaptive-trace.js';
import { COUNT, type Script, scriptArgs, usageExit, userPath } from './lib/args.js';
import { PACKAGE_ROOT } from './lib/child-server.js';
import { fmt, markdownTable } from './lib/table.js';

const SCRIPT: Script = {
  name: 'replay:adaptive',
  about:
    'Replays recorded traces of adaptive hedging through the current delay estimator, phase by phase. Writes no file.',
  operands: '[trace.csv|directory ...]',
  footer:
    'Traces: files recorded by npm run trace:adaptive or bench:adaptive -- --trace=FILE, or directories of them\n' +
    '(default: every .csv under bench/traces/). A relative path is read from where npm run was started.',
};
const args = scriptArgs(
  SCRIPT,
  {
    /** Outcomes at the start of each phase left out as its learning (the traces' learning calls). */
    learnOutcomes: 300,
  },
  {
    operands: true,
    limits: { learnOutcomes: COUNT },
    notes: { learnOutcomes: 'outcomes at the start of each phase left out as its learning' },
  },
);
const { learnOutcomes } = args.options;
const argv = process.argv.slice(2);

/** Every .csv file under `dir`, sorted. */
const tracesIn = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.csv'))
    .sort()
    .map((f) => join(dir, f));

/** The trace files an argument names: a file, or every .csv under a directory. */
function tracesOf(arg: string): string[] {
  const path = userPath(arg);
  if (!existsSync(path)) usageExit(SCRIPT, `no trace at ${path} (the argument ${JSON.stringify(arg)})`);
  if (!statSync(path).isDirectory()) return [path];
  const files = tracesIn(path);
  if (files.length === 0)
    usageExit(SCRIPT, `no .csv trace under ${path} (the argument ${JSON.stringify(arg)})`);
  return files;
}

const files =
  args.operands.length > 0
    ? args.operands.flatMap(tracesOf)
    : tracesIn(join(PACKAGE_ROOT, 'bench', 'traces'));
if (files.length === 0) usageExit(SCRIPT, 'no trace to replay: record one with npm run trace:adaptive');

/** The outcomes of the trace in `file`; a usage error if it is not one. */
function readTrace(file: string, name: string): ReturnType<typeof parseTrace> {
  try {
    const outcomes = parseTrace(readFileSync(file, 'utf8'), name);
    if (outcomes.length === 0) usageExit(SCRIPT, `${name}: a trace with no outcome`);
    return outcomes;
  } catch (error) {
    if (error instanceof TraceFormatError) usageExit(SCRIPT, `not a trace: ${error.message}`);
    throw error;
  }
}

const both = (recorded: number, replayed: number, decimals: number): string =>
  `${fmt(recorded, decimals)} → ${fmt(replayed, decimals)}`;
const rows: string[][] = [];
const totals = new Map<string, { recorded: PhaseReading[]; replayed: PhaseReading[] }>();
for (const file of files) {
  const name = relative(PACKAGE_ROOT, file);
  const replay = replayTrace(readTrace(file, name), {
    slowMs: BENCH_SLOW_MS,
    learnOutcomes,
  });
  for (const [i, r] of replay.replayed.entries()) {
    const rec = replay.recorded[i] as PhaseReading;
    rows.push([
      name,
      r.phase,
      String(r.outcomes),
      both(rec.aboveDelay, r.aboveDelay, 3),
      both(rec.delayAtSlowCalls, r.delayAtSlowCalls, 1),
      both(rec.medianDelay, r.medianDelay, 0),
      both(rec.p90Delay, r.p90Delay, 0),
    ]);
    const t = totals.get(r.phase) ?? { recorded: [], replayed: [] };
    t.recorded.push(rec);
    t.replayed.push(r);
    totals.set(r.phase, t);
  }
}
const mean = (readings: PhaseReading[], key: Exclude<keyof PhaseReading, 'phase'>): number =>
  readings.reduce((sum, r) => sum + r[key], 0) / readings.length;
for (const [phase, t] of totals) {
  rows.push([
    `mean of ${t.replayed.length}`,
    phase,
    '',
    both(mean(t.recorded, 'aboveDelay'), mean(t.replayed, 'aboveDelay'), 3),
    both(mean(t.recorded, 'delayAtSlowCalls'), mean(t.replayed, 'delayAtSlowCalls'), 1),
    both(mean(t.recorded, 'medianDelay'), mean(t.replayed, 'medianDelay'), 1),
    both(mean(t.recorded, 'p90Delay'), mean(t.replayed, 'p90Delay'), 1),
  ]);
}
process.stdout.write(
  `${[
    '# Adaptive hedging traces, replayed',
    '',
    `Command: \`npm run replay:adaptive${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}\``,
    '',
    'Each cell: as recorded → as the current estimator reads the same outcomes (open loop: the trace keeps its own ' +
      `delays and hedges). Measured outcomes only (the first ${learnOutcomes} of each phase are its learning). Above the delay: ` +
      'the share of outcomes above the delay in force (superseded ones always). Delay at slow calls: the mean ' +
      'delay their hedges waited (superseded, or answered after 150 ms in A, 300 ms in B). The median and 90th ' +
      'percentile of the delay over the outcomes (a high 90th percentile: excursions that lasted).',
    '',
    markdownTable(
      [
        'trace',
        'phase',
        'outcomes',
        'above the delay',
        'delay at slow calls (ms)',
        'median delay (ms)',
        'p90 delay (ms)',
      ],
      rows,
    ),
    '',
  ].join('\n')}`,
);
