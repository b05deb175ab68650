/**
 * Default of `maxTrackedCalls` in both OpenTelemetry adapters (`createRetryMetrics` and `createRetryTracing`): the
 * most calls each follows at once (the metrics, calls that have sent a retry or hedge; the tracing, every call under a
 * policy, from its start).
 */
export const DEFAULT_MAX_TRACKED_CALLS = 10_000;
