/**
 * Counters summed over a sliding time window, kept in equal bins (the technique of Finagle's WindowedAdder and
 * grpc-go's lookback). A value added at time t counts until the bin that holds t has left the window, i.e. for
 * between `windowMs - binMs` and `windowMs`.
 *
 * Pure and clock-free: every method takes the current time in ms, so it runs the same in real and virtual time.
 * @internal
 */
export class SlidingWindow {
  readonly binMs: number;
  private readonly sums: Float64Array[];
  /** Index (time / binMs) of the most recent bin written or expired. */
  private head = Number.NEGATIVE_INFINITY;
  /**
   * Bins added to `time / binMs`: grows when the clock steps back by a whole window or more, so that the time the
   * window counts in carries on from where it was instead of standing still until the clock is back.
   */
  private shift = 0;
  private readonly totals: Float64Array;

  /**
   * @param windowMs Length of the window.
   * @param bins Number of bins it is divided into (more bins: smoother expiry, more memory).
   * @param counters How many counters to keep (e.g. requests and accepts).
   */
  constructor(
    readonly windowMs: number,
    readonly bins: number,
    readonly counters: number,
  ) {
    this.binMs = windowMs / bins;
    this.sums = Array.from({ length: counters }, () => new Float64Array(bins));
    this.totals = new Float64Array(counters);
  }

  /** Add `amount` to counter `counter` at time `nowMs`. */
  add(nowMs: number, counter: number, amount: number): void {
    const slot = this.advance(nowMs);
    this.sums[counter]![slot] = this.sums[counter]![slot]! + amount;
    this.totals[counter] = this.totals[counter]! + amount;
  }

  /** The sum of counter `counter` over the window ending at `nowMs`. */
  sum(nowMs: number, counter: number): number {
    this.advance(nowMs);
    return this.totals[counter]!;
  }

  /** Drop every bin that left the window by `nowMs`; returns the slot of the current bin. */
  private advance(nowMs: number): number {
    let index = Math.floor(nowMs / this.binMs) + this.shift;
    if (index <= this.head - this.bins) {
      // The clock stepped back by a window or more (an NTP correction, a restored VM): what was counted is as recent
      // as it was, and leaves the window once the clock has run on by a window from here. Without this shift nothing
      // would expire until the clock was back where it had been, an hour later for a step of an hour.
      this.shift += this.head - index;
      index = this.head;
    }
    if (this.head === Number.NEGATIVE_INFINITY) {
      this.head = index;
    } else if (index > this.head) {
      const steps = Math.min(index - this.head, this.bins);
      for (let i = 1; i <= steps; i++) {
        const slot = mod(this.head + i, this.bins);
        for (let c = 0; c < this.counters; c++) {
          const bins = this.sums[c]!;
          this.totals[c] = this.totals[c]! - bins[slot]!;
          bins[slot] = 0;
        }
      }
      this.head = index;
    }
    // A clock that steps back by less than a window (index < head) writes into the current bin.
    return mod(this.head, this.bins);
  }
}

function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}
