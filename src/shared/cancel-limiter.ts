/**
 * Keeps a client's cancellations of attempts (each an HTTP/2 RST_STREAM) under a server's rapid-reset guard.
 * `CancelRateLimiter` (src/hedging) implements it; the engine knows only this shape. @internal
 */
export interface CancelLimiter {
  /** May one more attempt be cancelled now? True spends from the limit. */
  tryCancel(): boolean;
  /** A cancel made whatever the limit (the application's, the deadline's): it spends from the limit too. */
  noteCancel?(): void;
  /** Runs `cancel` once the limit allows it (spending it); returns a function that withdraws the request. */
  whenAllowed?(cancel: () => void): () => void;
  /** How long an attempt left running instead is allowed when its call has no deadline, ms. */
  readonly loserCapMs: number;
}
