/**
 * Whether one method's calls stall, as its hedges see it, and the hedges held meanwhile. Pure bookkeeping; no clock.
 *
 * A hedge comes due when its call's first attempt outlived the hedging delay. In steady traffic the method's other
 * calls keep answering between two hedges coming due. When a second hedge comes due with no call of the method
 * having answered since the first one did, every call in flight is waiting behind the same thing: a pause of the
 * server (a GC pause), of the connection, or of the network. A hedge sent then goes the same way (a hedging call's
 * attempts share the channel, and with pick_first the server) and answers after the stall ends, like the attempt
 * it was meant to overtake: it adds load to a server that is not answering, and saves nothing. So that hedge, and
 * every one coming due after it, waits for the method's next answer, and goes then if its call is still waiting.
 *
 * With several servers behind the channel (round_robin), one server's stall leaves the others answering: nothing
 * is held, and the hedges go to the servers that answer. Two slow calls in a row with no answer between them are
 * the one case a stall is mistaken for: in steady traffic some other call answers between them.
 * @internal
 */
export class StallHold {
  /** Hedges that came due since a call of the method last answered. */
  private dueSinceAnswer = 0;
  /** Releases of the hedges held until the next answer. */
  private readonly held = new Set<() => void>();

  /**
   * A hedge came due (tell once per hedge). True when it comes due behind a stall, {@link HOLD_AFTER_DUE} or more
   * since the last answer: hold it until the next one ({@link untilAnswer}).
   */
  hedgeDue(): boolean {
    this.dueSinceAnswer += 1;
    return this.dueSinceAnswer >= HOLD_AFTER_DUE;
  }

  /** Hedges held now. */
  get heldCount(): number {
    return this.held.size;
  }

  /**
   * Calls `release` at the method's next answer, once; returns a function that forgets it (for a call that
   * committed or ended meanwhile).
   */
  untilAnswer(release: () => void): () => void {
    // An entry of its own, so that the same function held twice is released twice and forgotten once.
    const entry = (): void => release();
    this.held.add(entry);
    return () => {
      this.held.delete(entry);
    };
  }

  /** A call of the method answered: the stall is over, and every held hedge is released (in the order held). */
  answered(): void {
    this.dueSinceAnswer = 0;
    if (this.held.size === 0) {
      return;
    }
    const released = [...this.held];
    this.held.clear();
    for (const release of released) {
      release();
    }
  }
}

/**
 * A hedge is held when this many have come due since the method's last answer, itself included: the first one due
 * in a stall goes (alone, it is a slow call like any other), the second shows that nothing answers. In
 * `simulate:adaptive` with the server stalling 15–30 ms every 0.7–1 s (72 phases), holding from the second cut the
 * extra load from 0.071 to 0.059 on average (phases over 0.06: 57 → 23); from the third, to 0.063 (52).
 */
export const HOLD_AFTER_DUE = 2;
