import { type CallOptions, InterceptingCall, type Interceptor, type InterceptorOptions } from '@grpc/grpc-js';
import { attemptLimitExcessMessage, findAttemptLimitExcess } from '../config/attempt-limit-excess.js';
import { formatJsonPath } from '../config/json-path.js';
import { clampPolicy, createMethodConfigLookup } from '../config/method-policy.js';
import { nearMissName } from '../config/name-near-miss.js';
import { configSourceOf } from '../config/normalized-config.js';
import { parseServiceConfig } from '../config/parse-service-config.js';
import type { ServiceConfigJson } from '../config/service-config-json.js';
import { LONGEST_CONFIG_TIMEOUT_MS } from '../config/timer-limit.js';
import type { CallPolicy, ServiceConfig } from '../config/types.js';
import { checkNotUsedAsInterceptor } from '../util/factory-misuse.js';
import { describeValue } from '../util/option-checks.js';
import { BufferPool } from './buffer-pool.js';
import type { RetryingCallContext } from './call-context.js';
import { readCallRetryOptions } from './call-options.js';
import { deadlineToMs } from './deadline.js';
import type { RetryEvent } from './events.js';
import {
  chainListeners,
  type RetryInterceptorOptions,
  resolveInterceptorOptions,
} from './interceptor-options.js';

export type { RetryInterceptorOptions };

import { hasThrottleAbove } from '../shared/throttle-order.js';
import { warnOnce, warnOncePerMessage, warnOncePerProcess } from '../util/warn-once.js';
import { RetryingCall } from './retrying-call.js';
import { throttlesPerTarget } from './throttles-per-target.js';
import { withConfigWaitForReady } from './wait-for-ready.js';

const CALL_COUNT = Symbol.for('grpc-retry-hedging.call-count');

/**
 * The last call number given, kept on `globalThis` under a `Symbol.for` key: call numbers are unique within the
 * process, so that one listener (the OpenTelemetry adapters among them) can serve several interceptors, even when
 * an application loads both the ESM and the CJS build (an ESM app with a CommonJS library, say). With a counter per
 * copy, both copies numbered their calls from 1, and the adapters mixed up two calls' spans and counts.
 */
const processWide = globalThis as { [CALL_COUNT]?: { last: number } };
processWide[CALL_COUNT] ??= { last: 0 };
const callCount = processWide[CALL_COUNT];
/** A maxAttempts over the limit, said once per process for each config that says it. */
const warnOverLimit = warnOncePerMessage('GRPC_RETRY_HEDGING_MAX_ATTEMPTS');
/**
 * A call made through an interceptor whose config has no methodConfig entry, with no policy of its own: said once
 * per process (an empty config is a mistake made once, often in a helper that makes every client).
 */
const warnEmptyConfig = warnOnce(
  'grpc-retry-hedging: a call went through createRetryInterceptor without a retry or hedging policy, as the service config it was given has no methodConfig entries: such calls are neither retried nor hedged. Give the config a methodConfig entry that names the service (docs/configuration.md), or the call a policy of its own (withRetryOptions).',
  'GRPC_RETRY_HEDGING_EMPTY_CONFIG',
);

/**
 * Interceptors made in this process (by this copy of the package): past {@link MANY_INTERCEPTORS}, most likely one
 * per call or per request, where each starts with its own throttle tokens.
 */
let interceptorsMade = 0;
const MANY_INTERCEPTORS = 1_000;
const warnManyInterceptors = warnOnce(
  `grpc-retry-hedging: ${MANY_INTERCEPTORS} retry interceptors have been made in this process, most likely one per call or per request. Each keeps its own state: the config's retryThrottling tokens, the replay-buffer total (totalBufferBytes), adaptive hedging's delays and budget, so interceptors made per request retry as if none of these were there (against an outage, a retryThrottling config then stops nothing). Make one interceptor per client, or per target, when the client is made, and reuse it (docs/configuration.md, "One interceptor per client").`,
  'GRPC_RETRY_HEDGING_MANY_INTERCEPTORS',
);

function nextCallId(): number {
  callCount.last += 1;
  return callCount.last;
}

/**
 * Build a grpc-js client interceptor that applies a service config: the A6 retry and hedging policies, and each
 * method's `timeout` and `waitForReady`.
 *
 * ```ts
 * const client = new Greeter(address, credentials.createInsecure(), {
 *   interceptors: [createRetryInterceptor(loadServiceConfig('service-config.json'))],
 * });
 * ```
 * One interceptor serves every method of a client; the entry is looked up per method (exact method, then
 * service, then default). Methods without an entry pass straight through.
 *
 * @param config A config from `parseServiceConfig`/`loadServiceConfig`, a service-config object, or JSON text.
 * @param options See {@link RetryInterceptorOptions}.
 * @throws ServiceConfigError when the config is invalid; TypeError when it is neither JSON text nor an object;
 *   RangeError/TypeError when an option is (an unknown option is named, with the closest known one).
 */
export function createRetryInterceptor(
  config: ServiceConfig | ServiceConfigJson | string,
  options?: RetryInterceptorOptions,
): Interceptor {
  checkNotUsedAsInterceptor('createRetryInterceptor', 'createRetryInterceptor(config)', config);
  if (typeof config !== 'string' && (typeof config !== 'object' || config === null)) {
    throw new TypeError(
      `createRetryInterceptor: config must be JSON text or an object (a service config, or what parseServiceConfig or loadServiceConfig returned), got ${describeValue(config)}`,
    );
  }
  const serviceConfig = parseServiceConfig(config);
  interceptorsMade += 1;
  if (interceptorsMade === MANY_INTERCEPTORS) {
    warnManyInterceptors();
  }
  const resolved = resolveInterceptorOptions(options);
  // Found when the config was parsed, here or by loadServiceConfig/parseServiceConfig earlier.
  const mistakes = configSourceOf(serviceConfig)?.mistakes ?? [];
  if (mistakes.length > 0) {
    warnOncePerProcess(
      `grpc-retry-hedging: createRetryInterceptor: ${mistakes.join('; ')}`,
      'GRPC_RETRY_HEDGING_CONFIG_FIELD',
    );
  }
  const { maxAttemptsLimit, clock } = resolved;
  const overLimit = findAttemptLimitExcess(serviceConfig, maxAttemptsLimit).map(
    (e) =>
      `the service config's ${formatJsonPath(e.path)} ${attemptLimitExcessMessage(e, maxAttemptsLimit, 'set the maxAttemptsLimit option')}`,
  );
  if (overLimit.length > 0) {
    warnOverLimit(`grpc-retry-hedging: createRetryInterceptor: ${overLimit.join('; ')}`);
  }
  const lookup = createMethodConfigLookup(serviceConfig, maxAttemptsLimit);
  const context: RetryingCallContext = {
    pool: new BufferPool(resolved.perRpcBufferBytes, resolved.totalBufferBytes),
    gate: resolved.gate,
    throttles:
      resolved.gate === undefined && serviceConfig.retryThrottling
        ? throttlesPerTarget(serviceConfig.retryThrottling)
        : undefined,
    clock,
    random: resolved.random,
    jitter: resolved.jitter,
    deadlineAware: resolved.deadlineAwareBackoff,
    checkResends: resolved.checkResentRequests,
    retryInfo: resolved.retryInfo,
    adaptive: resolved.adaptiveHedging.shared,
    adaptivePerTarget: resolved.adaptiveHedging.perTarget,
    cancelLimits: resolved.cancelLimits,
    nextCallId,
    onNestedRetries: warnOnce(
      'grpc-retry-hedging: a call reached the retry interceptor already carrying grpc-previous-rpc-attempts, so another retry layer runs outside this one (two retry interceptors on one client, or one on a client and one on the channel under it): every outer attempt is retried again, and the attempts multiply. Attach one retry interceptor per call path. (An application that copies this header from a call it received into a call it makes sees this too: do not forward it.)',
      'GRPC_RETRY_HEDGING_NESTED_RETRIES',
    ),
    onChannelRetries: warnOnce(
      "grpc-retry-hedging: an attempt came back with grpc-previous-rpc-attempts set under the retry interceptor (in its headers or trailers, whether those retries failed or succeeded), so another retry layer runs inside this one and retries each of its attempts again: the attempts multiply. It is one of two: a second retry interceptor after this one (the same interceptor listed twice, or one on the client and one on its channel; it then reports GRPC_RETRY_HEDGING_NESTED_RETRIES too): attach one per call path; or grpc-js's own retries (a retryPolicy or hedgingPolicy left in the channel's 'grpc.service_config'): build that with createChannelOptions(config), which leaves the retry and hedging policies to the interceptor, or turn the channel's retries off with 'grpc.enable_retries': 0.",
      'GRPC_RETRY_HEDGING_CHANNEL_RETRIES',
    ),
    onRequestChanged: warnOnce(
      'grpc-retry-hedging: a call was not retried or hedged because its request message had changed since it was written (a streamed message reused after its write callback, or a request object changed after the call was made): a resend would have carried other data than the first attempt. Write a new object for each message, or leave it unchanged until the call ends, for such calls to be retried. (If the output of your serializer differs from one call to the next, as with a timestamp in it, set the option checkResentRequests: false.)',
      'GRPC_RETRY_HEDGING_REQUEST_CHANGED',
    ),
    onReplayBufferFull: warnOnce(
      `grpc-retry-hedging: a call was not retried or hedged because its request did not fit the replay buffer, which keeps what was sent for a resend (perRpcBufferBytes: ${resolved.perRpcBufferBytes} bytes a call, totalBufferBytes: ${resolved.totalBufferBytes} across this interceptor's calls). Its call-end event says reason "replay-buffer". Raise the limits in createRetryInterceptor's options if such calls should be retried, or leave their methods out of the retry policies.`,
      'GRPC_RETRY_HEDGING_REPLAY_BUFFER',
    ),
  };
  const emit = resolved.onEvent;
  const warnThrottleAbove = warnOnce(
    'grpc-retry-hedging: an adaptive throttle runs outside the retry interceptor, so it sees each call once and none of its retries or hedges: it cannot hold them back in an overload, and it counts a call as accepted or refused by its last attempt only. Put the throttle after the retry interceptor: interceptors: [createRetryInterceptor(config), createAdaptiveThrottleInterceptor()] (docs/overload.md).',
    'GRPC_RETRY_HEDGING_THROTTLE_ORDER',
  );

  /**
   * Paths already asked whether a name nearly matches them (bounded): every path called, so that a name one of
   * them is exactly is known for a real method, not a misspelling.
   */
  const nearMissChecked = new Set<string>();
  const hasNoEntries = serviceConfig.methodConfig.length === 0;

  return (callOptions, nextCall) => {
    if (typeof nextCall !== 'function' || typeof callOptions?.method_definition?.path !== 'string') {
      throw new TypeError(
        "createRetryInterceptor(config) returns a grpc-js client interceptor: put it in the client options' `interceptors` (not in `interceptor_providers`, and not on a server)",
      );
    }
    if (hasThrottleAbove(callOptions)) {
      warnThrottleAbove();
    }
    const path = callOptions.method_definition.path;
    const entry = lookup(path);
    if (!nearMissChecked.has(path) && nearMissChecked.size < MAX_NEAR_MISS_CHECKS) {
      nearMissChecked.add(path);
      const nearMiss = hasNoEntries ? undefined : nearMissName(serviceConfig, path, nearMissChecked);
      if (nearMiss !== undefined) {
        warnOncePerProcess(`grpc-retry-hedging: ${nearMiss}`, 'GRPC_RETRY_HEDGING_CONFIG_NAME');
      }
    }
    const perCall = readCallRetryOptions(callOptions);
    let policy: CallPolicy | undefined = entry?.policy;
    let callEmit: ((event: RetryEvent) => void) | undefined = emit;
    let policyGivenPerCall = false;
    if (perCall !== undefined) {
      if (!perCall.enabled) {
        policy = undefined;
      } else if (perCall.policy) {
        policy = clampPolicy(perCall.policy, maxAttemptsLimit);
        policyGivenPerCall = true;
      }
      callEmit = chainListeners(emit, perCall.onEvent);
    }
    const timeoutMs = entry?.timeoutMs;
    // A timeout longer than a grpc-js server can time (about 24.8 days) would end the call there at once.
    const options =
      timeoutMs === undefined
        ? callOptions
        : withDeadlineWithin(callOptions, clock.now() + Math.min(timeoutMs, LONGEST_CONFIG_TIMEOUT_MS));
    const waitForReady = entry?.waitForReady;
    if (policy === undefined || policy.maxAttempts < 2) {
      if (hasNoEntries && perCall === undefined) {
        warnEmptyConfig();
      }
      // No policy: hand grpc-js the next call itself (it only uses the InterceptingCall interface), or a thin
      // wrapper when waitForReady must go on the metadata.
      const call = nextCall(options);
      if (waitForReady === undefined) {
        return call as InterceptingCall;
      }
      return new InterceptingCall(call, {
        start(metadata, listener, next) {
          next(withConfigWaitForReady(metadata, waitForReady), listener);
        },
      });
    }
    // grpc-js only uses the InterceptingCall interface, which RetryingCall implements; skipping the wrapper
    // saves a layer of indirection on every operation of every call.
    return new RetryingCall(
      options,
      nextCall,
      policy,
      waitForReady,
      context,
      callEmit,
      policyGivenPerCall,
    ) as unknown as InterceptingCall;
  };
}

/** How many distinct unmatched paths an interceptor asks about near-miss names (each at most once). */
const MAX_NEAR_MISS_CHECKS = 1_000;

/** The call options with the deadline moved up to `deadlineMs` when that comes first (or there was none). */
function withDeadlineWithin(options: InterceptorOptions, deadlineMs: number): InterceptorOptions {
  const given: unknown = options.deadline;
  const unusable =
    given !== undefined &&
    given !== null &&
    !(typeof given === 'number' && !Number.isNaN(given)) &&
    !(given instanceof Date && !Number.isNaN(given.getTime()));
  // A deadline that is no time (a string, NaN, an invalid Date) stays the caller's, for grpc-js to judge as it
  // would without the config's timeout (it throws for a string; NaN ends the call at once): replaced by the
  // timeout, a broken deadline became a wait of that long.
  if (unusable || deadlineToMs(options.deadline) <= deadlineMs) {
    return options;
  }
  return { ...options, deadline: deadlineMs } as InterceptorOptions & CallOptions;
}
