/**
 * grpc-retry-hedging: gRPC A6 client retries and hedging for @grpc/grpc-js, as interceptors driven by
 * service-config JSON.
 */

export { interceptChannel } from './channel/intercepted-channel.js';
export {
  type ChannelOptionsSettings,
  createChannelOptions,
} from './config/channel-options.js';
export * from './config/index.js';
export type {
  DurationJson,
  HedgingPolicyJson,
  MethodConfigJson,
  MethodNameJson,
  RetryPolicyJson,
  ServiceConfigJson,
  StatusCodeJson,
  StatusCodeName,
} from './config/service-config-json.js';
export {
  AdaptiveHedging,
  type FirstAttemptLatencies,
  type HedgingDelayChoice,
} from './hedging/adaptive-hedging-delay.js';
export {
  type AdaptiveHedgingOptions,
  DEFAULT_ADAPTIVE_HEDGING_MAX_DELAY_MS,
  DEFAULT_ADAPTIVE_HEDGING_MAX_EXTRA_LOAD,
  DEFAULT_ADAPTIVE_HEDGING_MIN_DELAY_MS,
  DEFAULT_ADAPTIVE_HEDGING_WINDOW_BINS,
  DEFAULT_ADAPTIVE_HEDGING_WINDOW_MS,
  DEFAULT_HEDGE_BUDGET_CHANCE_SD,
  DEFAULT_HEDGE_BUDGET_MIN_PER_SECOND,
  DEFAULT_HEDGE_BUDGET_TTL_MS,
  type HedgeBudgetOptions,
  type ResolvedAdaptiveHedgingOptions,
  type ResolvedHedgeBudgetOptions,
} from './hedging/adaptive-hedging-options.js';
export {
  CancelRateLimiter,
  type CancelRateLimiterOptions,
  DEFAULT_CANCEL_BURST,
  DEFAULT_CANCEL_RATE_PER_SECOND,
  DEFAULT_UNCANCELLED_LOSER_CAP_MS,
} from './hedging/cancel-rate-limiter.js';
export { HedgeBudget, type HedgeBudgetConstructorOptions } from './hedging/hedge-budget.js';
export {
  type ClientConstructorSource,
  type GrpcObjectSource,
  type IdempotencyLevel,
  listMethodIdempotency,
  type ProtobufjsMethod,
  type ProtobufjsReflectionObject,
  type ProtoMethodIdempotency,
  type ProtoSource,
} from './idempotency/idempotency-level.js';
export {
  type IdempotencyPolicies,
  type LevelPolicy,
  serviceConfigFromProtos,
} from './idempotency/service-config-from-protos.js';
export { AVOID_TRIED_REPLICAS_POLICY, registerAvoidTriedReplicas } from './lb/avoid-tried-balancer.js';
export {
  createRequestIdInterceptor,
  type RequestIdInterceptorOptions,
} from './request-id/request-id-interceptor.js';
export { JITTER_STRATEGIES, type JitterStrategy } from './retry/backoff.js';
export { type CallRetryOptions, type PolicyOverride, withRetryOptions } from './retry/call-options.js';
export type {
  AttemptCancelReason,
  AttemptEndEvent,
  AttemptKind,
  AttemptLeftRunningEvent,
  AttemptStartEvent,
  CallEndEvent,
  CallEndReason,
  CallStartEvent,
  CommittedEvent,
  HedgeHeldEvent,
  HedgeScheduledEvent,
  HedgeSentEvent,
  InternalErrorEvent,
  RetryEvent,
  RetryEventListener,
  RetryEventType,
  RetryScheduledEvent,
  ThrottledEvent,
} from './retry/events.js';
export {
  DEFAULT_PER_RPC_BUFFER_BYTES,
  DEFAULT_TOTAL_BUFFER_BYTES,
  type RetryInterceptorOptions,
} from './retry/interceptor-options.js';
export {
  DEFAULT_RETRY_INFO_MAX_DELAY_MS,
  encodeRetryInfo,
  encodeRetryInfoStatus,
  parseRetryInfo,
  RETRY_INFO_TYPE_URL,
  type RetryInfo,
  type RetryInfoStatusInit,
  type StatusDetail,
} from './retry/retry-info.js';
export type { RetryInfoOptions } from './retry/retry-info-option.js';
export { createRetryInterceptor } from './retry/retry-interceptor.js';
export { type RetryOutcome, retryOutcomeOf } from './retry/retry-outcome.js';
export { RetryThrottle } from './retry/retry-throttle.js';
export { type Clock, systemClock, type TimerHandle } from './shared/clock.js';
export {
  DEFAULT_REQUEST_ID_HEADER,
  PREVIOUS_RPC_ATTEMPTS_METADATA_KEY,
  PUSHBACK_METADATA_KEY,
  STATUS_DETAILS_METADATA_KEY,
} from './shared/headers.js';
export { type GatedAttemptKind, isRetryGate, type RetryGate } from './shared/retry-gate.js';
export {
  type AdaptiveThrottleCounters,
  type AdaptiveThrottleEvent,
  type AdaptiveThrottleInterceptor,
  type AdaptiveThrottleKeyState,
  type AdaptiveThrottleOptions,
  type AdaptiveThrottleRejectedEvent,
  createAdaptiveThrottleInterceptor,
  LOCAL_REJECTION_DETAILS_PREFIX,
} from './throttle/adaptive-throttle.js';
export {
  type AdaptiveThrottleRetries,
  type AdaptiveThrottleRuleConfig,
  type AdaptiveThrottleRuleOptions,
  AdaptiveThrottleState,
  DEFAULT_ADAPTIVE_THROTTLE_RULE,
  rejectionProbability,
} from './throttle/adaptive-throttle-rule.js';
export { RetryBudget, type RetryBudgetOptions } from './throttle/retry-budget.js';
