/** The delays `createRetryMetrics`' `hedging_delay` gauge reads from the retry interceptor's events. */

/** Most method and target pairs whose adaptive delay the events' gauge reports; the one seen longest ago goes. */
export const MAX_LEARNED_DELAYS = 1_000;

/**
 * The adaptive delay each method and target last scheduled a hedge with (`hedge-scheduled`, reason
 * `adaptive-delay`): what the `hedging_delay` gauge reports when no AdaptiveHedging is given.
 */
export class LearnedDelays {
  private readonly byKey = new Map<string, { method: string; target: string | undefined; delayMs: number }>();

  set(method: string, target: string | undefined, delayMs: number): void {
    const key = `${method}\n${target ?? ''}`;
    if (!this.byKey.delete(key) && this.byKey.size >= MAX_LEARNED_DELAYS) {
      const oldest = this.byKey.keys().next();
      if (!oldest.done) {
        this.byKey.delete(oldest.value);
      }
    }
    this.byKey.set(key, { method, target, delayMs });
  }

  entries(): Iterable<{
    readonly method: string;
    readonly target: string | undefined;
    readonly delayMs: number;
  }> {
    return this.byKey.values();
  }
}
