/**
 * The hedging delay of one method, tracked call by call so that it follows a shift of the latency distribution,
 * up or down, within a few hundred calls. Pure arithmetic on what the engine reports at each commit; no clock.
 *
 * The target: the smallest delay d at which a call's first attempt outlives d (and so sends a hedge) no more than
 * `exceedance` of the time (maxExtraLoad). Two rules, both driven by outcomes that are known exactly:
 *
 * 1. **Stochastic approximation in log space** (Robbins–Monro; "Frugal Streaming", Ma, Muthukrishnan and Sandler,
 *    2013). After each call, log d moves up by `step × (1 − exceedance)` when the first attempt outlived the delay
 *    it was sent with, and down by `step × exceedance` when it did not. The fixed point is where exactly
 *    `exceedance` of first attempts outlive d. "Did it outlive the delay" is known exactly even for a first attempt
 *    cancelled because a hedge won (it had run longer than the delay when the hedge was sent), so unlike a latency
 *    sketch fed with the cancelled attempts' time so far, the estimate is not biased by censoring. Multiplicative
 *    steps follow a shift of any size: with the default step of 0.05, ×1.05 per call that outlives the delay, and
 *    the step doubles for each further call in a row that does (see MAX_UP_RUN), so a shift up takes a handful of
 *    calls.
 * 2. **A lowering rule over the last `recentCalls` first attempts.** Where the latency distribution has a gap (a
 *    fast path and a slow mode, say), every delay inside the gap has the same exceedance, so rule 1 has no drift
 *    there: after a shift down it would stay where it was. But every latency below the delay is known exactly. So
 *    every `lowerEvery` calls: let d be the longest recent latency at or below the delay (superseded attempts count
 *    as slower than anything). If d is below delay / `lowerBelowRatio` (a real gap, not the sparse samples of a
 *    tail) and no more than `exceedance` × `recentCalls` recent attempts took longer than d, the delay drops to d:
 *    the recent calls show that this adds no hedges. It only ever lowers the delay, and while a shift up is under
 *    way the recent attempts above d number more than that, so it does not undo the upward steps of rule 1.
 *
 * Latencies and delays are in ms; the tracker keeps them within [minMs, maxMs].
 * @internal
 */
export class HedgeDelayTracker {
  /** log of the current delay. */
  private logDelay: number;
  /** The last `recentCalls` first-attempt latencies; +Infinity for one that was superseded (a lower bound only). */
  private readonly recent: Float64Array;
  private recentCount = 0;
  private recentNext = 0;
  /** Calls since the lowering rule last looked. */
  private sinceLowering = 0;
  private readonly upStep: number;
  private readonly downStep: number;
  /** Recent attempts allowed above the lowered delay: exceedance × recentCalls, rounded down. */
  private readonly allowedAbove: number;
  private outcomes = 0;
  /** Calls in a row that outlived the delay. */
  private upRun = 0;

  constructor(
    initialMs: number,
    private readonly config: HedgeDelayTrackerConfig,
  ) {
    this.logDelay = Math.log(clamp(initialMs, config.minMs, config.maxMs));
    this.upStep = config.step * (1 - config.exceedance);
    this.downStep = config.step * config.exceedance;
    this.recent = new Float64Array(config.recentCalls);
    this.allowedAbove = Math.floor(config.exceedance * config.recentCalls);
  }

  /** The current delay, ms. */
  get delayMs(): number {
    return Math.exp(this.logDelay);
  }

  /** Outcomes recorded so far. */
  get count(): number {
    return this.outcomes;
  }

  /**
   * One call's first attempt: it was sent with hedging delay `delayUsedMs` and ran `latencyMs` before its first
   * response (`superseded` false), or was superseded by a hedge after running `latencyMs` (`superseded` true: its
   * latency is at least that). A superseded attempt that had not outlived its delay tells nothing and is ignored.
   */
  record(delayUsedMs: number, latencyMs: number, superseded: boolean): void {
    const outlived = latencyMs > delayUsedMs;
    if (superseded && !outlived) {
      return;
    }
    this.outcomes += 1;
    const { minMs, maxMs } = this.config;
    if (outlived) {
      // Consecutive calls that outlive the delay double the step each time (see MAX_UP_RUN): a shift up.
      // A doubled step goes no higher than the latency this call showed: a shift is followed, and a stall of the
      // client (every call in flight outliving the delay at once) does not throw the delay past what it measured.
      this.upRun = Math.min(this.upRun + 1, MAX_UP_RUN);
      const step = this.logDelay + this.upStep;
      const doubled = Math.min(
        this.logDelay + this.upStep * 2 ** (this.upRun - 1),
        Math.max(step, Math.log(latencyMs)),
      );
      this.logDelay = Math.min(Math.log(maxMs), doubled);
    } else {
      this.upRun = 0;
      this.logDelay = Math.max(Math.log(minMs), this.logDelay - this.downStep);
    }
    this.recent[this.recentNext] = superseded ? Number.POSITIVE_INFINITY : latencyMs;
    this.recentNext = (this.recentNext + 1) % this.recent.length;
    if (this.recentCount < this.recent.length) {
      this.recentCount += 1;
    }
    this.sinceLowering += 1;
    if (this.recentCount === this.recent.length && this.sinceLowering >= this.config.lowerEvery) {
      this.sinceLowering = 0;
      this.lowerIntoGap();
    }
  }

  /** Rule 2: drop the delay into the gap below it, when the recent attempts show one. */
  private lowerIntoGap(): void {
    const delay = Math.exp(this.logDelay);
    let below = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.recent.length; i++) {
      const x = this.recent[i] as number;
      if (x <= delay && x > below) {
        below = x;
      }
    }
    if (!(below * this.config.lowerBelowRatio < delay)) {
      return;
    }
    let above = 0;
    for (let i = 0; i < this.recent.length; i++) {
      if ((this.recent[i] as number) > below) {
        above += 1;
      }
    }
    if (above <= this.allowedAbove) {
      this.logDelay = Math.log(Math.max(this.config.minMs, below));
    }
  }
}

/**
 * The up step doubles with each consecutive call that outlives the delay, up to 2^(5 − 1) = 16 times the step.
 * At the target share (5%) two in a row happen for 0.25% of calls, so this leaves the steady state alone; after a
 * shift up, when every call outlives the delay, it crosses a ×8 rise in 6 calls instead of 45, so the calls that
 * cross the lagging delay spend a handful of hedges instead of more than the hedge budget's reserve (30), which
 * would then stay empty for its ttl (demand equals deposits at the target). An overshoot is undone by rule 2.
 */
const MAX_UP_RUN = 5;

/** Settings of a {@link HedgeDelayTracker}. @internal */
export interface HedgeDelayTrackerConfig {
  /** Target share of first attempts that outlive the delay (maxExtraLoad), in (0, 1). */
  readonly exceedance: number;
  /** Gain of the log-space steps. */
  readonly step: number;
  /** Calls the lowering rule looks back over. */
  readonly recentCalls: number;
  /** How often (in calls) the lowering rule looks. */
  readonly lowerEvery: number;
  /** The lowering rule acts when the recent quantile is below delay / lowerBelowRatio. */
  readonly lowerBelowRatio: number;
  readonly minMs: number;
  readonly maxMs: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
