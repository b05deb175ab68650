import type { RetryGate } from './retry-gate.js';

/** The delay before a call's next hedge, as a {@link HedgeDelaySource} chooses it. */
export interface HedgingDelayChoice {
  /** Delay before the next hedge, ms. */
  readonly delayMs: number;
  /** True when it came from observed latency; false while the configured hedgingDelay is used. */
  readonly adaptive: boolean;
}

/**
 * Where a hedging call gets the delay between its hedges when it does not simply use the config's
 * `hedgingDelay`, what it tells it back at commit, and the budget that caps its hedges. `AdaptiveHedging`
 * (src/hedging) implements it; the engine knows only this shape. @internal
 */
export interface HedgeDelaySource {
  /** The delay before the next hedge of a call to `method`, or the configured one while nothing is learned. */
  delayFor(method: string, configuredDelayMs: number): HedgingDelayChoice;
  /**
   * At the commit of a call to `method`: its first attempt, sent with hedging delay `delayUsedMs`, got its first
   * response after `latencyMs`, or (`superseded`) was still running after `latencyMs` when a hedge won.
   */
  recordOutcome(method: string, delayUsedMs: number, latencyMs: number, superseded?: boolean): void;
  /**
   * A call to `method` answered without an outcome to record (its first attempt had failed, or answered while
   * its hedge waited for pending I/O, or the server answered an attempt with a status alone, Trailers-Only):
   * hedges held behind a stall are released, as at {@link recordOutcome}.
   */
  answered?(method: string): void;
  /**
   * A hedge of a call to `method` came due (asked once per hedge): true to hold it until the method's next answer
   * ({@link whenAnswered}), because its calls stall.
   */
  holdHedge?(method: string): boolean;
  /** Calls `release` once at the next answer of a call to `method`; returns a function that forgets it. */
  whenAnswered?(method: string, release: () => void): () => void;
  /**
   * A gate that counts hedges only, undefined for none: asked before the interceptor's gate while an attempt is in
   * flight (and given back what it allowed, `refund`, when that gate refuses), after it when none is.
   */
  readonly budget: (RetryGate & { spendIfHeld?(): void; refund?(): void }) | undefined;
}
