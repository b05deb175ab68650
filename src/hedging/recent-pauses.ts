/**
 * The last few pauses of the client's event loop, as the engine sees them (a hedge timer that fired late), and
 * whether one of them made most of a call's latency. Pure; times in the engine's clock (ms).
 * @internal
 */
export class RecentPauses {
  private readonly from: Float64Array;
  private readonly to: Float64Array;
  private next = 0;
  private size = 0;

  /** @param capacity Pauses remembered (the oldest is forgotten first). */
  constructor(capacity = 16) {
    this.from = new Float64Array(capacity);
    this.to = new Float64Array(capacity);
  }

  /** A pause from `fromMs` to `toMs`. Overlapping reports of one pause (several late timers) merge. */
  add(fromMs: number, toMs: number): void {
    const last = (this.next - 1 + this.from.length) % this.from.length;
    if (this.size > 0 && fromMs <= (this.to[last] as number) && toMs >= (this.from[last] as number)) {
      this.from[last] = Math.min(this.from[last] as number, fromMs);
      this.to[last] = Math.max(this.to[last] as number, toMs);
      return;
    }
    this.from[this.next] = fromMs;
    this.to[this.next] = toMs;
    this.next = (this.next + 1) % this.from.length;
    this.size = Math.min(this.size + 1, this.from.length);
  }

  /** Whether the pauses overlapping [startMs, endMs] cover more than half of it. */
  heldMost(startMs: number, endMs: number): boolean {
    const length = endMs - startMs;
    if (!(length > 0)) {
      return false;
    }
    let held = 0;
    for (let i = 0; i < this.size; i++) {
      const overlap = Math.min(endMs, this.to[i] as number) - Math.max(startMs, this.from[i] as number);
      if (overlap > 0) {
        held += overlap;
      }
    }
    return 2 * held > length;
  }
}
