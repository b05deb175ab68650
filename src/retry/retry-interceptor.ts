import type { InterceptingCall, Interceptor } from '@grpc/grpc-js';
import { clampPolicy, createPolicyLookup } from '../config/method-policy.js';
import { parseServiceConfig } from '../config/parse-service-config.js';
import { type CallPolicy, DEFAULT_MAX_ATTEMPTS_LIMIT, type ServiceConfig } from '../config/types.js';
import { JITTER_STRATEGIES, type JitterStrategy } from './backoff.js';
import { BufferPool } from './buffer-pool.js';
import { readCallRetryOptions } from './call-options.js';
import type { RetryEvent, RetryEventListener } from './events.js';
import { isRetryGate, type RetryGate } from './retry-gate.js';
import { RetryThrottle } from './retry-throttle.js';
import { RetryingCall, type RetryingCallContext } from './retrying-call.js';

/** Options of {@link createRetryInterceptor}. */
export interface RetryInterceptorOptions {
  /** Client-side cap on maxAttempts of every policy (A6: 5). Larger values in the config are clamped to it. */
  maxAttemptsLimit?: number;
  /** Replay-buffer limit of one call, in serialized bytes (default 1 MiB). A call that exceeds it commits. */
  perRpcBufferBytes?: number;
  /** Replay-buffer limit shared by all calls of this interceptor (default 16 MiB). */
  totalBufferBytes?: number;
  /**
   * Retry gate to use instead of the A6 throttle built from the config's `retryThrottling`: a {@link RetryThrottle},
   * a retry budget, or any object that implements {@link RetryGate}. Share one instance between
   * interceptors or clients that talk to the same server so that they throttle together.
   */
  throttle?: RetryGate;
  /** Source of uniform random numbers in [0, 1) for jitter (default Math.random); inject one for tests. */
  random?: () => number;
  /** How backoff delays are randomized (default `'a6'`); see {@link JitterStrategy}. */
  jitter?: JitterStrategy;
  /** Receives a typed event for every attempt, retry, hedge, throttle decision, commit and call end. */
  onEvent?: RetryEventListener;
  /**
   * Opt-in: do not start a backoff that would end after the call's deadline; end at once with the last
   * attempt's real status instead of waiting for DEADLINE_EXCEEDED. Off by default (A6 behaviour).
   */
  deadlineAwareBackoff?: boolean;
}

let callCount = 0;
/** Call numbers are unique within the module instance, so one listener can serve several interceptors. */
function nextCallId(): number {
  callCount += 1;
  return callCount;
}

/** Default per-call replay-buffer limit (grpc-js's default). */
export const DEFAULT_PER_RPC_BUFFER_BYTES = 1024 * 1024;
/** Default total replay-buffer limit of one interceptor (grpc-js's default). */
export const DEFAULT_TOTAL_BUFFER_BYTES = 16 * 1024 * 1024;

function checkInteger(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(
      `createRetryInterceptor: options.${name} must be an integer >= ${min}, got ${value}`,
    );
  }
  return value;
}

function chainListeners(
  first: ((event: RetryEvent) => void) | undefined,
  second: (event: RetryEvent) => void,
): (event: RetryEvent) => void {
  if (!first) return second;
  return (event) => {
    first(event);
    second(event);
  };
}

function safeListener(listener: RetryEventListener): (event: RetryEvent) => void {
  let warned = false;
  return (event) => {
    try {
      listener(event);
    } catch (error) {
      if (warned) return;
      warned = true;
      process.emitWarning(
        `grpc-retry-hedging: the onEvent listener threw (${error instanceof Error ? error.message : String(error)}); ` +
          'the call goes on, and further errors from this listener are not reported',
        { code: 'GRPC_RETRY_HEDGING_LISTENER_ERROR' },
      );
    }
  };
}

/**
 * Build a grpc-js client interceptor that applies the A6 retry and hedging policies of a service config.
 *
 * ```ts
 * const client = new Greeter(address, credentials.createInsecure(), {
 *   interceptors: [createRetryInterceptor(loadServiceConfig('service-config.json'))],
 * });
 * ```
 * One interceptor serves every method of a client; the policy is looked up per method (exact method, then
 * service, then default). Methods without a policy pass straight through.
 *
 * @param config A config from `parseServiceConfig`/`loadServiceConfig`, a service-config object, or JSON text.
 * @throws ServiceConfigError when the config is invalid; RangeError/TypeError when an option is.
 */
export function createRetryInterceptor(
  config: ServiceConfig | object | string,
  options: RetryInterceptorOptions = {},
): Interceptor {
  const serviceConfig = parseServiceConfig(config);
  const maxAttemptsLimit = checkInteger(
    'maxAttemptsLimit',
    options.maxAttemptsLimit ?? DEFAULT_MAX_ATTEMPTS_LIMIT,
    1,
  );
  const perRpc = checkInteger(
    'perRpcBufferBytes',
    options.perRpcBufferBytes ?? DEFAULT_PER_RPC_BUFFER_BYTES,
    0,
  );
  const total = checkInteger('totalBufferBytes', options.totalBufferBytes ?? DEFAULT_TOTAL_BUFFER_BYTES, 0);
  const jitter = options.jitter ?? 'a6';
  if (!JITTER_STRATEGIES.includes(jitter)) {
    throw new TypeError(
      `createRetryInterceptor: options.jitter must be one of ${JITTER_STRATEGIES.join(', ')}, got ${String(jitter)}`,
    );
  }
  if (options.random !== undefined && typeof options.random !== 'function') {
    throw new TypeError(
      'createRetryInterceptor: options.random must be a function returning a number in [0, 1)',
    );
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') {
    throw new TypeError('createRetryInterceptor: options.onEvent must be a function');
  }
  if (options.throttle !== undefined && !isRetryGate(options.throttle)) {
    throw new TypeError(
      'createRetryInterceptor: options.throttle must be a retry gate (an object with allowAttempt, recordFailure and recordSuccess methods), such as a RetryThrottle',
    );
  }
  const lookup: (path: string) => CallPolicy | undefined = createPolicyLookup(
    serviceConfig,
    maxAttemptsLimit,
  );
  const context: RetryingCallContext = {
    pool: new BufferPool(perRpc, total),
    throttle:
      options.throttle ??
      (serviceConfig.retryThrottling ? new RetryThrottle(serviceConfig.retryThrottling) : undefined),
    random: options.random ?? Math.random,
    jitter,
    deadlineAware: options.deadlineAwareBackoff === true,
    nextCallId,
  };

  const emit = options.onEvent ? safeListener(options.onEvent) : undefined;

  return (callOptions, nextCall) => {
    const perCall = readCallRetryOptions(callOptions);
    let policy: CallPolicy | undefined;
    let callEmit = emit;
    if (perCall === undefined) {
      policy = lookup(callOptions.method_definition.path);
    } else {
      policy = !perCall.enabled
        ? undefined
        : perCall.policy
          ? clampPolicy(perCall.policy, maxAttemptsLimit)
          : lookup(callOptions.method_definition.path);
      if (perCall.onEvent) callEmit = chainListeners(emit, safeListener(perCall.onEvent));
    }
    if (policy === undefined || policy.maxAttempts < 2) {
      // No policy: hand grpc-js the next call itself. It only uses the InterceptingCall interface.
      return nextCall(callOptions) as InterceptingCall;
    }
    // grpc-js only uses the InterceptingCall interface, which RetryingCall implements; skipping the wrapper
    // saves a layer of indirection on every operation of every call.
    return new RetryingCall(callOptions, nextCall, policy, context, callEmit) as unknown as InterceptingCall;
  };
}
