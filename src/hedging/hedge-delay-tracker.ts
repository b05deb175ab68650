import { AnswersTogether } from './answers-together.js';
import { type AboveCounts, AttemptWindow } from './attempt-window.js';
import { gapCrossingQuantile } from './gap-crossing-quantile.js';

/**
 * The hedging delay of one method: the latency quantile 1 − `exceedance` of its recent first attempts, computed
 * from exactly what the engine knows at each commit, and a change detector that drops the calls from before a
 * shift of the latencies. Pure arithmetic; no clock.
 *
 * **The estimate.** The window ({@link AttemptWindow}) holds the last `recentCalls` first attempts (fewer right
 * after a shift). A first attempt that answered has an exact latency. One that was superseded (a hedge won) is
 * known only to have outlived the delay it was sent with: the window holds it as +∞, "slower than any delay", the
 * conservative reading (a hedge was needed). The delay is the window's quantile 1 − `exceedance`, lowered across
 * the gap below it ({@link gapCrossingQuantile}: a whole cluster of latencies crossed or none of it, and below a
 * sparse top or a straggler or two; on a continuous distribution, the plain quantile).
 *
 * **Why not stochastic approximation.** A Robbins–Monro tracker (log d up by step · (1 − e) when the attempt
 * outlived d, down by step · e when not) has its fixed point where e of the attempts outlive d, but in the gap
 * between a fast path and a slow mode every d outlives the same share: its drift is zero there, so it wanders up
 * the gap, and its down steps are e / (1 − e) of its up steps, so a shift down takes hundreds of calls. The
 * window's order statistics see the gap. (An earlier version of this class was such a tracker with a lowering
 * rule; in `bench:adaptive` it took 5.7 s to follow a shift up and never came down after a shift down.)
 *
 * **Shifts.** After each call the detector compares the last `shiftCalls` attempts (50 by default) with the
 * delay:
 * - a shift up is `shiftRun` attempts in a row that outlived their delay (5 by default: by chance once in millions
 *   of calls), or more than {@link upThreshold} of the last `shiftCalls` above the delay. The window then keeps
 *   only the last 2 · `shiftRun` attempts: with more of the old ones, the estimate's gap crossing would pull the
 *   delay back to the old fast path until the new calls outnumbered its tolerance. (Those first attempts of the
 *   new regime to answer are its fastest, so for a few calls the delay understates it. Holding the delay at twice
 *   their slowest meanwhile saved one or two hedges per shift in simulation, and on a real server doubled the odd
 *   outlier, or a stall of the client taken for a shift, to 50–200 ms: not worth it.)
 *   A shift up may be a stall (a pause of the client or the server held the calls in flight): once most of the
 *   last 2 · `shiftRun` calls since are back under the delay from before the run, within 4 · `shiftRun` calls, it
 *   is taken back, and the window is what it was plus the calls since, without the stall's victims (the attempts
 *   of the run and after it that answered slower than that delay). A run of three, too short for a shift up, is
 *   put to the same test, the window kept as it is meanwhile; so are answers that came together
 *   ({@link AnswersTogether}: a pause's signature) with two or more of them late.
 *   A shift up that was no stall may still have been an excursion: once the last `shiftCalls` calls since are back
 *   at the delay from before it (about their share above it), before the window would have turned over, the window
 *   goes back to what it was, plus those calls ({@link endExcursion}).
 * - a shift down is no more than ⌊exceedance · shiftCalls⌋ of the last `shiftCalls` above delay / `shiftRatio`.
 *   The window then keeps those last `shiftCalls` attempts.
 *
 * Without a shift, the window turns over in `recentCalls` calls.
 *
 * Latencies and delays are in ms; the delay stays within [minMs, maxMs]. It holds its initial value until
 * `minCalls` attempts have been recorded.
 * @internal
 */
export class HedgeDelayTracker {
  private delay: number;
  /** The last first attempts: their latencies, +∞ for a superseded one. */
  private readonly window: AttemptWindow;
  /** Attempts in a row that outlived the delay they were sent with. */
  private outlivedRun = 0;
  /** The delay in force when the current run of attempts outliving their delay began. */
  private delayBeforeRun = 0;
  /** Of the answers in the current run of answers together ({@link AnswersTogether.run}), those that answered late. */
  private lateTogether = 0;
  /** The delay in force when the current run of answers together began. */
  private delayBeforeTogether = 0;
  /** When the attempts answered: whether one came together with the one before (a pause's signature). */
  private readonly answerTimes = new AnswersTogether();
  private outcomes = 0;
  private shifts = 0;
  private stalls = 0;
  /** A possible stall (a shift up, or a run of STALL_RUN) the calls after it have not yet confirmed or ruled out. */
  private pendingStall: PossibleStall | undefined;
  /** The last shift up, while the calls since may yet show it an excursion (see {@link endExcursion}). */
  private excursion: PossibleStall | undefined;
  /** Excursions taken back so far. */
  private excursionsEnded = 0;
  /** No more than this of the last `shiftCalls` above the delay from before a shift up takes it back. */
  private readonly backLimit: number;
  /** Calls the shift detector looks back over (`shiftCalls`, at most the window). */
  private readonly shiftWindow: number;
  /** More of the last `shiftCalls` than this above the delay is a shift up. */
  private readonly upLimit: number;
  /** No more than this of the last `shiftCalls` above delay / shiftRatio is a shift down. */
  private readonly downLimit: number;
  /** The shift detector's counts of the last `shiftCalls` above the delay and above delay / shiftRatio. */
  private readonly counts: AboveCounts = { high: 0, low: 0 };

  constructor(
    initialMs: number,
    private readonly config: HedgeDelayTrackerConfig,
  ) {
    this.delay = clamp(initialMs, config.minMs, config.maxMs);
    this.window = new AttemptWindow(config.recentCalls);
    this.shiftWindow = Math.min(config.shiftCalls, config.recentCalls);
    const expected = config.exceedance * this.shiftWindow;
    this.upLimit = upThreshold(expected);
    this.downLimit = Math.floor(expected);
    this.backLimit = upThreshold(expected, EXCURSION_SD);
  }

  /** The current delay, ms. */
  get delayMs(): number {
    return this.delay;
  }

  /** Outcomes recorded so far. */
  get count(): number {
    return this.outcomes;
  }

  /** Shifts detected so far (each one restarted the window from the last few attempts). */
  get shiftsDetected(): number {
    return this.shifts;
  }

  /**
   * Stalls taken out of the window: shifts up, runs of three attempts outliving their delay, or answers together
   * with two or more of them late, after which most of the calls were soon back under the delay before.
   */
  get stallsDetected(): number {
    return this.stalls;
  }

  /** Shifts up taken back as excursions: the calls after them came back to the delay from before. */
  get excursionsDetected(): number {
    return this.excursionsEnded;
  }

  /**
   * One call's first attempt: it was sent with hedging delay `delayUsedMs` and ran `latencyMs` before its first
   * response (`superseded` false), or was superseded by a hedge after running `latencyMs` (`superseded` true: its
   * latency is at least that). A superseded attempt that had not outlived its delay tells nothing and is ignored.
   * `atMs` is when the call committed, on any clock (NaN: not known); it tells whether attempts answered together.
   */
  record(delayUsedMs: number, latencyMs: number, superseded: boolean, atMs = Number.NaN): void {
    if (superseded && !(latencyMs > delayUsedMs)) {
      return;
    }
    this.outcomes += 1;
    const late = latencyMs > delayUsedMs;
    this.outlivedRun = late ? this.outlivedRun + 1 : 0;
    // Answers that came together, two or more of them late (a hedge superseded neither): most likely a pause's
    // victims (see STALL_RUN).
    const answeredLate = late && !superseded;
    const together = this.answerTimes.note(atMs);
    const burst = this.answerTimes.run;
    if (burst === 1) {
      this.lateTogether = 0;
      this.delayBeforeTogether = this.delay;
    }
    this.lateTogether += answeredLate ? 1 : 0;
    const pauseVictims = together && answeredLate && this.lateTogether >= 2;
    if (this.outlivedRun === 1) {
      this.delayBeforeRun = this.delay;
    }
    const value = superseded ? Number.POSITIVE_INFINITY : latencyMs;
    this.window.push(value);
    if (this.excursion !== undefined) {
      this.excursion.since += 1;
    }
    const shift = this.window.size >= this.shiftWindow ? this.shift() : undefined;
    if (shift !== undefined) {
      this.shifts += 1;
      // A shift up may be a stall: keep the window as it was, without the stall's victims in the run that set the
      // shift off, until the next calls tell.
      this.pendingStall = shift === 'up' ? this.openStall(this.outlivedRun, this.delayBeforeRun) : undefined;
      if (this.pendingStall !== undefined && this.excursion === undefined) {
        // The same window to go back to, with a count of its own. (A shift up within an excursion is part of it:
        // the window to go back to is still the one from before the first.)
        this.excursion = { ...this.pendingStall, since: 0 };
      }
      this.outlivedRun = 0;
      // After a shift up the calls before it would hold the delay down (the estimate's gap crossing), so keep only
      // the last few.
      this.window.keepLast(
        shift === 'up' ? Math.min(2 * this.config.shiftRun, this.window.size) : this.shiftWindow,
      );
    } else if (this.pendingStall !== undefined) {
      this.confirm(this.pendingStall);
    } else if (this.delay < this.config.maxMs && (pauseVictims || this.outlivedRun === STALL_RUN)) {
      // A burst too short for a shift up may still be a stall's victims: the same test, the window kept as it is.
      // Its victims are the run of attempts that outlived their delay, or the answers together, whichever is longer.
      this.pendingStall =
        pauseVictims && burst > this.outlivedRun
          ? this.openStall(burst, this.delayBeforeTogether)
          : this.openStall(this.outlivedRun, this.delayBeforeRun);
    }
    if (shift === undefined && this.pendingStall === undefined && this.excursion !== undefined) {
      this.endExcursion(this.excursion);
    }
    if (this.outcomes >= this.config.minCalls) {
      this.delay = clamp(this.estimate(), this.config.minMs, this.config.maxMs);
    }
  }

  /**
   * A stall to be confirmed by the next calls: the window without those of its `last` attempts that outlived
   * `delayBefore` (its victims, if a stall), and that delay, the one from before them (its first victims may have
   * moved it already). With `last` 0 (a shift up on the count above the delay), the window and the delay as they
   * are.
   */
  private openStall(last: number, delayBefore: number): PossibleStall {
    const run = Math.min(last, this.window.size);
    const delay = run > 0 ? delayBefore : this.delay;
    return {
      before: concat(
        this.window.arrivals(0, this.window.size - run),
        notStallVictims(this.window.arrivals(this.window.size - run, run), delay),
      ),
      delay,
      since: 0,
    };
  }

  /**
   * One more call after a shift up, or after a run of STALL_RUN attempts outliving their delay. From 2 · `shiftRun`
   * calls since, after each call: when most of the last 2 · `shiftRun` were back under the delay from before the
   * run, it was a stall (a pause of the client or the server that held the calls in flight), and the window goes
   * back to what it was, plus the calls since, without the stall's victims: the run, and the calls since that
   * answered slower than that delay (the calls a pause holds answer together when it ends, so some come after the
   * run). A hedge could not have helped them: it waits out the same pause. Superseded ones stay (a hedge did
   * help). After 4 · `shiftRun` calls without that, the shift stands, or the run stays in the window.
   */
  private confirm(stall: PossibleStall): void {
    stall.since += 1;
    const judged = 2 * this.config.shiftRun;
    if (stall.since < judged) {
      return;
    }
    const last = Math.min(judged, this.window.size);
    let backUnder = 0;
    for (const x of this.window.arrivals(this.window.size - last, last)) {
      if (x <= stall.delay) {
        backUnder += 1;
      }
    }
    if (2 * backUnder > judged) {
      this.pendingStall = undefined;
      this.stalls += 1;
      const count = Math.min(stall.since, this.window.size);
      const values = concat(
        stall.before,
        notStallVictims(this.window.arrivals(this.window.size - count, count), stall.delay),
      );
      this.window.restart(values.subarray(Math.max(0, values.length - this.window.capacity)));
      if (this.excursion?.before === stall.before) {
        // The shift up was a stall, and the window is back already.
        this.excursion = undefined;
      }
    } else if (stall.since >= STALL_CALLS_MAX * this.config.shiftRun) {
      this.pendingStall = undefined;
    }
  }

  /**
   * One more call after a shift up that was not a stall. Once `shiftCalls` calls have come since, while no more than
   * a few more than their share of them (`backLimit`: their expected count plus three standard deviations) lie above
   * the delay from before the shift, and more than their share lie between that delay / `shiftRatio` and it (they
   * are no faster either), the shift was an excursion: the latencies came back to what they were. The window then
   * goes back to what it was, without the calls of the excursion but the last `shiftCalls`, and without those that
   * would have turned over since. Of the last `shiftCalls`, those that answered slower than the delay from before
   * are left out, as a stall's victims are: they are the excursion's last calls (kept, they made a cluster above the
   * old fast path that held the delay at their latency, until a shift down dropped the window again). Without this,
   * after a burst of slow calls the window started again from a few dozen calls, whose top sat below the fast
   * path's: in `bench:adaptive`'s regime A again, victims of a pause set off a shift up that the stall test did not
   * take back, and the 50 calls kept at the shift down after it all read 4 ms or less, below a fast path topping at
   * 5 ms: the delay was 4 ms for 63 calls and the phase spent 0.063 in extra load. After a real shift up the calls
   * stay slower, and once the window has turned over there is nothing to go back to.
   */
  private endExcursion(excursion: PossibleStall): void {
    const { capacity } = this.window;
    if (excursion.since >= capacity) {
      this.excursion = undefined;
      return;
    }
    if (excursion.since < this.shiftWindow) {
      return;
    }
    const counts = this.counts;
    this.window.countLastAbove(
      this.shiftWindow,
      excursion.delay,
      excursion.delay / this.config.shiftRatio,
      counts,
    );
    if (counts.high > this.backLimit || counts.low - counts.high <= this.downLimit) {
      return;
    }
    this.excursion = undefined;
    this.excursionsEnded += 1;
    const before = excursion.before;
    const kept = before.subarray(Math.max(0, before.length - (capacity - excursion.since)));
    const last = this.window.arrivals(this.window.size - this.shiftWindow, this.shiftWindow);
    this.window.restart(concat(kept, notStallVictims(last, excursion.delay)));
  }

  /** The window's estimate; the delay as it is while every attempt of the window was superseded. */
  private estimate(): number {
    const { exceedance, gapRatio, resolutionMs } = this.config;
    return (
      gapCrossingQuantile(this.window.sorted, this.window.size, exceedance, gapRatio, resolutionMs) ??
      this.delay
    );
  }

  /** Whether the last attempts say the latencies moved away from the delay, up or down. */
  private shift(): 'up' | 'down' | undefined {
    if (this.outlivedRun >= this.config.shiftRun && this.delay < this.config.maxMs) {
      return 'up';
    }
    const counts = this.counts;
    this.window.countLastAbove(this.shiftWindow, this.delay, this.delay / this.config.shiftRatio, counts);
    // At a bound of [minMs, maxMs] a shift past it changes nothing: no restart.
    if (counts.high > this.upLimit && this.delay < this.config.maxMs) {
      return 'up';
    }
    return counts.low <= this.downLimit && this.delay > this.config.minMs ? 'down' : undefined;
  }
}

/**
 * How many of the last attempts may lie above the delay before it counts as a shift up: the expected number plus
 * six standard deviations of a Poisson count. At the expected 2.5 of 50 attempts that is more than 12: by chance
 * fewer than 6 in a million checks even with a fifth more attempts above the delay than its target, and the
 * detector checks after every call. (`sds`: that many standard deviations instead of six.)
 * @internal
 */
export function upThreshold(expected: number, sds = 6): number {
  return Math.ceil(expected + sds * Math.sqrt(expected));
}

/**
 * Standard deviations above the expected count of the last calls above the delay from before a shift up that still
 * take it back as an excursion: 7 of 50 at the default 0.045. A moderate real shift up (a fast path moved past the
 * old delay) puts many more there.
 */
const EXCURSION_SD = 3;

/**
 * A shift up not taken back as a stall within this many times `shiftRun` calls stands (a run of STALL_RUN stays in
 * the window). A stall's victims answer
 * together when it ends, some after the run that set the shift off: in a trace of `bench:adaptive`, six of the ten
 * calls after it. Judged on those ten alone, it stood, and the delay stayed at the victims' latency (11 ms over a
 * fast path at 5–7 ms) for 2 s, until the window turned over. After a real shift up the calls stay slower, and
 * the shift stands.
 */
const STALL_CALLS_MAX = 4;

/**
 * This many attempts in a row outliving their delay, too few for a shift up, are put to the same test as one: a
 * pause of the server holds the few calls in flight, and in regime B of `bench:adaptive` four victims answered in
 * the same millisecond (35–56 ms over a fast path topping at 33 ms) and held the delay at 44 ms for 2 s. By
 * chance, at the target share of 0.045, three in a row come once in 11,000 calls, and the test takes them out of
 * the window only when the calls after them are back under the delay.
 *
 * So are answers that came together ({@link AnswersTogether}) with two or more of them answered late (a hedge
 * superseded none of those), the run of answers together then being the victims when it is longer than the run of
 * attempts outliving their delay. In a trace of regime A again, a pause's two victims answered in the same
 * millisecond at 15 and 12 ms over a fast path topping at 9 ms, and held the delay at 15 ms for 2 s (p99 ×1.31 the
 * best static delay's); in one of regime B, where a quarter of the answers come in pairs by chance, four answered in
 * the same millisecond, three late (54, 48 and 43 ms) and one on time among them, over a fast path topping at 32 ms,
 * and held the delay at 54 ms for 1.5 s. Any two in a row would come by chance once in 500 calls, and taking those
 * out of a continuous tail put 0.0504 of the calls over the delay instead of 0.0448 (a frozen clock, where every
 * answer is together, showed it); answers counted as together only where chance rarely brings that many, the chance
 * runs are a fifth of those at most.
 */
const STALL_RUN = 3;

/**
 * The attempts of `values` that were not a stall's victims: those that answered no slower than `delay` (the delay
 * before the stall), and the superseded ones (+∞: a hedge did help them).
 */
function notStallVictims(values: Float64Array, delay: number): Float64Array {
  return values.filter((x) => x <= delay || x === Number.POSITIVE_INFINITY);
}

function concat(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * A possible stall (a shift up, or a run of STALL_RUN attempts outliving their delay), or a possible excursion (a
 * shift up), waiting for the calls after it: the window it would go back to, and the delay those calls are judged
 * against.
 */
interface PossibleStall {
  /** The window just before the shift, in arrival order, without the victims in the run of calls that set it off. */
  readonly before: Float64Array;
  /** The delay before the run of calls that set it off. */
  readonly delay: number;
  /** Calls since the shift. */
  since: number;
}

/** Settings of a {@link HedgeDelayTracker}. @internal */
export interface HedgeDelayTrackerConfig {
  /** Target share of first attempts that outlive the delay (maxExtraLoad), in (0, 1). */
  readonly exceedance: number;
  /** The longest window, in calls. */
  readonly recentCalls: number;
  /** Calls the shift detector looks back over. */
  readonly shiftCalls: number;
  /** This many attempts in a row outliving their delay are a shift up. */
  readonly shiftRun: number;
  /** A shift down is the last calls with no more than their share above delay / shiftRatio. */
  readonly shiftRatio: number;
  /** The estimate drops to the largest latency below delay / gapRatio while few enough lie above it. */
  readonly gapRatio: number;
  /** Calls recorded before the delay moves from its initial value. */
  readonly minCalls: number;
  /** The resolution of the latencies, ms: the clock's tick (1 for `Date.now()`); 0 (default) for exact ones. */
  readonly resolutionMs?: number;
  readonly minMs: number;
  readonly maxMs: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
