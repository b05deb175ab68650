/**
 * `grpc-retry-hedging/otel`: OpenTelemetry metrics for retries and hedging (gRPC A96), recorded from the retry
 * interceptor's events. Needs the optional peer dependency `@opentelemetry/api`.
 */
export {
  COUNT_BUCKET_BOUNDARIES,
  createRetryMetrics,
  DEFAULT_MAX_TRACKED_CALLS,
  DELAY_BUCKET_BOUNDARIES,
  RETRY_METER_NAME,
  RETRY_METRIC_NAMES,
  type RetryMetrics,
  type RetryMetricsOptions,
} from './retry-metrics.js';
