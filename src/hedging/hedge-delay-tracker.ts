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
  private outcomes = 0;
  private shifts = 0;
  private readonly scratch: Float64Array;
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
    this.scratch = new Float64Array(Math.min(config.shiftCalls, config.recentCalls));
    const expected = config.exceedance * this.scratch.length;
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
    this.push(superseded ? Number.POSITIVE_INFINITY : latencyMs);
    const shift = this.size >= this.scratch.length ? this.shift() : undefined;
    if (shift !== undefined) {
      this.shifts += 1;
      this.outlivedRun = 0;
      // After a shift up the calls before it would hold the delay down (step 2's gap), so keep only the last few.
      this.keepLast(shift === 'up' ? Math.min(2 * this.config.shiftRun, this.size) : this.scratch.length);
    }
    if (this.outcomes >= this.config.minCalls) {
      this.delay = clamp(this.estimate(), this.config.minMs, this.config.maxMs);
    }
  }

  /** The quantile of the window, lowered across the gap below it (see the class comment). */
  private estimate(): number {
    const n = this.size;
    const sorted = this.sorted;
    const { exceedance, gapRatio } = this.config;
    const allowed = Math.max(0, Math.floor(exceedance * (n + 1)) - 1);
    const limit = allowed + Math.ceil(GAP_TOLERANCE_SD * Math.sqrt(allowed + 1));
    let at = n - 1 - allowed;
    // Step 2: down to the next gap below the estimate's cluster, while few enough attempts lie above it.
    // (Once more than the limit lie above i, no gap further down can be crossed: the scan stops there.)
    for (let i = at; i > 0 && n - i <= limit; i--) {
      if ((sorted[i - 1] as number) * gapRatio <= (sorted[i] as number)) {
        at = i - 1;
      }
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
    const m = this.scratch.length;
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
    const capacity = this.ring.length;
    for (let i = 0; i < m; i++) {
      this.scratch[i] = this.ring[(this.ringNext - m + i + capacity) % capacity] as number;
    }
    this.ring.set(this.scratch.subarray(0, m), 0);
    this.ringNext = m % capacity;
    this.sorted.set(this.scratch.subarray(0, m), 0);
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
 * How far above the expected count of attempts above the delay (a) the count above a gap's bottom may be, in
 * standard deviations of that count (√(a + 1)): a slow mode holding exactly the target share holds more than a of
 * the window half the time by chance, and the gap's bottom must not be refused for that.
 */
const GAP_TOLERANCE_SD = 3;

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
