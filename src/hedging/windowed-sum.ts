/**
 * A sum of amounts added over the last `windowMs`, kept in `slots` buckets: an amount expires between
 * `windowMs × (1 − 1/slots)` and `windowMs` after it was added. Time is the `now` the caller passes (no timers).
 * @internal
 */
export class WindowedSum {
  private readonly sums: number[];
  /** The slot number (`floor(now / slotMs)`) each ring entry holds; -1 for none. */
  private readonly slotOf: number[];
  private readonly slotMs: number;
  private total = 0;
  private lastSlot = Number.NEGATIVE_INFINITY;

  constructor(
    windowMs: number,
    private readonly slots: number,
  ) {
    this.slotMs = windowMs / slots;
    this.sums = Array.from({ length: slots }, () => 0);
    this.slotOf = Array.from({ length: slots }, () => -1);
  }

  /** Add `amount` (may be negative) at time `now`. */
  add(amount: number, now: number): void {
    const slot = this.expire(now);
    const index = slot % this.slots;
    this.sums[index] = (this.sums[index] as number) + amount;
    this.slotOf[index] = slot;
    this.total += amount;
  }

  /** The sum of what was added within the window ending at `now`. */
  sum(now: number): number {
    this.expire(now);
    return this.total;
  }

  /** Drop the slots that left the window; returns the current slot number. */
  private expire(now: number): number {
    const slot = Math.max(0, Math.floor(now / this.slotMs));
    if (slot === this.lastSlot) return slot;
    this.lastSlot = slot;
    for (let i = 0; i < this.slots; i++) {
      const held = this.slotOf[i] as number;
      if (held >= 0 && (held <= slot - this.slots || held > slot)) {
        this.total -= this.sums[i] as number;
        this.sums[i] = 0;
        this.slotOf[i] = -1;
      }
    }
    return slot;
  }
}
