/**
 * grpc-retry-hedging: gRPC A6 client retries and hedging for @grpc/grpc-js, as interceptors driven by
 * service-config JSON.
 */
export * from './config/index.js';
export { JITTER_STRATEGIES, type JitterStrategy } from './retry/backoff.js';
export { type CallRetryOptions, type PolicyOverride, withRetryOptions } from './retry/call-options.js';
export { type Clock, systemClock, type TimerHandle } from './retry/clock.js';
export type {
  AttemptCancelReason,
  AttemptEndEvent,
  AttemptKind,
  AttemptStartEvent,
  CallEndEvent,
  CallStartEvent,
  CommittedEvent,
  HedgeScheduledEvent,
  RetryEvent,
  RetryEventListener,
  RetryEventType,
  RetryScheduledEvent,
  ThrottledEvent,
} from './retry/events.js';
export { PREVIOUS_ATTEMPTS_METADATA_KEY, PUSHBACK_METADATA_KEY } from './retry/headers.js';
export {
  DEFAULT_PER_RPC_BUFFER_BYTES,
  DEFAULT_TOTAL_BUFFER_BYTES,
  type RetryInterceptorOptions,
} from './retry/interceptor-options.js';
export { type GatedAttemptKind, isRetryGate, type RetryGate } from './retry/retry-gate.js';
export { createRetryInterceptor } from './retry/retry-interceptor.js';
export { RetryThrottle } from './retry/retry-throttle.js';
