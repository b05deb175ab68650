/**
 * The last first attempts of one method, as the hedging delay reads them: a ring in arrival order (for the shift
 * detector and the stall test, which look at the latest calls) and the same values kept in ascending order (for
 * the order statistics of the estimate), both fixed-size typed arrays, so recording a call allocates nothing.
 * A value is an attempt's latency in ms, or +∞ for one a hedge superseded; +∞ sorts last.
 * @internal
 */
export class AttemptWindow {
  /** The window in arrival order (a ring of `capacity`). */
  private readonly ring: Float64Array;
  private ringNext = 0;
  /** Attempts in the window. */
  private filled = 0;
  /** The window's values in ascending order (`filled` of them). */
  private readonly ascending: Float64Array;

  constructor(capacity: number) {
    this.ring = new Float64Array(capacity);
    this.ascending = new Float64Array(capacity);
  }

  /** The most attempts the window holds. */
  get capacity(): number {
    return this.ring.length;
  }

  /** Attempts in the window. */
  get size(): number {
    return this.filled;
  }

  /** The window's values in ascending order: read only the first {@link size}, and do not write. */
  get sorted(): Float64Array {
    return this.ascending;
  }

  /** Appends `value`, dropping the oldest attempt once the window is full. */
  push(value: number): void {
    const capacity = this.ring.length;
    if (this.filled === capacity) {
      this.remove(this.ring[this.ringNext] as number);
    }
    this.ring[this.ringNext] = value;
    this.ringNext = (this.ringNext + 1) % capacity;
    this.insert(value);
  }

  /** `count` of the window's attempts from the `from`-th oldest on, in arrival order (a copy). */
  arrivals(from: number, count: number): Float64Array {
    const capacity = this.ring.length;
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      out[i] = this.ring[(this.ringNext - this.filled + from + i + capacity) % capacity] as number;
    }
    return out;
  }

  /**
   * How many of the last `m` attempts (at most the window's size) lie above `high`, and how many above `low`, in one
   * pass: written into `counts` (the caller's, reused from call to call).
   */
  countLastAbove(m: number, high: number, low: number, counts: AboveCounts): void {
    const ring = this.ring;
    let aboveHigh = 0;
    let aboveLow = 0;
    // The last m attempts: ring[start, ringNext) or, wrapped, ring[start, capacity) and ring[0, ringNext).
    const start = this.ringNext - m;
    for (
      let i = start < 0 ? start + ring.length : start, k = 0;
      k < m;
      k++, i = i + 1 === ring.length ? 0 : i + 1
    ) {
      const x = ring[i] as number;
      if (x > high) {
        aboveHigh += 1;
      }
      if (x > low) {
        aboveLow += 1;
      }
    }
    counts.high = aboveHigh;
    counts.low = aboveLow;
  }

  /** Restarts the window from its last `m` attempts. */
  keepLast(m: number): void {
    this.restart(this.arrivals(this.filled - m, m));
  }

  /** Restarts the window from `values` (arrival order, at most the capacity). */
  restart(values: Float64Array): void {
    const m = values.length;
    this.ring.set(values, 0);
    this.ringNext = m % this.ring.length;
    this.ascending.set(values, 0);
    this.ascending.subarray(0, m).sort();
    this.filled = m;
  }

  private insert(value: number): void {
    // After any equal values, and removed from the last of them: equal latencies (a stub, a coarse clock) move
    // nothing.
    const at = upperBound(this.ascending, this.filled, value);
    this.ascending.copyWithin(at + 1, at, this.filled);
    this.ascending[at] = value;
    this.filled += 1;
  }

  private remove(value: number): void {
    const at = upperBound(this.ascending, this.filled, value) - 1;
    this.ascending.copyWithin(at, at + 1, this.filled);
    this.filled -= 1;
  }
}

/** What {@link AttemptWindow.countLastAbove} counts. @internal */
export interface AboveCounts {
  high: number;
  low: number;
}

/**
 * The first index in `sorted[0, size)` whose value is above `value`.
 * @internal
 */
export function upperBound(sorted: Float64Array, size: number, value: number): number {
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
