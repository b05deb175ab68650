/**
 * Default of `maxTrackedCalls` in both OpenTelemetry adapters (`createRetryMetrics` and `createRetryTracing`): the
 * most calls each follows at once.
 */
export const DEFAULT_MAX_TRACKED_CALLS = 10_000;
