/**
 * Service-config JSON as written (grpc/service_config.proto in proto3 JSON form): the types of what
 * `createRetryInterceptor`, `createChannelOptions` and per-call policies take, and of what
 * `serviceConfigFromProtos` returns. They type-check an inline config; `parseServiceConfig` still validates every
 * value at run time (a maxAttempts of 1, a duration without its "s").
 */

/** A gRPC status code name, as the service config spells it (the parser also takes any letter case). */
export type StatusCodeName =
  | 'OK'
  | 'CANCELLED'
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'UNAUTHENTICATED';

/**
 * A status code in a service config: a name or its number (0–16). Any string is accepted by the type, so that a
 * config imported from a `.json` file (whose codes TypeScript reads as `string`) fits; the names complete in an
 * editor, and the parser rejects an unknown one with a "did you mean".
 */
export type StatusCodeJson = StatusCodeName | (string & {}) | number;

/** A duration in proto3 JSON form: seconds with up to 9 decimals and a trailing `s`, such as `"0.1s"` or `"2s"`. */
export type DurationJson = string;

/** A retryPolicy as written in service-config JSON (durations as `"0.1s"`, codes as names or numbers). */
export interface RetryPolicyJson {
  maxAttempts: number;
  initialBackoff: DurationJson;
  maxBackoff: DurationJson;
  backoffMultiplier: number;
  /** May be empty only when `perAttemptRecvTimeout` is set. */
  retryableStatusCodes: ReadonlyArray<StatusCodeJson>;
  /** gRPC C-core's field: how long an attempt may wait for its first response before it is cancelled and retried. */
  perAttemptRecvTimeout?: DurationJson | undefined;
}

/** A hedgingPolicy as written in service-config JSON. */
export interface HedgingPolicyJson {
  maxAttempts: number;
  /** Default `"0s"`: every attempt at once. */
  hedgingDelay?: DurationJson | undefined;
  nonFatalStatusCodes?: ReadonlyArray<StatusCodeJson> | undefined;
}

/**
 * One `name` of a methodConfig entry: a service and method, a whole service (no method), or every method (neither:
 * `{}`, the default entry).
 */
export interface MethodNameJson {
  service?: string | undefined;
  method?: string | undefined;
}

/** One methodConfig entry as written in service-config JSON. */
export interface MethodConfigJson {
  name: readonly MethodNameJson[];
  retryPolicy?: RetryPolicyJson | undefined;
  hedgingPolicy?: HedgingPolicyJson | undefined;
  /** The call's overall deadline, when shorter than the caller's. */
  timeout?: DurationJson | undefined;
  waitForReady?: boolean | undefined;
  /** A whole number, or one in decimal text (proto3 JSON allows both). */
  maxRequestMessageBytes?: number | string | undefined;
  maxResponseMessageBytes?: number | string | undefined;
  /** grpc-js's own spelling of `maxRequestMessageBytes`, also read. */
  maxRequestBytes?: number | string | undefined;
  /** grpc-js's own spelling of `maxResponseMessageBytes`, also read. */
  maxResponseBytes?: number | string | undefined;
}

/** A service config as written in JSON; what `serviceConfigFromProtos` returns. */
export interface ServiceConfigJson {
  /** For editors: the JSON schema the package ships (`schema/service-config.schema.json`). */
  $schema?: string | undefined;
  methodConfig?: readonly MethodConfigJson[] | undefined;
  retryThrottling?: { maxTokens: number; tokenRatio: number } | undefined;
  /**
   * Load-balancing policies, first known one wins: `[{ round_robin: {} }]`, for instance. `serviceConfigFromProtos`
   * sets `[{ round_robin: {} }]` when some method is hedged: under grpc-js's default pick_first a hedge cannot leave
   * one connection.
   */
  loadBalancingConfig?: ReadonlyArray<Record<string, unknown>> | undefined;
  /** The older form of `loadBalancingConfig`: `"round_robin"`. */
  loadBalancingPolicy?: string | undefined;
  healthCheckConfig?: { serviceName?: string } | undefined;
}
