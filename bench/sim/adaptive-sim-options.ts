/**
 * The options of `simulate:adaptive` (bench/adaptive-sim.ts), in one place: the simulator reads them, and
 * `simulate:adaptive:sweep` (bench/adaptive-sweep.ts) checks the ones it passes on to every run before it starts.
 */
import {
  type ArgSettings,
  COUNT,
  FRACTION,
  NON_NEGATIVE,
  POSITIVE,
  POSITIVE_COUNT,
  UsageError,
} from '../lib/args.js';

/** The numeric options and their defaults (`learnCalls` is `--learn-calls`). */
export const ADAPTIVE_SIM_DEFAULTS = {
  rate: 200,
  learnCalls: 300,
  measuredCalls: 1200,
  seed: 1,
  noiseMs: 0,
  /**
   * With noiseMs: the noisy attempts come in bursts, blocks of this many calls (a tenth of the blocks, drawn from the
   * seed, and 30% of the fast attempts in each); 0: any attempt, 3% of them.
   */
  noiseBurstCalls: 0,
  slowFraction: 0.05,
  maxExtraLoad: 0.05,
  budgetMinPerSecond: 3,
  /** The delay's window in calls (0: the default, 20 / maxExtraLoad). */
  recentCalls: 0,
  /** A client stall (a GC pause, a busy event loop) every this many ms (0: none). */
  stallEveryMs: 0,
  /** How long each stall lasts: every answer and timer due during it runs at its end. */
  stallMs: 25,
  /** 1: the stalls are the server's (every attempt in progress during one answers at its end at the soonest). */
  serverStall: 0,
  /** 0: adaptive hedging sends every hedge at its delay (`holdInStalls: false`), even while nothing answers. */
  holdInStalls: 1,
  /** 1: adaptive hedging learns latencies in whole ms, as the engine reads them off `Date.now()`; 0: exact. */
  wholeMs: 1,
  /**
   * 1 (a diagnostic): a first attempt a hedge superseded is learned with the latency the script gave it (unless it
   * was slow), which the engine cannot know; 0: as the engine, only that it outlived its delay.
   */
  supersededExact: 0,
  /** 1: print the summary as one JSON line. */
  json: 0,
};

export type AdaptiveSimOptions = typeof ADAPTIVE_SIM_DEFAULTS;

/** The static delays the simulator runs unless `--static-delays` says others. */
export const DEFAULT_STATIC_DELAYS_MS: readonly number[] = [5, 10, 20, 30, 40, 50, 150];

/** How the simulator reads its command line, besides the defaults. */
export const ADAPTIVE_SIM_SETTINGS = {
  others: ['static-delays'],
  switches: ['serverStall', 'holdInStalls', 'wholeMs', 'supersededExact', 'json'],
  limits: {
    rate: POSITIVE,
    learnCalls: COUNT,
    measuredCalls: POSITIVE_COUNT,
    seed: COUNT,
    noiseMs: NON_NEGATIVE,
    noiseBurstCalls: COUNT,
    slowFraction: FRACTION,
    maxExtraLoad: { above: 0, max: 1 },
    budgetMinPerSecond: NON_NEGATIVE,
    recentCalls: COUNT,
    stallEveryMs: NON_NEGATIVE,
    stallMs: NON_NEGATIVE,
  },
  notes: {
    rate: 'calls started per second',
    noiseBurstCalls: "with --noise-ms: the noise comes in bursts of this many calls; 0: it doesn't",
    recentCalls: "the delay's window in calls; 0: its default",
    stallEveryMs: 'a client stall every this many ms; 0: none',
    serverStall: "the stalls are the server's",
    holdInStalls: 'hold a hedge that comes due behind a stall until a call answers',
    wholeMs: 'learn latencies in whole ms, as the engine does',
    supersededExact: 'a diagnostic: superseded attempts learned with their scripted latency',
    json: 'print the summary as one JSON line',
    'static-delays': `the static delays to compare, ms (default ${DEFAULT_STATIC_DELAYS_MS.join(',')})`,
  },
} as const satisfies ArgSettings<AdaptiveSimOptions>;

/** The static delays of `--static-delays=a,b,...` (ms, each a positive number), or the defaults. */
export function staticDelays(text: string | undefined): readonly number[] {
  if (text === undefined) return DEFAULT_STATIC_DELAYS_MS;
  const values = text.split(',').map(Number);
  if (text === '' || values.some((v) => !Number.isFinite(v) || v <= 0)) {
    throw new UsageError(
      `--static-delays must be a comma-separated list of positive ms, got ${JSON.stringify(text)}`,
    );
  }
  return values;
}

/**
 * Why a phase of these options is too short to measure a time to adapt, or undefined: the 1 s sliding windows need
 * a call starting a second or more after the phase's first, and the paired windows `rate` calls, so a phase must
 * hold more than `rate` calls (with fewer, every variant read as "never" adapting).
 */
export function shortPhaseProblem(
  options: Pick<AdaptiveSimOptions, 'rate' | 'learnCalls' | 'measuredCalls'>,
): string | undefined {
  const { rate, learnCalls, measuredCalls } = options;
  const calls = learnCalls + measuredCalls;
  if (calls > rate) return undefined;
  return (
    `--learn-calls ${learnCalls} + --measured-calls ${measuredCalls} at --rate ${rate} make phases of ` +
    `${Number((calls / rate).toFixed(3))} s, shorter than the 1 s window the time to adapt is measured over: ` +
    `a phase must hold more than ${rate} calls`
  );
}
