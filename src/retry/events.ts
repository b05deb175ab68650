/**
 * Typed events of the retry interceptor, delivered to the `onEvent` option. Every event carries the gRPC
 * method path (`/pkg.Service/Method`) and a per-interceptor call number, so a listener can follow one call.
 */

/** Why an attempt was sent. */
export type AttemptKind = 'original' | 'retry' | 'hedge';

interface EventBase {
  /** Full method path, e.g. `/helloworld.Greeter/SayHello`. */
  readonly method: string;
  /** Sequence number of the logical call within this interceptor (1, 2, ...). */
  readonly callId: number;
}

/** An attempt is being sent. */
export interface AttemptStartEvent extends EventBase {
  readonly type: 'attempt-start';
  /** 1-based attempt number within the call. */
  readonly attempt: number;
  readonly kind: AttemptKind;
}

/** An attempt ended with a status (cancelled losers of a hedge race included, with the code they got). */
export interface AttemptEndEvent extends EventBase {
  readonly type: 'attempt-end';
  readonly attempt: number;
  readonly code: number;
  readonly details: string;
  readonly durationMs: number;
}

/** A retry will be sent after `delayMs`. */
export interface RetryScheduledEvent extends EventBase {
  readonly type: 'retry-scheduled';
  /** The attempt number the retry will have. */
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: 'backoff' | 'pushback';
}

/** A hedge will be sent after `delayMs` (0 when a non-fatal status sends it at once). */
export interface HedgeScheduledEvent extends EventBase {
  readonly type: 'hedge-scheduled';
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: 'hedging-delay' | 'non-fatal-status' | 'pushback';
}

/** Throttling (A6 retryThrottling) stopped a retry or a hedge. */
export interface ThrottledEvent extends EventBase {
  readonly type: 'throttled';
  /** The attempt number that was not sent. */
  readonly attempt: number;
  /** Tokens left in the throttle. */
  readonly tokens: number;
}

/** The call committed to one attempt: no further attempts will be made. */
export interface CommittedEvent extends EventBase {
  readonly type: 'committed';
  readonly attempt: number;
  readonly reason: 'headers' | 'message' | 'status' | 'buffer-overflow';
}

/** The call ended; exactly one per call. */
export interface CallEndEvent extends EventBase {
  readonly type: 'call-end';
  readonly code: number;
  readonly details: string;
  /** Attempts sent, the original included. */
  readonly attempts: number;
  /**
   * Total time the call spent with no attempt in flight, waiting to send the next one (backoff and pushback
   * delays); the A96 `grpc.client.call.retry_delay`. Hedges sent while an attempt is in flight add nothing.
   */
  readonly retryDelayMs: number;
  readonly durationMs: number;
}

export type RetryEvent =
  | AttemptStartEvent
  | AttemptEndEvent
  | RetryScheduledEvent
  | HedgeScheduledEvent
  | ThrottledEvent
  | CommittedEvent
  | CallEndEvent;

export type RetryEventType = RetryEvent['type'];

/** Listener for {@link RetryEvent}s. It must not throw; if it does, the error is reported once as a warning. */
export type RetryEventListener = (event: RetryEvent) => void;
