/**
 * `grpc-retry-hedging/otel`: OpenTelemetry metrics (gRPC A96's instruments, with A66's attributes and
 * `grpc.status` added) and tracing (gRPC A72: a span per call and per attempt) for retries and hedging, recorded
 * from the retry interceptor's events. Needs the optional peer dependency `@opentelemetry/api`.
 */

export { DEFAULT_MAX_TRACKED_CALLS } from './max-tracked-calls.js';
export { metadataGetter, metadataSetter } from './metadata-carrier.js';
export {
  COUNT_BUCKET_BOUNDARIES,
  createRetryMetrics,
  DELAY_BUCKET_BOUNDARIES,
  RETRY_METER_NAME,
  RETRY_METRIC_NAMES,
  type RetryMetrics,
  type RetryMetricsOptions,
} from './retry-metrics.js';
export {
  createRetryTracing,
  RETRY_SPAN_ATTRIBUTES,
  RETRY_SPAN_EVENTS,
  RETRY_TRACER_NAME,
  type RetryTracing,
  type RetryTracingOptions,
} from './retry-tracing.js';
