/**
 * Adaptive hedging through latency shifts, in virtual time (`npm run simulate:adaptive`): the package's own
 * `AdaptiveHedging` (delay tracker and hedge budget) under a fake clock, against static delays, through the phases
 * of `bench:adaptive` (regime A, B, A again; `learnCalls` + `measuredCalls` each at `rate` calls/s). Deterministic
 * for a seed, and independent of the machine's load, which on a shared machine swamps the real benchmark.
 *
 *   npm run simulate:adaptive [-- --rate=200 --learn-calls=300 --measured-calls=1200 --seed=1 --noise-ms=0
 *                                 --noise-burst-calls=0 --hold-in-stalls=1 --whole-ms=1 --superseded-exact=0
 *                                 --static-delays=5,10,20,30,40,50,150 --json=0]
 *
 * Its options are in bench/sim/adaptive-sim-options.ts.
 *
 * Model: calls arrive every 1/rate s; an attempt takes the regime's fast path × U[0.5, 1.5] plus 0.5 ms (gRPC),
 * or, with probability slowFraction, its slow time; `noiseMs` adds an exponential tail to 3% of the fast attempts
 * (with `noiseBurstCalls`, to 30% of the fast attempts in one block of that many calls in ten: the same share, in
 * bursts, as a busy machine gives it).
 * Every variant meets the same latency script (bench/lib/latency-script.ts): attempt k of call i of a phase takes the
 * same time for all of them, so they differ only by their policy.
 * Hedging: maxAttempts 2. A static delay hedges every call still waiting at the delay; adaptive hedging asks its
 * budget (floor 3/s) and, refused, asks again one delay later, as the engine does. The call commits at its first
 * answer and reports the first attempt's outcome to `AdaptiveHedging.recordOutcome`, as the engine does.
 * With `stallEveryMs`, the client stalls for `stallMs` that often (in the second half of each period): answers and timers due
 * during a stall run at its end, as they do behind a GC pause or a busy event loop. As in the engine, a hedge timer
 * that a stall made late lets an answer that came in meanwhile commit the call first, and adaptive hedging learns
 * nothing from a first attempt answered so (its latency is unknown). Adaptive hedging learns each latency in whole
 * milliseconds, as the engine reads it off `Date.now()` (`--whole-ms=0`: exactly). With `serverStall`, the server
 * stalls instead, and every attempt in progress during a stall answers at its end at the soonest. As in the engine,
 * adaptive hedging holds a hedge that comes due behind a stall (a hedge came due before it with no call answering
 * since) until the next call answers; `--hold-in-stalls=0` sends it at its delay all the same.
 *
 * Diagnostics: `--superseded-exact=1` hands adaptive hedging, for a first attempt a hedge superseded, the latency the
 * script gave it (unless it was slow), where the engine knows only that it outlived its delay and reads it as +∞:
 * what that reading costs. `--static-delays=4,5,6` runs other static delays (the best static delay of a phase is
 * the best of these). `--json=1` prints the summary as one JSON line (`SimulationSummary`), for
 * `npm run simulate:adaptive:sweep`.
 */
import { AdaptiveHedging } from '../src/hedging/adaptive-hedging-delay.js';
import { FakeClock } from '../src/testing/fake-clock.js';
import { orUsageExit, type Script, scriptArgs, usageExit } from './lib/args.js';
import { STATIC_LOAD_LIMIT, withinLoadLimit } from './lib/extra-load.js';
import { blockDraw, scriptedAttempt } from './lib/latency-script.js';
import { pairedTimeToAdapt } from './lib/paired-time-to-adapt.js';
import { slidingTimeToAdapt } from './lib/sliding-time-to-adapt.js';
import { summarize } from './lib/stats.js';
import { fmt, markdownTable } from './lib/table.js';
import {
  ADAPTIVE_SIM_DEFAULTS,
  ADAPTIVE_SIM_SETTINGS,
  shortPhaseProblem,
  staticDelays,
} from './sim/adaptive-sim-options.js';
import type { SimulatedPhase } from './sim/adaptive-sweep-tally.js';
import { EventQueue } from './sim/event-queue.js';

/** As the engine's: a hedge timer this late (ms) lets pending I/O run first (src/retry/hedge-scheduler.ts). */
const LATE_TIMER_MS = 1;

const SCRIPT: Script = {
  name: 'simulate:adaptive',
  about:
    'Adaptive hedging vs static delays through latency shifts, in virtual time (deterministic for a seed). ' +
    'Writes no file.',
};
const args = scriptArgs(SCRIPT, ADAPTIVE_SIM_DEFAULTS, ADAPTIVE_SIM_SETTINGS);
const opts = args.options;

const PHASES = [
  { key: 'a1', title: 'Regime A', fastMs: 2, slowMs: 200 },
  { key: 'b', title: 'Regime B, after the shift up', fastMs: 20, slowMs: 400 },
  { key: 'a2', title: 'Regime A again, after the shift down', fastMs: 2, slowMs: 200 },
] as const;
const STATIC_DELAYS_MS = orUsageExit(SCRIPT, () => staticDelays(args.values.get('static-delays')));
const shortPhase = shortPhaseProblem(opts);
if (shortPhase !== undefined) usageExit(SCRIPT, shortPhase);
const METHOD = '/sim.Service/Unary';
const GOLDEN = (Math.sqrt(5) - 1) / 2;

interface CallRecord {
  phase: number;
  index: number;
  startMs: number;
  latencyMs: number;
  hedged: boolean;
  /** Times the hedge budget refused this call's hedge. */
  refused: number;
}

/** Runs every phase for one variant: `staticDelayMs`, or adaptive hedging when undefined. */
function run(staticDelayMs: number | undefined): { calls: CallRecord[]; delays: number[][] } {
  // With --whole-ms, latencies are read in whole ms, as `Date.now()` reads them: the clock says so.
  const clock = new FakeClock(0, opts.wholeMs ? 1 : undefined);
  const adaptive =
    staticDelayMs === undefined
      ? new AdaptiveHedging({
          clock,
          maxExtraLoad: opts.maxExtraLoad,
          budget: { minPerSecond: opts.budgetMinPerSecond },
          holdInStalls: opts.holdInStalls === 1,
          ...(opts.recentCalls > 0 ? { recentCalls: opts.recentCalls } : {}),
        })
      : undefined;
  const events = new EventQueue<() => void>();
  const calls: CallRecord[] = [];
  const delays: number[][] = PHASES.map(() => []);
  const perPhase = opts.learnCalls + opts.measuredCalls;
  const gapMs = 1000 / opts.rate;
  /** What the latency script holds for attempt `attempt` of call `index` of `phase` (the same for every variant). */
  const latency = (phase: number, index: number, attempt: number): number => {
    const p = PHASES[phase] as (typeof PHASES)[number];
    const { slow, fastFactor, random } = scriptedAttempt(opts.seed, phase, index, attempt, opts.slowFraction);
    if (slow) return p.slowMs;
    let ms = p.fastMs * fastFactor + 0.5;
    if (opts.noiseMs > 0 && random() < noiseChance(phase, index))
      ms += -opts.noiseMs * Math.log(1 - random());
    return ms;
  };
  /** Whether the script makes that attempt slow (its regime's slow mode). */
  const isSlow = (phase: number, index: number, attempt: number): boolean =>
    scriptedAttempt(opts.seed, phase, index, attempt, opts.slowFraction).slow;
  /** When an attempt sent at `startMs` answers: its latency, held to the end of a server stall it meets. */
  const attemptEnds = (startMs: number, phase: number, index: number, attempt: number): number => {
    const ends = startMs + latency(phase, index, attempt);
    if (!opts.serverStall) return ends;
    for (let t = startMs; t < ends; t = Math.floor(t / opts.stallEveryMs + 1) * opts.stallEveryMs) {
      const stall = stallOf(t);
      if (stall !== undefined && stall.start < ends && stall.end > startMs) return Math.max(ends, stall.end);
    }
    return ends;
  };
  for (let n = 0; n < PHASES.length * perPhase; n++) {
    const phase = Math.floor(n / perPhase);
    events.push(n * gapMs, () => {
      const startMs = clock.now(); // later than planned when a stall held the call back
      adaptive?.budget?.recordCall();
      const delayMs = adaptive ? adaptive.delayFor(METHOD, 30).delayMs : (staticDelayMs as number);
      if (adaptive && (n % perPhase) % Math.round(opts.rate / 2) === 0) delays[phase]?.push(delayMs);
      const firstEnds = attemptEnds(startMs, phase, n % perPhase, 0);
      const firstSlow = isSlow(phase, n % perPhase, 0);
      const record: CallRecord = {
        phase,
        index: n % perPhase,
        startMs,
        latencyMs: 0,
        hedged: false,
        refused: 0,
      };
      calls.push(record);
      let done = false;
      /** The hedge was told to adaptive hedging as due (once per hedge, as the engine). */
      let dueTold = false;
      /** When the pending hedge timer is due, while one is. */
      let hedgeDueAt: number | undefined;
      const commit = (at: number, byFirst: boolean) => {
        if (done) return;
        done = true;
        record.latencyMs = at - startMs;
        // As the engine: a first answer read while a stall held the first hedge's timer past its due time (the
        // engine sees a late timer and reads pending I/O first) is not learned from.
        const heldPastHedge =
          byFirst && !record.hedged && hedgeDueAt !== undefined && at - hedgeDueAt > LATE_TIMER_MS;
        if (heldPastHedge) adaptive?.answered(METHOD);
        else if (opts.supersededExact && !byFirst && !firstSlow)
          adaptive?.recordOutcome(METHOD, delayMs, measured(n, startMs, firstEnds), false);
        else adaptive?.recordOutcome(METHOD, delayMs, measured(n, startMs, at), !byFirst);
      };
      events.push(firstEnds, () => commit(clock.now(), true));
      const askHedge = (at: number) => {
        hedgeDueAt = at;
        events.push(at, () => {
          if (done) return;
          const now = clock.now(); // later than `at` when a stall held the timer back
          // As the engine: a late timer lets an answer that came in meanwhile be read first.
          if (now - at > LATE_TIMER_MS && firstEnds <= now) return;
          hedgeDueAt = undefined;
          // As the engine: told once per hedge; a hedge due behind a stall waits for the next answer, and goes
          // after the answers due at the same time (the queue keeps their order), as the engine's setImmediate
          // goes after the I/O of its poll.
          if (adaptive && !dueTold) {
            dueTold = true;
            if (adaptive.holdHedge(METHOD)) {
              adaptive.whenAnswered(METHOD, () =>
                events.push(clock.now(), () => {
                  if (!done) send(clock.now());
                }),
              );
              return;
            }
          }
          send(now);
        });
      };
      const send = (now: number) => {
        if (adaptive?.budget && !adaptive.budget.allowAttempt('hedge')) {
          record.refused += 1;
          askHedge(now + delayMs); // refused: ask again one delay later, while the call waits
          return;
        }
        record.hedged = true;
        events.push(attemptEnds(now, phase, n % perPhase, 1), () => commit(clock.now(), false));
      };
      askHedge(startMs + delayMs);
    });
  }
  while (events.size > 0) {
    const at = events.peekTime();
    const stallEnd = opts.serverStall ? undefined : stallEndAt(at);
    if (stallEnd !== undefined) {
      events.push(stallEnd, events.pop() as () => void);
      continue;
    }
    clock.advance(at - clock.now());
    (events.pop() as () => void)();
  }
  return { calls, delays };
}

/** Tag of the draw that makes a block of calls noisy (`--noise-burst-calls`). */
const NOISE_BURST_TAG = 0xb075;

/** The chance that a fast attempt of call `index` of `phase` meets the noise. */
function noiseChance(phase: number, index: number): number {
  if (opts.noiseBurstCalls <= 0) return 0.03;
  const block = Math.floor(index / opts.noiseBurstCalls);
  return blockDraw(opts.seed, phase, block, NOISE_BURST_TAG) < 0.1 ? 0.3 : 0;
}

/**
 * The latency of an attempt from `startMs` to `endMs` as the engine reads it: in whole ms off `Date.now()` (whose
 * ticks fall at a point of the virtual millisecond that moves on by the golden ratio from call to call), or exactly
 * with `--whole-ms=0`.
 */
function measured(call: number, startMs: number, endMs: number): number {
  if (!opts.wholeMs) return endMs - startMs;
  const phase = (call * GOLDEN) % 1;
  return Math.floor(endMs + phase) - Math.floor(startMs + phase);
}

/**
 * The end of the client stall `at` falls in, or undefined outside one. Stall k starts in the second half of period
 * k, at a point that moves on by the golden ratio each time (so that stalls do not hit the calls in the same phase
 * of the arrival grid).
 */
function stallEndAt(at: number): number | undefined {
  const stall = stallOf(at);
  return stall !== undefined && at >= stall.start && at < stall.end ? stall.end : undefined;
}

/** The stall of the period `at` is in. */
function stallOf(at: number): { start: number; end: number } | undefined {
  if (opts.stallEveryMs <= 0) return undefined;
  const k = Math.floor(at / opts.stallEveryMs);
  const start = (k + 0.5 + 0.5 * ((k * GOLDEN) % 1)) * opts.stallEveryMs;
  return { start, end: start + opts.stallMs };
}

/** Seconds from the start of the phase until the p99 of every 1 s sliding window stays at or below `limitMs`. */
function timeToAdapt(calls: CallRecord[], limitMs: number): number | undefined {
  const t0 = calls[0]?.startMs ?? 0;
  return slidingTimeToAdapt(
    calls.map((c) => ({ startMs: c.startMs - t0, latencyMs: c.latencyMs })),
    limitMs,
  ).timeToAdapt;
}

const variants = [
  ...STATIC_DELAYS_MS.map((ms) => ({ name: `static ${ms} ms`, ms, ...run(ms) })),
  { name: 'adaptive', ms: undefined, ...run(undefined) },
];
const lines: string[] = [
  '# Adaptive hedging through latency shifts, in virtual time',
  '',
  `Command: \`npm run simulate:adaptive -- ${process.argv.slice(2).join(' ')}\``.replace(' -- `', '`'),
  '',
  `${opts.rate} calls/s; per phase ${opts.learnCalls} learning + ${opts.measuredCalls} measured calls; ` +
    `slow share ${opts.slowFraction}; noise ${opts.noiseMs} ms${opts.noiseBurstCalls > 0 ? ` in bursts of ${opts.noiseBurstCalls} calls` : ''}; seed ${opts.seed}; maxExtraLoad ${opts.maxExtraLoad}, ` +
    `budget floor ${opts.budgetMinPerSecond}/s.`,
  '',
];
const summary: string[][] = [];
const jsonPhases: SimulatedPhase[] = [];
const SHORT_TITLES = ['A', 'B', 'A again'];
PHASES.forEach((phase, p) => {
  const rows = variants.map((v) => {
    const all = v.calls.filter((c) => c.phase === p);
    const measured = all.filter((c) => c.index >= opts.learnCalls);
    const s = summarize(measured.map((c) => c.latencyMs));
    const extraLoad = measured.filter((c) => c.hedged).length / measured.length;
    return { v, all, s, extraLoad };
  });
  const best = rows
    .filter((r) => r.v.ms !== undefined && withinLoadLimit(r.extraLoad, STATIC_LOAD_LIMIT))
    .reduce<(typeof rows)[0] | undefined>((b, r) => (!b || r.s.p99 < b.s.p99 ? r : b), undefined);
  const limit = best ? best.s.p99 * 1.15 : Number.NaN;
  const byIndex = (r: (typeof rows)[0]): number[] =>
    [...r.all].sort((x, y) => x.index - y.index).map((c) => c.latencyMs);
  /** Paired with the best static delay over the same calls (both met the same script), in seconds. */
  const paired = (r: (typeof rows)[0]): number | undefined => {
    if (!best) return undefined;
    const calls = pairedTimeToAdapt(byIndex(r), byIndex(best), { windowCalls: opts.rate, ratio: 1.15 });
    return calls === undefined ? undefined : calls / opts.rate;
  };
  const seconds = (t: number | undefined): string => (t === undefined ? 'never' : fmt(t, 1));
  lines.push(
    `### ${phase.title}`,
    '',
    markdownTable(
      ['variant', 'p50 ms', 'p99 ms', 'extra load', 'time to adapt (s)', 'time to adapt, paired (s)'],
      rows.map((r) => [
        r.v.name,
        fmt(r.s.p50, 1),
        fmt(r.s.p99, 1),
        fmt(r.extraLoad, 3),
        seconds(timeToAdapt(r.all, limit)),
        seconds(paired(r)),
      ]),
    ),
    '',
  );
  const ad = rows.find((r) => r.v.ms === undefined);
  if (ad) {
    jsonPhases.push({
      phase: SHORT_TITLES[p] as string,
      args: args.given.filter((option) => option.name !== 'json').map((option) => option.arg),
      adaptiveP99Ms: ad.s.p99,
      bestStaticMs: best?.v.ms ?? null,
      bestStaticP99Ms: best?.s.p99 ?? null,
      adaptiveExtraLoad: ad.extraLoad,
      afterShift: p > 0,
      timeToAdaptS: best ? (timeToAdapt(ad.all, limit) ?? null) : null,
      pairedTimeToAdaptS: paired(ad) ?? null,
      refused: ad.all.reduce((sum, c) => sum + c.refused, 0),
    });
  }
  if (ad && best) {
    const t = timeToAdapt(ad.all, limit);
    summary.push([
      phase.title,
      fmt(ad.s.p99, 1),
      `${fmt(best.s.p99, 1)} (${best.v.name})`,
      `×${fmt(ad.s.p99 / best.s.p99, 2)}`,
      fmt(ad.extraLoad, 3),
      p === 0 ? '(warm-up)' : seconds(t),
      String(ad.all.reduce((sum, c) => sum + c.refused, 0)),
      p === 0 ? '(warm-up)' : seconds(paired(ad)),
    ]);
  }
});
if (opts.json) {
  console.log(JSON.stringify(jsonPhases));
  process.exit(0);
}
const adaptiveRun = variants.find((v) => v.ms === undefined);
lines.push(
  'Adaptive delay (ms) every half second of each phase:',
  ...PHASES.map(
    (phase, p) => `- ${phase.title}: ${(adaptiveRun?.delays[p] ?? []).map((d) => fmt(d, 1)).join(' ')}`,
  ),
  '',
);
console.log(
  [
    ...lines.slice(0, 6),
    markdownTable(
      [
        'phase',
        'adaptive p99 ms',
        'best static (extra load ≤ 0.06) p99 ms',
        'ratio',
        'adaptive extra load',
        'time to adapt (s)',
        'hedges refused by the budget',
        'time to adapt, paired (s)',
      ],
      summary,
    ),
    '',
    ...lines.slice(6),
  ].join('\n'),
);
