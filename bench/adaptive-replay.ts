/**
 * Replays traces of adaptive hedging (recorded by bench/adaptive-trace.ts against a real server) through the
 * current delay estimator, and prints, phase by phase, how the recorded delays and the replayed ones read the same
 * outcomes. See bench/lib/adaptive-trace.ts for what a replay shows and what it cannot.
 *
 *   npm run replay:adaptive [-- --learn-outcomes=300 bench/traces/seed-7.csv ...]   (default: every trace in
 *                                                                                  bench/traces/ and below)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { BENCH_SLOW_MS, type PhaseReading, parseTrace, replayTrace } from './lib/adaptive-trace.js';
import { PACKAGE_ROOT } from './lib/child-server.js';
import { fmt, markdownTable } from './lib/table.js';

const USAGE = `usage: npm run replay:adaptive [-- --learn-outcomes=300] [trace.csv ...]
  --learn-outcomes=N  outcomes at the start of each phase left out as its learning (default 300)
  trace.csv ...       traces recorded by npm run trace:adaptive or bench:adaptive -- --trace=FILE
                      (default: every .csv under bench/traces/)`;
/** A mistake in the command line: said in one line with the usage, exit code 2. */
function fail(message: string): never {
  process.stderr.write(`replay:adaptive: ${message}\n${USAGE}\n`);
  process.exit(2);
}
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const unknownOption = args.find((a) => a.startsWith('-') && !a.startsWith('--learn-outcomes='));
if (unknownOption !== undefined) {
  fail(`unknown option ${unknownOption}`);
}
const learnArg = args.find((a) => a.startsWith('--learn-outcomes='));
/** Outcomes at the start of each phase left out as its learning (the traces' learning calls). */
const learnOutcomes = learnArg === undefined ? 300 : Number(learnArg.slice('--learn-outcomes='.length));
if (!Number.isInteger(learnOutcomes) || learnOutcomes < 0) {
  fail(`--learn-outcomes must be a whole number of outcomes, 0 or more (got ${learnArg})`);
}
const traceArgs = args.filter((a) => a !== learnArg);
const dir = join(PACKAGE_ROOT, 'bench', 'traces');
const files =
  traceArgs.length > 0
    ? traceArgs.map((a) => {
        const file = resolve(a);
        if (!existsSync(file)) fail(`no trace at ${file} (the argument ${JSON.stringify(a)})`);
        return file;
      })
    : readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.csv'))
        .sort()
        .map((f) => join(dir, f));
if (files.length === 0) fail('no trace to replay: record one with npm run trace:adaptive');

const both = (recorded: number, replayed: number, decimals: number): string =>
  `${fmt(recorded, decimals)} → ${fmt(replayed, decimals)}`;
const rows: string[][] = [];
const totals = new Map<string, { recorded: PhaseReading[]; replayed: PhaseReading[] }>();
for (const file of files) {
  const name = relative(PACKAGE_ROOT, file);
  const replay = replayTrace(parseTrace(readFileSync(file, 'utf8'), name), {
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
    `Command: \`npm run replay:adaptive${args.length > 0 ? ` -- ${args.join(' ')}` : ''}\``,
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
