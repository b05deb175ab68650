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

/**
 * Which limiter counts a cancel. The server's guard counts resets per connection, and grpc-js puts the channels of
 * every client of one target (with the same options) on one connection, so the engine names the connection by its
 * call's target: what the first attempt's `getPeer()` says before it starts (`dns:localhost:50051`). @internal
 */
export interface CancelLimits {
  /** The limiter of the connection to `target`. */
  forTarget(target: string): CancelLimiter;
}
