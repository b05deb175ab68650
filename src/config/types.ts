/**
 * Normalized, validated service config as returned by `parseServiceConfig`.
 * Durations are in milliseconds; status codes are numeric `grpc.status` values.
 */

/** A `name` entry of a methodConfig. Empty strings, null and absent all normalize to `undefined`. */
export interface MethodName {
  readonly service?: string;
  readonly method?: string;
}

/** A6 retryPolicy, normalized. `maxAttempts` is as written in the config (not yet clamped). */
export interface RetryPolicy {
  readonly kind: 'retry';
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffMultiplier: number;
  /** May be empty only when `perAttemptRecvTimeoutMs` is set. */
  readonly retryableStatusCodes: readonly number[];
  /**
   * `perAttemptRecvTimeout` (gRPC C-core's field), when present, in ms (> 0): how long an attempt may wait for its
   * first response headers or message before it is cancelled and the retry decision runs.
   */
  readonly perAttemptRecvTimeoutMs?: number;
}

/** A6 hedgingPolicy, normalized. `hedgingDelayMs` is 0 when the field was absent or "0s". */
export interface HedgingPolicy {
  readonly kind: 'hedging';
  readonly maxAttempts: number;
  readonly hedgingDelayMs: number;
  readonly nonFatalStatusCodes: readonly number[];
}

/** The policy a call runs under. */
export type CallPolicy = RetryPolicy | HedgingPolicy;

/** One `methodConfig[]` entry, normalized. */
export interface MethodConfig {
  readonly name: readonly MethodName[];
  readonly retryPolicy?: RetryPolicy;
  readonly hedgingPolicy?: HedgingPolicy;
  /**
   * `timeout`, when present, in ms: the interceptor applies it as the call's overall deadline when it is shorter
   * than the caller's.
   */
  readonly timeoutMs?: number;
  /** `waitForReady`, when present: the interceptor applies it to every attempt. */
  readonly waitForReady?: boolean;
}

/** A6 retryThrottling; `tokenRatio` is truncated to 3 decimals. */
export interface RetryThrottlingConfig {
  readonly maxTokens: number;
  readonly tokenRatio: number;
}

export interface ServiceConfig {
  readonly methodConfig: readonly MethodConfig[];
  readonly retryThrottling?: RetryThrottlingConfig;
}

/** Result of looking a method up in a config. */
export interface MethodPolicyMatch {
  /** The policy with `maxAttempts` clamped to the limit. */
  readonly policy: CallPolicy;
  /** Index of the `methodConfig` entry that matched. */
  readonly methodConfigIndex: number;
  /** How specific the matching name was. */
  readonly matchedBy: 'method' | 'service' | 'default';
  /** The matched entry's `timeout` in ms, if it has one. */
  readonly timeoutMs?: number;
  /** The matched entry's `waitForReady`, if it has one. */
  readonly waitForReady?: boolean;
}

/** Default client-side cap on maxAttempts (A6). */
export const DEFAULT_MAX_ATTEMPTS_LIMIT = 5;
