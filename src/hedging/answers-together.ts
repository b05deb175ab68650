/**
 * Whether answers came together, where that is rare enough to mean something: the signature of a pause. A pause of
 * the client or the server holds every call in flight, and they all answer in the same moment when it ends;
 * otherwise, at a few hundred calls a second, answers are spread out. At a high call rate (or under a frozen clock)
 * answers come together by chance all the time, and then none counts as together: the caller's test would take out
 * a chance share of a continuous tail and bias its quantile low.
 *
 * Keeps the run of answers in a row that each came within {@link TOGETHER_MS} of the one before ({@link run}), and
 * an exponentially weighted share p of the recent answers that did. A run of k is taken to come by chance about
 * p^(k − 1) of the time, and counts when that is at most {@link CHANCE_SHARE_MAX}: where answers are spread out
 * (p ≤ 0.2), two together count; where a quarter come with the one before (regime B of `bench:adaptive`, whose fast
 * path spreads over 10–30 ms), three; never above {@link BURST_SHARE_MAX}. Pure arithmetic: the times are given.
 * @internal
 */
export class AnswersTogether {
  private lastAtMs = Number.NaN;
  /** Weighted share of the recent answers that came within TOGETHER_MS of the one before. */
  private share = 0;
  /** Answers in a row, the last one included, that each came within TOGETHER_MS of the one before. */
  private together = 0;

  /**
   * One answer at `atMs` (NaN: not known, and never together). Returns whether it came within
   * {@link TOGETHER_MS} of the previous one, closing a run of answers together that chance rarely makes at the
   * recent share.
   */
  note(atMs: number): boolean {
    const close = Math.abs(atMs - this.lastAtMs) <= TOGETHER_MS;
    this.together = close ? this.together + 1 : 1;
    const rare =
      close && this.share <= BURST_SHARE_MAX && this.share ** (this.together - 1) <= CHANCE_SHARE_MAX;
    this.share += ((close ? 1 : 0) - this.share) * SHARE_WEIGHT;
    this.lastAtMs = atMs;
    return rare;
  }

  /** Answers in a row, the last one noted included, that each came within TOGETHER_MS of the one before (1: alone). */
  get run(): number {
    return this.together;
  }
}

/**
 * Answers this close (ms) came together. The clock the engine reads is in whole milliseconds at best, and the
 * answers a pause held arrive in one turn of the event loop or the next: in `bench:adaptive`'s traces, a pause's
 * victims answered in the same millisecond.
 */
export const TOGETHER_MS = 1;

/**
 * A run of answers together counts when chance makes one that long no more than this often (the recent share to
 * the power of its length less one): two together while no more than a fifth of the recent answers came with the one
 * before. (In `bench:adaptive`'s traces, at 200 calls/s: 0.04–0.08 of the answers in regime A, 0.23–0.26 in regime
 * B, where it takes three; at 2,000 calls/s answers are 0.5 ms apart on average, and most come together.)
 */
export const CHANCE_SHARE_MAX = 0.2;

/**
 * Above this share of answers together, no run counts, however long: under a frozen clock, or at thousands of calls
 * a second, every answer comes with the one before and a run is as long as the traffic.
 */
export const BURST_SHARE_MAX = 0.5;

/** Weight of each answer in the share: about the last fifty answers. */
const SHARE_WEIGHT = 1 / 50;
