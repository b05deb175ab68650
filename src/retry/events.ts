/**
 * Typed events of the retry interceptor, delivered to the `onEvent` option. Every event carries the gRPC
 * method path (`/pkg.Service/Method`) and a call number unique within the process, so a listener can follow one
 * call. Events are delivered synchronously, in order.
 */
import type { Metadata } from '@grpc/grpc-js';

/** Why an attempt was sent. */
export type AttemptKind = 'original' | 'retry' | 'hedge';

interface EventBase {
  /** Full method path, e.g. `/helloworld.Greeter/SayHello`. */
  readonly method: string;
  /**
   * Number of the logical call (1, 2, ...), unique within the process: the ESM and CommonJS builds loaded side by
   * side count together, so one listener can serve interceptors made by either.
   */
  readonly callId: number;
}

/**
 * A call under a retry or hedging policy starts. Delivered synchronously inside the caller's `makeXRequest`, so a
 * listener sees the caller's active context (tracing uses this).
 */
export interface CallStartEvent extends EventBase {
  readonly type: 'call-start';
  /** Which policy the call runs under. */
  readonly policy: 'retry' | 'hedging';
  readonly maxAttempts: number;
  /** The call's deadline in ms since the epoch; `Infinity` when it has none. */
  readonly deadline: number;
  /**
   * The channel's target as grpc-js names it (`channel.getTarget()`, such as `dns:db.example:443`): what the
   * interceptor keeps per target (the config's `retryThrottling`, its own adaptive hedging, the cancel-rate limit)
   * is keyed by it. Empty when a layer below the interceptor cannot say.
   */
  readonly target: string;
}

/** An attempt is being sent. */
export interface AttemptStartEvent extends EventBase {
  readonly type: 'attempt-start';
  /** 1-based attempt number within the call. */
  readonly attempt: number;
  readonly kind: AttemptKind;
  /**
   * Attempts sent before this one: the value of `grpc-previous-rpc-attempts`, 0 for the first (the header's name,
   * as the flaky server's `RecordedAttempt.previousRpcAttempts`).
   */
  readonly previousRpcAttempts: number;
  /**
   * The metadata this attempt will send. A listener may add headers to it synchronously (a tracer injects the
   * attempt's context here); it is this attempt's own copy.
   */
  readonly metadata: Metadata;
}

/** Why the client itself ended an attempt before the server did. */
export type AttemptCancelReason =
  /** Another attempt committed (a losing hedge). */
  | 'other-attempt-committed'
  /** The application cancelled the call. */
  | 'call-cancelled'
  /** The call ended (deadline, a fatal status on another attempt, ...). */
  | 'call-ended'
  /** The attempt's per-attempt receive timeout fired. */
  | 'per-attempt-timeout'
  /**
   * A message the attempt had still to send changed after its write callback (the application reused the object
   * while this attempt lagged behind another): the attempt is ended rather than send other data than was written.
   */
  | 'request-changed';

/**
 * An attempt ended with a status (cancelled losers of a hedge race included, with the code they got). An attempt the
 * client cancels at the call's end or at its per-attempt timeout reports its end at once, with the status it was
 * cancelled with, before what follows (a retry's events, `call-end`); one left running reports it when its status
 * comes.
 */
export interface AttemptEndEvent extends EventBase {
  readonly type: 'attempt-end';
  readonly attempt: number;
  readonly kind: AttemptKind;
  /** This attempt is (or, with its OK status, becomes) the one the call committed to. */
  readonly committed: boolean;
  /** Set when the call was done with this attempt but the cancel-rate limit let it run to completion. */
  readonly leftRunning?: true;
  /**
   * Set when the client cancelled this attempt, and why; with `leftRunning`, why the call was done with it (it ran
   * on, and was cancelled later if the rate allowed before it ended).
   */
  readonly cancelReason?: AttemptCancelReason;
  readonly code: number;
  readonly details: string;
  readonly durationMs: number;
  /**
   * The address of the connection that carried the attempt: `host:port`, `[v6]:port`, or a unix socket's path (as
   * the `unix:` target gave it). Where the replica-avoiding policy picked it, or else what grpc-js reports as its
   * peer. Absent when no connection carried it (nothing listened, or it ended before grpc-js picked a subchannel):
   * grpc-js then names the channel's target, which served nothing, and that is left out. Absent too, though a
   * server received it, for an attempt still waiting for its answer when another attempt's status ended the call
   * (`cancelReason: 'call-ended'`, e.g. the call's deadline under hedging): its end is reported before the call's,
   * and grpc-js names no peer for it then (a losing hedge or an attempt the application cancelled has one).
   */
  readonly peer?: string;
}

/**
 * The call was done with an attempt (a losing hedge, a timed-out attempt), but cancelling it now would exceed the
 * cancel-rate limit (`cancelRateLimit`): it runs to completion and its result is discarded. It still ends at the
 * call's deadline, or after `loserCapMs` when the call has none.
 */
export interface AttemptLeftRunningEvent extends EventBase {
  readonly type: 'attempt-left-running';
  readonly attempt: number;
  /** Why it would have been cancelled (the `cancelReason` its `attempt-end` will carry). */
  readonly cancelReason: Extract<AttemptCancelReason, 'other-attempt-committed' | 'per-attempt-timeout'>;
  /** When the call has no deadline: the attempt is cancelled after this long at the latest (the limiter's option). */
  readonly loserCapMs: number | undefined;
}

/** A retry will be sent after `delayMs`. */
export interface RetryScheduledEvent extends EventBase {
  readonly type: 'retry-scheduled';
  /** The attempt number the retry will have. */
  readonly attempt: number;
  readonly delayMs: number;
  /** `pushback`: the grpc-retry-pushback-ms trailer; `retry-info`: a google.rpc.RetryInfo in the status details. */
  readonly reason: 'backoff' | 'pushback' | 'retry-info';
}

/**
 * A hedge will be sent after `delayMs` (0 when a non-fatal status sends it at once), if the call is still
 * undecided then and the gate lets it go: a scheduled hedge is not a sent one. Count `hedge-sent` for those.
 */
export interface HedgeScheduledEvent extends EventBase {
  readonly type: 'hedge-scheduled';
  readonly attempt: number;
  readonly delayMs: number;
  /** `adaptive-delay`: the delay came from observed latency (adaptive hedging). */
  readonly reason: 'hedging-delay' | 'adaptive-delay' | 'non-fatal-status' | 'pushback' | 'retry-info';
  /** The call's target, as `call-start` says it: an adaptive delay is learned per target. */
  readonly target: string;
}

/**
 * A hedge came due while the method's calls stall (adaptive hedging's `holdInStalls`): a hedge had already come
 * due with no call of the method answering since. It waits for the method's next answer, and goes then (a
 * `hedge-sent`) if the call is still waiting for it.
 */
export interface HedgeHeldEvent extends EventBase {
  readonly type: 'hedge-held';
  /** The held hedge's attempt number (2 for the first hedge). */
  readonly attempt: number;
}

/**
 * A hedge was sent: delivered right after its `attempt-start` (kind `hedge`), so it is the one event to count
 * hedges with (a `hedge-scheduled` may come to nothing: the call committed first, or the gate refused it).
 */
export interface HedgeSentEvent extends EventBase {
  readonly type: 'hedge-sent';
  /** The hedge's attempt number (2 for the first hedge). */
  readonly attempt: number;
  /** Time from the call's start to this hedge, in whole ms. */
  readonly sinceCallStartMs: number;
}

/** The retry gate (A6 retryThrottling, a retry budget, ...) stopped a retry or a hedge. */
export interface ThrottledEvent extends EventBase {
  readonly type: 'throttled';
  /**
   * The attempt number that was not sent then. A hedge adaptive hedging's budget (`gate: 'hedge-budget'`) refused
   * while an attempt was in flight is asked for again one delay later, and may go then; this event comes once per
   * hedge.
   */
  readonly attempt: number;
  /** What was refused. */
  readonly kind: 'retry' | 'hedge';
  /** The gate's `name` (`"retry-throttle"` for A6 throttling; `"gate"` when it has none). */
  readonly gate: string;
  /** Tokens left in the gate, when it reports them; NaN otherwise. */
  readonly tokens: number;
  /** The call's target, as `call-start` says it: whose throttle refused, when it is the config's `retryThrottling`. */
  readonly target: string;
}

/**
 * The call committed to one attempt in flight: no further attempts will be made. Never for an attempt that has
 * ended: a call whose failed attempt cannot be resent (its request is too large for the replay buffer) commits to
 * none, and ends with that attempt's status.
 */
export interface CommittedEvent extends EventBase {
  readonly type: 'committed';
  readonly attempt: number;
  readonly reason: 'headers' | 'message' | 'status' | 'replay-buffer';
}

/**
 * Why a failure ended the call with no further attempt: its status is not retryable or non-fatal (`fatal-status`),
 * the deadline passed (`deadline`) or the next backoff would outlast it (`deadline-aware`), the server said not to
 * retry (`do-not-retry`), maxAttempts were used (`attempts-exhausted`), the request did not fit the replay buffer
 * (`replay-buffer`: perRpcBufferBytes or totalBufferBytes; also a call committed because its request outgrew the
 * buffer, whose attempt then failed with a status the policy would have retried or hedged past), a request message
 * changed after it was written or cannot be serialized again (`request-changed`, `request-unserializable`), the
 * retry gate refused (`throttled`), the load-balancing policy dropped the attempt before it left the client
 * (`lb-drop`: grpc-js-xds's `drop_overloads` or circuit breaking, which gRPC never retries), the channel refused
 * to make the next attempt's call (`start-failed`: the client was closed meanwhile), or the call was
 * committed by the server's answer (headers or a message) before the failure, which A6 never retries
 * (`committed`).
 */
export type CallEndReason =
  | 'fatal-status'
  | 'deadline'
  | 'do-not-retry'
  | 'attempts-exhausted'
  | 'replay-buffer'
  | 'request-changed'
  | 'request-unserializable'
  | 'deadline-aware'
  | 'throttled'
  | 'lb-drop'
  | 'start-failed'
  | 'committed';

/** The call ended; exactly one per call. */
export interface CallEndEvent extends EventBase {
  readonly type: 'call-end';
  readonly code: number;
  readonly details: string;
  /**
   * Set when the call failed because a failure got no further attempt, and why (see {@link CallEndReason}): a call
   * that failed after one attempt says here whether its policy chose not to retry or could not.
   */
  readonly reason?: CallEndReason;
  /** Attempts sent, the original included. */
  readonly attempts: number;
  /**
   * Total time the call spent with no attempt in flight, waiting to send the next one (backoff and pushback
   * delays); the A96 `grpc.client.call.retry_delay`. Hedges sent while an attempt is in flight add nothing.
   */
  readonly retryDelayMs: number;
  readonly durationMs: number;
  /** The call's target, as `call-start` says it (`dns:db.example:443`; empty when a layer below cannot say). */
  readonly target: string;
}

/**
 * The engine broke one of its own rules (a bug in this package, never a server's or the application's doing). The
 * call ends with INTERNAL rather than an exception thrown into grpc-js; please report the `message`.
 */
export interface InternalErrorEvent extends EventBase {
  readonly type: 'internal-error';
  /** What went wrong, e.g. `no transition from ended to waiting`. */
  readonly message: string;
}

export type RetryEvent =
  | CallStartEvent
  | AttemptStartEvent
  | AttemptEndEvent
  | AttemptLeftRunningEvent
  | RetryScheduledEvent
  | HedgeScheduledEvent
  | HedgeHeldEvent
  | HedgeSentEvent
  | ThrottledEvent
  | CommittedEvent
  | CallEndEvent
  | InternalErrorEvent;

export type RetryEventType = RetryEvent['type'];

/** Listener for {@link RetryEvent}s. It must not throw; if it does, the error is reported once as a warning. */
export type RetryEventListener = (event: RetryEvent) => void;
