import type { CancelLimits } from '../shared/cancel-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { HedgeDelaySource } from '../shared/hedge-delay-source.js';
import type { ByTarget } from '../shared/per-target.js';
import type { RetryGate } from '../shared/retry-gate.js';
import type { JitterStrategy } from './backoff.js';
import type { BufferPool } from './buffer-pool.js';
import type { RetryInfoPolicy } from './server-hint.js';

/**
 * What the calls of one interceptor share: the buffer pool, the retry gate, the sources of time and randomness,
 * and the settings that hold for every call.
 * @internal
 */
export interface RetryingCallContext {
  readonly pool: BufferPool;
  /** The `gate` option: one gate for every call. */
  readonly gate: RetryGate | undefined;
  /** The service config's `retryThrottling`, when no `gate` was given: a throttle per target (A6: per server name). */
  readonly throttles?: ByTarget<RetryGate> | undefined;
  readonly clock: Clock;
  readonly random: () => number;
  readonly jitter: JitterStrategy;
  /** End at once with the last status rather than start a backoff that would outlast the deadline. */
  readonly deadlineAware: boolean;
  /** Resends are checked against what was written (see `ReplayBuffer`). */
  readonly checkResends: boolean;
  /** How RetryInfo hints in status details are honoured; undefined: ignored. */
  readonly retryInfo: RetryInfoPolicy | undefined;
  /** Adaptive hedging delays and their budget, one for every call; undefined: see `adaptivePerTarget`. */
  readonly adaptive: HedgeDelaySource | undefined;
  /**
   * The interceptor's own adaptive hedging, one per target. With neither this nor `adaptive`: the config's
   * hedgingDelay, no budget.
   */
  readonly adaptivePerTarget?: ByTarget<HedgeDelaySource> | undefined;
  /**
   * Keep cancellations of losing attempts under the server's rapid-reset guard, one limiter per connection;
   * undefined: cancel every loser.
   */
  readonly cancelLimits: CancelLimits | undefined;
  nextCallId(): number;
  /**
   * Told when a call that makes a second attempt came with `grpc-previous-rpc-attempts` already in its headers: a
   * retry layer runs outside this one (the interceptor reports it once).
   */
  onNestedRetries(): void;
  /**
   * Told when a failed attempt's trailers show that a retry layer under this one retried it (see `retriedBelow`):
   * the interceptor reports it once.
   */
  onChannelRetries(): void;
  /**
   * Told when a retry or hedge was not sent because a request message changed after it was written (the
   * interceptor reports it once).
   */
  onRequestChanged(): void;
  /**
   * Told when a retry or hedge was not sent because the request did not fit the replay buffer (the interceptor
   * reports it once).
   */
  onReplayBufferFull(): void;
}
