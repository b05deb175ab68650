/**
 * The hedging delay of one method: the latency quantile 1 − `exceedance` of its recent first attempts, computed
 * from exactly what the engine knows at each commit, and a change detector that drops the calls from before a
 * shift of the latencies. Pure arithmetic; no clock.
 *
 * **The estimate.** The window holds the last `recentCalls` first attempts (fewer right after a shift). A first
 * attempt that answered has an exact latency. One that was superseded (a hedge won) is known only to have
 * outlived the delay it was sent with: the window holds it as +∞, "slower than any delay", the conservative
 * reading (a hedge was needed). Three steps:
 * 1. The quantile: the smallest latency q in the window with no more than a of the window's n attempts above it,
 *    where a = ⌊exceedance · (n + 1)⌋ − 1, so that the expected share above q, (a + 1) / (n + 1), is at most
 *    `exceedance`.
 * 2. Across gaps: the window's latencies fall into clusters, split wherever one is more than `gapRatio` times the
 *    next below it. While the top of the next cluster below q has no more than a + t attempts above it, q
 *    becomes that top (a whole cluster is crossed or none of it, and a continuous tail is one cluster, so it is
 *    never slid down). The tolerance t is three standard deviations of the count above q,
 *    3√(a + 1) (3 in a small window: one call slow on both attempts does not hold it up). Where a slow mode
 *    holds about `exceedance` of the calls (a fast path and 5% at 200 ms), every delay in the gap sends the
 *    same share of hedges and the lowest is best; but the slow mode holds more than a of the window half the
 *    time by chance, and then step 1's q is in the slow mode.
 *    A crossing may hedge only ⌊√(a + 1)⌋ attempts more than step 1's cluster and those above it hold (where a
 *    slow mode holds about the target share, its attempts): sparse jitter between a fast path and its slow mode
 *    would otherwise take the rest of the tolerance, and on a real machine put the extra load at 0.07. (The
 *    superseded attempts, +∞, are a cluster of their own, so the odd slow attempt that answered, both attempts
 *    having been slow, counts among the few; with half as many allowed, the sweeps' p99 went up to ×24.)
 *    Then, still within that, q drops below a sparse top of its cluster: up to three attempts that together span
 *    a gap's ratio or more over the next one below (the victims of a pause of the server, or of the client when a
 *    hedge went before it, spread between a fast path and its slow mode: in traces against `bench:adaptive`'s
 *    server they held the delay at 12–29 ms over a fast path topping at 6–9 ms, and every slow call's hedge
 *    waited that long); and below up to two stragglers: attempts each more than 1.25 times the next below (a lone
 *    slow read or a stall's victim, less than twice the fast path's top, held the delay at its latency while it
 *    was in the window).
 * 3. When q is +∞ (superseded attempts alone are more than a + t), the slowest answered latency.
 *
 * On a continuous distribution neither step 2 nor step 3 applies and the delay is step 1's
 * quantile.
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
 *   only the last 2 · `shiftRun` attempts: with more of the old ones, step 2's gap would pull the delay back to the
 *   old fast path until the new calls outnumbered its tolerance. (Those first attempts of the new regime to
 *   answer are its fastest, so for a few calls the delay understates it. Holding the delay at twice their
 *   slowest meanwhile saved one or two hedges per shift in simulation, and on a real server doubled the odd
 *   outlier, or a stall of the client taken for a shift, to 50–200 ms: not worth it.)
 *   A shift up may be a stall (a pause of the client or the server held the calls in flight): once most of the
 *   last 2 · `shiftRun` calls since are back under the delay from before the run, within 4 · `shiftRun` calls, it
 *   is taken back, and the window is what it was plus the calls since, without the stall's victims (the attempts
 *   of the run and after it that answered slower than that delay). A run of three, too short for a shift up, is
 *   put to the same test, the window kept as it is meanwhile.
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
  /** The window in arrival order (a ring of `recentCalls`); +∞ for a superseded attempt. */
  private readonly ring: Float64Array;
  private ringNext = 0;
  /** Attempts in the window. */
  private size = 0;
  /** The window's values in ascending order (`size` of them; the +∞ values last). */
  private readonly sorted: Float64Array;
  /** Attempts in a row that outlived the delay they were sent with. */
  private outlivedRun = 0;
  /** The delay in force when the current run of attempts outliving their delay began. */
  private delayBeforeRun = 0;
  private outcomes = 0;
  private shifts = 0;
  private stalls = 0;
  /** A possible stall (a shift up, or a run of STALL_RUN) the calls after it have not yet confirmed or ruled out. */
  private pendingStall: PossibleStall | undefined;
  /** Calls the shift detector looks back over (`shiftCalls`, at most the window). */
  private readonly shiftWindow: number;
  /** More of the last `shiftCalls` than this above the delay is a shift up. */
  private readonly upLimit: number;
  /** No more than this of the last `shiftCalls` above delay / shiftRatio is a shift down. */
  private readonly downLimit: number;

  constructor(
    initialMs: number,
    private readonly config: HedgeDelayTrackerConfig,
  ) {
    this.delay = clamp(initialMs, config.minMs, config.maxMs);
    this.ring = new Float64Array(config.recentCalls);
    this.sorted = new Float64Array(config.recentCalls);
    this.shiftWindow = Math.min(config.shiftCalls, config.recentCalls);
    const expected = config.exceedance * this.shiftWindow;
    this.upLimit = upThreshold(expected);
    this.downLimit = Math.floor(expected);
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
   * Stalls taken out of the window: shifts up, or runs of three attempts outliving their delay, after which most
   * of the calls were soon back under the delay before.
   */
  get stallsDetected(): number {
    return this.stalls;
  }

  /**
   * One call's first attempt: it was sent with hedging delay `delayUsedMs` and ran `latencyMs` before its first
   * response (`superseded` false), or was superseded by a hedge after running `latencyMs` (`superseded` true: its
   * latency is at least that). A superseded attempt that had not outlived its delay tells nothing and is ignored.
   */
  record(delayUsedMs: number, latencyMs: number, superseded: boolean): void {
    if (superseded && !(latencyMs > delayUsedMs)) {
      return;
    }
    this.outcomes += 1;
    this.outlivedRun = latencyMs > delayUsedMs ? this.outlivedRun + 1 : 0;
    if (this.outlivedRun === 1) {
      this.delayBeforeRun = this.delay;
    }
    const value = superseded ? Number.POSITIVE_INFINITY : latencyMs;
    this.push(value);
    const shift = this.size >= this.shiftWindow ? this.shift() : undefined;
    if (shift !== undefined) {
      this.shifts += 1;
      // A shift up may be a stall: keep the window as it was, without the stall's victims in the run that set the
      // shift off, until the next calls tell.
      this.pendingStall = shift === 'up' ? this.openStall() : undefined;
      this.outlivedRun = 0;
      // After a shift up the calls before it would hold the delay down (step 2's gap), so keep only the last few.
      this.keepLast(shift === 'up' ? Math.min(2 * this.config.shiftRun, this.size) : this.shiftWindow);
    } else if (this.pendingStall !== undefined) {
      this.confirm(this.pendingStall);
    } else if (this.outlivedRun === STALL_RUN && this.delay < this.config.maxMs) {
      // A burst too short for a shift up may still be a stall's victims: the same test, the window kept as it is.
      this.pendingStall = this.openStall();
    }
    if (this.outcomes >= this.config.minCalls) {
      this.delay = clamp(this.estimate(), this.config.minMs, this.config.maxMs);
    }
  }

  /**
   * A stall to be confirmed by the next calls: the window without the run of attempts that outlived their delay
   * (its victims, if a stall), and the delay from before the run (its first victims may have moved it already).
   */
  private openStall(): PossibleStall {
    const run = Math.min(this.outlivedRun, this.size);
    const delay = run > 0 ? this.delayBeforeRun : this.delay;
    return {
      before: concat(
        this.arrivals(0, this.size - run),
        notStallVictims(this.arrivals(this.size - run, run), delay),
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
    const last = Math.min(judged, this.size);
    let backUnder = 0;
    for (const x of this.arrivals(this.size - last, last)) {
      if (x <= stall.delay) {
        backUnder += 1;
      }
    }
    if (2 * backUnder > judged) {
      this.pendingStall = undefined;
      this.stalls += 1;
      const count = Math.min(stall.since, this.size);
      const values = concat(
        stall.before,
        notStallVictims(this.arrivals(this.size - count, count), stall.delay),
      );
      this.restart(values.subarray(Math.max(0, values.length - this.ring.length)));
    } else if (stall.since >= STALL_CALLS_MAX * this.config.shiftRun) {
      this.pendingStall = undefined;
    }
  }

  /** `count` of the window's attempts from the `from`-th oldest on, in arrival order (a copy). */
  private arrivals(from: number, count: number): Float64Array {
    const capacity = this.ring.length;
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      out[i] = this.ring[(this.ringNext - this.size + from + i + capacity) % capacity] as number;
    }
    return out;
  }

  /** The quantile of the window, lowered across the gap below it (see the class comment). */
  private estimate(): number {
    const n = this.size;
    const sorted = this.sorted;
    const { exceedance, gapRatio } = this.config;
    const allowed = Math.max(0, Math.floor(exceedance * (n + 1)) - 1);
    const limit = allowed + Math.ceil(GAP_TOLERANCE_SD * Math.sqrt(allowed + 1));
    let at = n - 1 - allowed;
    // The estimate's cluster and what lies above it (where a slow mode holds about the target share, its
    // attempts; by chance more than allowed): a crossing may hedge only a few more than those.
    let bottom = at;
    while (
      bottom > 0 &&
      n - bottom <= limit &&
      sameCluster(sorted[bottom - 1] as number, sorted[bottom] as number, gapRatio)
    ) {
      bottom -= 1;
    }
    const crossLimit = Math.min(limit, n - bottom + Math.floor(Math.sqrt(allowed + 1)));
    // Step 2: down to the next gap below the estimate's cluster, while few enough attempts lie above it.
    // (Once more than the limit lie above i, no gap further down can be crossed: the scan stops there.)
    for (let i = at; i > 0 && n - i <= crossLimit; i--) {
      if ((sorted[i - 1] as number) * gapRatio <= (sorted[i] as number)) {
        at = i - 1;
      }
    }
    // Step 2b: below a sparse top of the cluster, up to SPARSE_TOP attempts spread over a gap's ratio or more (the
    // most that qualify), with no more than the crossing's limit above the new estimate.
    for (let j = Math.min(SPARSE_TOP, at); j > 0; j--) {
      if (n - 1 - (at - j) <= crossLimit && (sorted[at - j] as number) * gapRatio <= (sorted[at] as number)) {
        at -= j;
        break;
      }
    }
    // Step 2c: below up to MAX_STRAGGLERS lone attempts at the top of the cluster.
    for (
      let k = 0;
      k < MAX_STRAGGLERS &&
      at > 0 &&
      n - at <= crossLimit &&
      (sorted[at - 1] as number) * STRAGGLER_RATIO < (sorted[at] as number);
      k++
    ) {
      at -= 1;
    }
    // The superseded attempts (+∞) are the last of the sorted window.
    const answered = upperBound(sorted, n, Number.MAX_VALUE);
    if (at >= answered) {
      // Step 3: superseded attempts alone are more than the limit.
      if (answered === 0) {
        return this.delay;
      }
      at = answered - 1;
    }
    return sorted[at] as number;
  }

  /** Whether the last attempts say the latencies moved away from the delay, up or down. */
  private shift(): 'up' | 'down' | undefined {
    if (this.outlivedRun >= this.config.shiftRun && this.delay < this.config.maxMs) {
      return 'up';
    }
    const m = this.shiftWindow;
    const lowered = this.delay / this.config.shiftRatio;
    let above = 0;
    let aboveLowered = 0;
    const ring = this.ring;
    // The last m attempts: ring[start, ringNext) or, wrapped, ring[start, capacity) and ring[0, ringNext).
    const start = this.ringNext - m;
    for (
      let i = start < 0 ? start + ring.length : start, k = 0;
      k < m;
      k++, i = i + 1 === ring.length ? 0 : i + 1
    ) {
      const x = ring[i] as number;
      if (x > this.delay) {
        above += 1;
      }
      if (x > lowered) {
        aboveLowered += 1;
      }
    }
    // At a bound of [minMs, maxMs] a shift past it changes nothing: no restart.
    if (above > this.upLimit && this.delay < this.config.maxMs) {
      return 'up';
    }
    return aboveLowered <= this.downLimit && this.delay > this.config.minMs ? 'down' : undefined;
  }

  /** Appends `value`, dropping the oldest attempt once the window is full. */
  private push(value: number): void {
    const capacity = this.ring.length;
    if (this.size === capacity) {
      this.remove(this.ring[this.ringNext] as number);
    }
    this.ring[this.ringNext] = value;
    this.ringNext = (this.ringNext + 1) % capacity;
    this.insert(value);
  }

  private insert(value: number): void {
    // After any equal values, and removed from the last of them: equal latencies (a stub, a coarse clock) move
    // nothing.
    const at = upperBound(this.sorted, this.size, value);
    this.sorted.copyWithin(at + 1, at, this.size);
    this.sorted[at] = value;
    this.size += 1;
  }

  private remove(value: number): void {
    const at = upperBound(this.sorted, this.size, value) - 1;
    this.sorted.copyWithin(at, at + 1, this.size);
    this.size -= 1;
  }

  /** Restarts the window from its last `m` attempts. */
  private keepLast(m: number): void {
    this.restart(this.arrivals(this.size - m, m));
  }

  /** Restarts the window from `values` (arrival order, at most the capacity). */
  private restart(values: Float64Array): void {
    const m = values.length;
    this.ring.set(values, 0);
    this.ringNext = m % this.ring.length;
    this.sorted.set(values, 0);
    this.sorted.subarray(0, m).sort();
    this.size = m;
  }
}

/**
 * How many of the last attempts may lie above the delay before it counts as a shift up: the expected number plus
 * six standard deviations of a Poisson count. At the expected 2.5 of 50 attempts that is more than 12: by chance
 * fewer than 6 in a million checks even with a fifth more attempts above the delay than its target, and the
 * detector checks after every call.
 * @internal
 */
export function upThreshold(expected: number): number {
  return Math.ceil(expected + 6 * Math.sqrt(expected));
}

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
 */
const STALL_RUN = 3;

/**
 * How far above the expected count of attempts above the delay (a) the count above a gap's bottom may be, in
 * standard deviations of that count (√(a + 1)): a slow mode holding exactly the target share holds more than a of
 * the window half the time by chance, and the gap's bottom must not be refused for that.
 */
const GAP_TOLERANCE_SD = 3;

/**
 * A straggler is an attempt at the top of a cluster more than this factor above the next one below it. A client
 * stall, a slow read or a GC pause leaves one now and then between a fast path and its slow mode, less than twice
 * the fast path's top, so in its cluster; it held the delay at its latency while it was in the window (2 s in
 * `bench:adaptive`).
 */
const STRAGGLER_RATIO = 1.25;
/**
 * Stragglers the delay may drop below, each one hedge more per window (and within the gap rule's tolerance). On a
 * continuous tail the top of the cluster is step 1's quantile, about 20 attempts from the window's top, and even a
 * Pareto tail with α = 0.5 leaves 25% between neighbours there only about one time in eight.
 */
const MAX_STRAGGLERS = 2;
/**
 * At most this many attempts at the top of a cluster are its sparse top, when together they span a gap's ratio
 * over the attempt below them: a pause's victims, a handful per pause. (With four, the crossing's limit, which
 * allows ⌊√(a + 1)⌋ = 4 above the slow mode, was the only bound left: on the simulation's main sweep two more
 * phases of 96 went over 0.06 extra load.) On a continuous tail the attempts near the estimate are dense, and the
 * crossing's limit bounds the hedges it adds: over 40,000 calls drawn from a log-normal (σ = 1) or a Pareto tail
 * (α = 1 or 0.5), the share of calls hedged moved by 0.002 at most.
 */
const SPARSE_TOP = 3;

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

/** Whether two neighbours of the sorted window are in one cluster: equal, or less than `gapRatio` apart. */
function sameCluster(lower: number, upper: number, gapRatio: number): boolean {
  return lower === upper || lower * gapRatio > upper;
}

/** The first index in `sorted[0, size)` whose value is above `value`. */
function upperBound(sorted: Float64Array, size: number, value: number): number {
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/**
 * A possible stall (a shift up, or a run of STALL_RUN attempts outliving their delay) waiting for the calls after
 * it: the window it would go back to, and the delay those calls are judged against.
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
  readonly minMs: number;
  readonly maxMs: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
