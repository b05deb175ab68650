/**
 * Whether an answer came together with the one before it, where that is rare enough to mean something: the
 * signature of a pause. A pause of the client or the server holds every call in flight, and they all answer in the
 * same moment when it ends; otherwise, at a few hundred calls a second, answers are spread out. At a high call
 * rate (or under a frozen clock) answers come together by chance all the time, and then none counts as together:
 * the caller's test would take out a chance share of a continuous tail and bias its quantile low.
 *
 * Keeps an exponentially weighted share of the answers that came within {@link TOGETHER_MS} of the one before.
 * Pure arithmetic: the times are given.
 * @internal
 */
export class AnswersTogether {
  private lastAtMs = Number.NaN;
  /** Weighted share of the recent answers that came within TOGETHER_MS of the one before. */
  private share = 0;

  /**
   * One answer at `atMs` (NaN: not known, and never together). Returns whether it came within
   * {@link TOGETHER_MS} of the previous one while no more than {@link CHANCE_SHARE_MAX} of the recent answers did.
   */
  note(atMs: number): boolean {
    const close = Math.abs(atMs - this.lastAtMs) <= TOGETHER_MS;
    const rare = this.share <= CHANCE_SHARE_MAX;
    this.share += ((close ? 1 : 0) - this.share) * SHARE_WEIGHT;
    this.lastAtMs = atMs;
    return close && rare;
  }
}

/**
 * Answers this close (ms) came together. The clock the engine reads is in whole milliseconds at best, and the
 * answers a pause held arrive in one turn of the event loop or the next: in `bench:adaptive`'s traces, a pause's
 * victims answered in the same millisecond.
 */
export const TOGETHER_MS = 1;

/**
 * Answers count as together only while no more than this share of the recent ones came together: then two in a row
 * come together by chance less than one time in five. (In `bench:adaptive`'s traces, at 200 calls/s: 0.04–0.08 of
 * the answers in regime A, 0.23–0.26 in regime B, whose latencies spread over 10–30 ms, so there it is mostly off;
 * at 2,000 calls/s answers are 0.5 ms apart on average, and most come together.)
 */
export const CHANCE_SHARE_MAX = 0.2;

/** Weight of each answer in the share: about the last fifty answers. */
const SHARE_WEIGHT = 1 / 50;
