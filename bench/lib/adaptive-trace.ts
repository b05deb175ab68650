/**
 * Traces of adaptive hedging: every outcome a client's AdaptiveHedging recorded (bench/adaptive-trace.ts writes
 * them from a real client and server), and a replay of those outcomes through the current delay estimator.
 *
 * A replay is open loop: the trace's delays, and so which first attempts a hedge superseded, are those of the
 * build that recorded it. It shows how the current estimator reads the same outcomes (the delay it would have
 * chosen after each, and the outcomes above that delay), not what its own hedges would have changed. What it
 * gives that a run of `bench:adaptive` does not: the same real outcomes, pauses of the client and the server
 * included, for every variant of the estimator, in milliseconds rather than minutes.
 */
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { percentile } from './stats.js';

/** One outcome: when it was recorded (ms since the trace began), in which phase, and what was recorded. */
export interface TraceOutcome {
  readonly ms: number;
  readonly phase: string;
  readonly delayUsedMs: number;
  readonly latencyMs: number;
  readonly superseded: boolean;
}

/** What counts as a slow call in bench:adaptive's phases: its slow modes are 200 ms in regime A, 400 ms in B. */
export const BENCH_SLOW_MS: Readonly<Record<string, number>> = { a1: 150, b: 300, a2: 150 };

/** The columns of a trace file, after its `#` comment lines. */
export const TRACE_HEADER = 'ms,phase,delayUsedMs,latencyMs,superseded';

/** A trace as CSV: `comments` as `#` lines, the header, then one line per outcome. */
export function formatTrace(outcomes: readonly TraceOutcome[], comments: readonly string[]): string {
  const lines = [...comments.map((c) => `# ${c}`), TRACE_HEADER];
  for (const o of outcomes) {
    lines.push(`${o.ms},${o.phase},${o.delayUsedMs},${o.latencyMs},${o.superseded ? 1 : 0}`);
  }
  return `${lines.join('\n')}\n`;
}

/** What {@link parseTrace} throws when its text is not a trace. */
export class TraceFormatError extends Error {
  override name = 'TraceFormatError';
}

/**
 * Reads a trace written by {@link formatTrace} (LF or CRLF line ends); `source` names it in errors
 * ({@link TraceFormatError}), with the first line that is not five fields, three of them numbers.
 */
export function parseTrace(text: string, source: string): TraceOutcome[] {
  const out: TraceOutcome[] = [];
  let header = false;
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line === '' || line.startsWith('#')) continue;
    if (!header) {
      if (line !== TRACE_HEADER)
        throw new TraceFormatError(`${source}:${i + 1}: expected the header "${TRACE_HEADER}"`);
      header = true;
      continue;
    }
    const fields = line.split(',');
    const [ms, phase, delayUsedMs, latencyMs, superseded] = fields;
    // An empty field is no number (Number('') is 0).
    const numbers = [ms, delayUsedMs, latencyMs].map((f) =>
      f === undefined || f.trim() === '' ? Number.NaN : Number(f),
    );
    if (
      fields.length !== 5 ||
      phase === undefined ||
      phase === '' ||
      numbers.some((n) => !Number.isFinite(n)) ||
      (superseded !== '0' && superseded !== '1')
    ) {
      throw new TraceFormatError(`${source}:${i + 1}: not an outcome: "${line}"`);
    }
    out.push({
      ms: numbers[0] as number,
      phase,
      delayUsedMs: numbers[1] as number,
      latencyMs: numbers[2] as number,
      superseded: superseded === '1',
    });
  }
  if (!header) throw new TraceFormatError(`${source}: no header "${TRACE_HEADER}"`);
  return out;
}

/** How a delay fared over one phase of a trace (its learning outcomes left out). */
export interface PhaseReading {
  readonly phase: string;
  readonly outcomes: number;
  /** Share of the outcomes above the delay in force (superseded ones always): the hedges it sends. */
  readonly aboveDelay: number;
  /** Mean delay at the slow calls (superseded, or answered after `slowMs`): how long their hedges waited. */
  readonly delayAtSlowCalls: number;
  /** Median delay over the phase's outcomes. */
  readonly medianDelay: number;
  /** 90th percentile of the delay over the phase's outcomes: high when excursions last. */
  readonly p90Delay: number;
}

/** Both readings of a trace, phase by phase: the delays it recorded, and the current estimator's. */
export interface TraceReplay {
  readonly recorded: PhaseReading[];
  readonly replayed: PhaseReading[];
}

/** Options of {@link replayTrace}. */
export interface ReplayOptions {
  /** Outcomes at the start of each phase left out of the readings (the bench's learning calls; default 300). */
  readonly learnOutcomes?: number;
  /** An answered outcome slower than this is a slow call, per phase (default 150 ms for every phase). */
  readonly slowMs?: Readonly<Record<string, number>>;
  /** maxExtraLoad of the AdaptiveHedging that replays (default 0.05, the bench's). */
  readonly maxExtraLoad?: number;
  /** recentCalls of the AdaptiveHedging that replays (default: its own default, 20 / maxExtraLoad). */
  readonly recentCalls?: number;
}

const METHOD = '/trace/Replay';

/**
 * Replays `outcomes` through a fresh AdaptiveHedging (the bench's options: the given maxExtraLoad, no budget; the
 * delay starts where the trace's did) under a fake clock set to each outcome's time, and reads each phase both
 * ways.
 */
export function replayTrace(outcomes: readonly TraceOutcome[], options: ReplayOptions = {}): TraceReplay {
  const learn = options.learnOutcomes ?? 300;
  // A trace holds latencies as the engine read them off `Date.now()`: in whole ms.
  const clock = new FakeClock(0, 1);
  const adaptive = new AdaptiveHedging({
    maxExtraLoad: options.maxExtraLoad ?? 0.05,
    budget: false,
    clock,
    ...(options.recentCalls === undefined ? {} : { recentCalls: options.recentCalls }),
  });
  const rows: {
    phase: string;
    index: number;
    slow: boolean;
    value: number;
    recorded: number;
    replayed: number;
  }[] = [];
  const seen = new Map<string, number>();
  let replayedDelay = outcomes[0]?.delayUsedMs ?? 0;
  for (const o of outcomes) {
    const index = seen.get(o.phase) ?? 0;
    seen.set(o.phase, index + 1);
    const slowMs = options.slowMs?.[o.phase] ?? 150;
    rows.push({
      phase: o.phase,
      index,
      slow: o.superseded || o.latencyMs > slowMs,
      value: o.superseded ? Number.POSITIVE_INFINITY : o.latencyMs,
      recorded: o.delayUsedMs,
      replayed: replayedDelay,
    });
    if (o.ms > clock.now()) clock.advance(o.ms - clock.now());
    adaptive.recordOutcome(METHOD, o.delayUsedMs, o.latencyMs, o.superseded);
    replayedDelay = adaptive.delayOf(METHOD) ?? replayedDelay;
  }
  const phases = [...seen.keys()];
  const read = (key: 'recorded' | 'replayed'): PhaseReading[] =>
    phases.map((phase) => {
      const measured = rows.filter((r) => r.phase === phase && r.index >= learn);
      const delays = measured.map((r) => r[key]).sort((a, b) => a - b);
      const slow = measured.filter((r) => r.slow);
      return {
        phase,
        outcomes: measured.length,
        aboveDelay: share(measured, (r) => r.value > r[key]),
        delayAtSlowCalls:
          slow.length === 0 ? Number.NaN : slow.reduce((sum, r) => sum + r[key], 0) / slow.length,
        medianDelay: percentile(delays, 50),
        p90Delay: percentile(delays, 90),
      };
    });
  return { recorded: read('recorded'), replayed: read('replayed') };
}

function share<T>(items: readonly T[], test: (item: T) => boolean): number {
  return items.length === 0 ? Number.NaN : items.filter(test).length / items.length;
}
