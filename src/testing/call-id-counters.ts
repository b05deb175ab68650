/**
 * The attempt counter of each call id, bounded: beyond the `limit` most recently seen call ids, the oldest with no
 * attempt in flight is forgotten (its next attempt would count from 1 again). Retries of one call come within
 * seconds, so a bound far above the calls in flight at once never renumbers a call's attempts.
 */

/** The default bound on call ids tracked (`maxTrackedCallIds`). */
export const DEFAULT_MAX_TRACKED_CALL_IDS = 100_000;

export class CallIdCounters {
  /** Attempts seen per call id, in order of the call id's latest attempt, oldest first. */
  private readonly recent = new Map<string, number>();
  /** Attempts seen per call id the test pinned (a script it registered): never forgotten on their own. */
  private readonly pinned = new Map<string, number>();
  /** Attempts in flight per call id (only call ids with one). */
  private readonly live = new Map<string, number>();

  /**
   * @param limit The most call ids tracked (beyond it the least recent one with no attempt in flight is forgotten).
   * @param onForget Told each call id forgotten because of the bound (not by `forget` or `clear`).
   */
  constructor(
    private readonly limit: number = Number.POSITIVE_INFINITY,
    private readonly onForget?: (callId: string) => void,
  ) {}

  /**
   * Counts a new attempt of `callId` and returns its number; the attempt is in flight until {@link settle} is
   * called for it.
   */
  next(callId: string, pinned = false): number {
    const map = pinned ? this.pinned : this.recent;
    const attempt = (map.get(callId) ?? 0) + 1;
    if (!pinned) {
      map.delete(callId); // moved to the newest end
    }
    map.set(callId, attempt);
    this.live.set(callId, (this.live.get(callId) ?? 0) + 1);
    if (!pinned) {
      this.trim();
    }
    return attempt;
  }

  /** An attempt of `callId` counted by {@link next} is no longer in flight. */
  settle(callId: string): void {
    const live = this.live.get(callId);
    if (live === undefined) {
      return;
    }
    if (live > 1) {
      this.live.set(callId, live - 1);
    } else {
      this.live.delete(callId);
    }
  }

  /** Number of call ids tracked. */
  get size(): number {
    return this.recent.size + this.pinned.size;
  }

  /** Forgets the counter of `callId` (its attempts in flight still settle). */
  forget(callId: string): void {
    this.recent.delete(callId);
    this.pinned.delete(callId);
  }

  /** Forgets every counter (attempts in flight still settle). */
  clear(): void {
    this.recent.clear();
    this.pinned.clear();
  }

  private trim(): void {
    // Each pass either forgets the least recent call id or moves one with an attempt in flight to the newest end
    // (it is recent anyway); at most one pass per tracked call id, so that a bound below the call ids in flight
    // cannot spin.
    let passes = this.recent.size;
    while (this.recent.size > this.limit && passes-- > 0) {
      const oldest = this.recent.entries().next().value;
      if (oldest === undefined) {
        return;
      }
      const [callId, attempts] = oldest;
      this.recent.delete(callId);
      if (this.live.has(callId)) {
        this.recent.set(callId, attempts);
      } else {
        this.onForget?.(callId);
      }
    }
  }
}
