import { DEFAULT_MAX_ATTEMPTS_LIMIT } from '../config/types.js';
import type { AdaptiveHedging } from '../hedging/adaptive-hedging-delay.js';
import type { AdaptiveHedgingOptions } from '../hedging/adaptive-hedging-options.js';
import {
  type ResolvedAdaptiveHedging,
  resolveAdaptiveHedgingPerTarget,
} from '../hedging/adaptive-hedging-per-target.js';
import { resolveCancelLimits } from '../hedging/cancel-rate-limit-option.js';
import type { CancelRateLimiter, CancelRateLimiterOptions } from '../hedging/cancel-rate-limiter.js';
import type { CancelLimits } from '../shared/cancel-limiter.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { isRetryGate, type RetryGate } from '../shared/retry-gate.js';
import { guardedClockOption } from '../util/guarded-clock.js';
import {
  checkBoolean,
  checkFunction,
  checkNumber,
  checkOptions,
  describeValue,
  type Renames,
} from '../util/option-checks.js';
import { sharedSafeListener } from '../util/safe-listener.js';
import { isJitterStrategy, JITTER_STRATEGIES, type JitterStrategy } from './backoff.js';
import type { RetryEvent, RetryEventListener } from './events.js';
import { guardedGate, guardedRandom } from './guarded-hooks.js';
import { type RetryInfoOptions, retryInfoPolicy } from './retry-info-option.js';
import type { RetryInfoPolicy } from './server-hint.js';

/** Options of {@link createRetryInterceptor}. */
export interface RetryInterceptorOptions {
  /** Client-side cap on maxAttempts of every policy (A6: 5). Larger values in the config are clamped to it. */
  readonly maxAttemptsLimit?: number | undefined;
  /**
   * Replay-buffer limit of one call, in bytes (default 1 MiB). Each message counts its serialized size, its 5-byte
   * frame header and the buffer's own overhead per message. A call that exceeds it commits.
   */
  readonly perRpcBufferBytes?: number | undefined;
  /** Replay-buffer limit shared by all calls of this interceptor (default 16 MiB), counted the same way. */
  readonly totalBufferBytes?: number | undefined;
  /**
   * What decides whether a retry or a further hedge may go, instead of the A6 throttle built from the config's
   * `retryThrottling`: a `RetryThrottle`, a `RetryBudget`, or any object that implements {@link RetryGate}. Share
   * one instance between interceptors or clients that talk to the same server so that they throttle together.
   * A gate that throws never reaches grpc-js: `allowAttempt` then refuses the attempt, and the error is reported
   * once as a warning (`GRPC_RETRY_HEDGING_HOOK_ERROR`).
   */
  readonly gate?: RetryGate | undefined;
  /**
   * Source of uniform random numbers in [0, 1) for jitter (default Math.random); inject one for tests. A draw that
   * throws or falls outside [0, 1) is taken from Math.random instead, reported once (`GRPC_RETRY_HEDGING_HOOK_ERROR`).
   */
  readonly random?: (() => number) | undefined;
  /** Source of time and timers (default: the system clock); inject a fake one for tests. */
  readonly clock?: Clock | undefined;
  /** How backoff delays are randomized (default `'a6'`); see {@link JitterStrategy}. */
  readonly jitter?: JitterStrategy | undefined;
  /**
   * Receives a typed event for every attempt, retry, hedge, gate decision, commit and call end. Pass an array to
   * feed several listeners (metrics and tracing, say), called in order.
   */
  readonly onEvent?: RetryEventListener | readonly RetryEventListener[] | undefined;
  /**
   * Opt-in: do not start a backoff that would end after the call's deadline; end at once with the last
   * attempt's real status instead of waiting for DEADLINE_EXCEEDED. Under hedging, the same for a server's delay
   * (pushback or RetryInfo) before the next hedge when no attempt is in flight. Off by default (A6 behaviour).
   */
  readonly deadlineAwareBackoff?: boolean | undefined;
  /**
   * Check, before a retry or hedge resends the request, that each message still serializes as it did when written
   * (default true): a message the application changed after its write callback is not resent as changed (the call
   * makes no further attempt). A serializer whose output is not the same from one call to the next (a random IV, a
   * nonce) is recognized and its messages resent unchecked; set false for one that differs only sometimes (a
   * timestamp at millisecond resolution), whose calls would otherwise not be retried.
   */
  readonly checkResentRequests?: boolean | undefined;
  /**
   * How `google.rpc.RetryInfo` hints in a failed attempt's status details are honoured (default: honoured, capped
   * at 60 s). The delay acts like a pushback: the next retry or hedge goes after it and the backoff restarts; A6's
   * `grpc-retry-pushback-ms` trailer wins when both are present; it never makes a non-retryable code retryable; a
   * delay over `maxDelayMs` ends the call with its status. `false` ignores RetryInfo; `true` is the default.
   */
  readonly retryInfo?: boolean | RetryInfoOptions | undefined;
  /**
   * Opt-in adaptive hedging: the delay before each further hedge is the method's observed latency quantile
   * 1 − 0.9 × maxExtraLoad (p95.5 by default), and a budget holds hedges to maxExtraLoad of the calls. `true`, an
   * options object, or an `AdaptiveHedging` you built (to share it or read its delays). Its clock defaults to the
   * interceptor's `clock`. With `true` or options the interceptor keeps one per target its calls go to (delays and
   * budget), so that clients of servers with different latencies can share it; one you pass serves every target.
   */
  readonly adaptiveHedging?: boolean | AdaptiveHedgingOptions | AdaptiveHedging | undefined;
  /**
   * Limit on cancellations of losing attempts (each an HTTP/2 RST_STREAM), below Node's rapid-reset guard. On by
   * default (burst 250, then 25/s per target); beyond it a losing hedge or a timed-out attempt runs to completion
   * and its result is discarded (an `attempt-left-running` event says so). The guard counts per connection; the
   * limit is kept per target (the channel's target, which grpc-js serves with one connection for every client with
   * the same channel options) and shared by every interceptor of the process with the same settings. `false`
   * cancels every loser at once; options set the limit per target; a `CancelRateLimiter` of yours is one limit for
   * every cancel of the interceptors you give it to.
   */
  readonly cancelRateLimit?: boolean | CancelRateLimiterOptions | CancelRateLimiter | undefined;
}

/** Default per-call replay-buffer limit (grpc-js's default). */
export const DEFAULT_PER_RPC_BUFFER_BYTES = 1024 * 1024;
/** Default total replay-buffer limit of one interceptor (grpc-js's default). */
export const DEFAULT_TOTAL_BUFFER_BYTES = 16 * 1024 * 1024;

const KNOWN_OPTIONS: readonly (keyof RetryInterceptorOptions)[] = [
  'maxAttemptsLimit',
  'perRpcBufferBytes',
  'totalBufferBytes',
  'gate',
  'random',
  'clock',
  'jitter',
  'onEvent',
  'deadlineAwareBackoff',
  'checkResentRequests',
  'retryInfo',
  'adaptiveHedging',
  'cancelRateLimit',
];

/** Options with every default filled in and every value checked. @internal */
export interface ResolvedInterceptorOptions {
  readonly maxAttemptsLimit: number;
  readonly perRpcBufferBytes: number;
  readonly totalBufferBytes: number;
  readonly gate: RetryGate | undefined;
  readonly random: () => number;
  readonly clock: Clock;
  readonly jitter: JitterStrategy;
  readonly onEvent: ((event: RetryEvent) => void) | undefined;
  readonly deadlineAwareBackoff: boolean;
  readonly checkResentRequests: boolean;
  readonly retryInfo: RetryInfoPolicy | undefined;
  /** One `AdaptiveHedging` you passed for every call, or with `true` or options the interceptor's own per target. */
  readonly adaptiveHedging: ResolvedAdaptiveHedging;
  readonly cancelLimits: CancelLimits | undefined;
}

/** Where option errors point: `createRetryInterceptor: options.maxAttemptsLimit must be ...`. */
const PATH = 'createRetryInterceptor: options';

/** Options renamed before 1.0 (see CHANGELOG): the old name is an error naming the new one. */
const RENAMED_OPTIONS: Renames = {
  throttle: { now: 'gate', hint: 'it takes a RetryThrottle, a RetryBudget or any RetryGate' },
};

/** Check the options of {@link createRetryInterceptor}; unknown keys and bad values throw a TypeError/RangeError. @internal */
export function resolveInterceptorOptions(options: unknown): ResolvedInterceptorOptions {
  const o = checkOptions(PATH, options, KNOWN_OPTIONS, RENAMED_OPTIONS) as RetryInterceptorOptions;
  // Called from grpc-js callbacks and timers: guarded, so that a clock that throws cannot end the process.
  const clock = guardedClockOption(PATH, 'clock', o.clock) ?? systemClock;
  // Left out, not null: null is refused as every other option's is.
  const jitter = o.jitter === undefined ? 'a6' : o.jitter;
  if (!isJitterStrategy(jitter)) {
    throw new TypeError(
      `${PATH}.jitter must be one of ${JITTER_STRATEGIES.join(', ')}, got ${describeValue(jitter)}`,
    );
  }
  if (o.gate !== undefined && !isRetryGate(o.gate)) {
    throw new TypeError(
      `${PATH}.gate must be a retry gate (an object with allowAttempt, recordFailure and recordSuccess methods), such as a RetryThrottle, got ${describeValue(o.gate)}`,
    );
  }
  const random = checkFunction<() => number>(
    PATH,
    'random',
    o.random,
    'a function returning a number in [0, 1)',
  );
  return {
    maxAttemptsLimit: checkNumber(PATH, 'maxAttemptsLimit', o.maxAttemptsLimit, DEFAULT_MAX_ATTEMPTS_LIMIT, {
      min: 1,
      integer: true,
    }),
    perRpcBufferBytes: checkNumber(
      PATH,
      'perRpcBufferBytes',
      o.perRpcBufferBytes,
      DEFAULT_PER_RPC_BUFFER_BYTES,
      {
        min: 0,
        integer: true,
        unit: 'bytes',
      },
    ),
    totalBufferBytes: checkNumber(PATH, 'totalBufferBytes', o.totalBufferBytes, DEFAULT_TOTAL_BUFFER_BYTES, {
      min: 0,
      integer: true,
      unit: 'bytes',
    }),
    gate: o.gate === undefined ? undefined : guardedGate(o.gate),
    random: random === undefined ? Math.random : guardedRandom(random),
    clock,
    jitter,
    onEvent: listenerOf(o.onEvent, `${PATH}.onEvent`),
    deadlineAwareBackoff: checkBoolean(PATH, 'deadlineAwareBackoff', o.deadlineAwareBackoff, false),
    checkResentRequests: checkBoolean(PATH, 'checkResentRequests', o.checkResentRequests, true),
    retryInfo: retryInfoPolicy(o.retryInfo),
    adaptiveHedging: resolveAdaptiveHedgingPerTarget(
      withClock(o.adaptiveHedging, clock),
      `${PATH}.adaptiveHedging`,
    ),
    cancelLimits: resolveCancelLimits(
      withClock(o.cancelRateLimit === undefined ? true : o.cancelRateLimit, clock),
      `${PATH}.cancelRateLimit`,
    ),
  };
}

/** One safe listener out of a listener, an array of them, or nothing; `path` names the option. @internal */
export function listenerOf(
  value: RetryEventListener | readonly RetryEventListener[] | undefined,
  path: string,
): ((event: RetryEvent) => void) | undefined {
  if (value === undefined) {
    return undefined;
  }
  const list = Array.isArray(value) ? value : [value];
  for (const listener of list) {
    if (typeof listener !== 'function') {
      throw new TypeError(`${path} must be a function or an array of functions, got ${describeValue(value)}`);
    }
  }
  // One wrapper per function, shared by every call that passes it, so that a throwing listener warns once.
  const safe = (list as RetryEventListener[]).map((listener) =>
    sharedSafeListener(listener, 'the onEvent listener'),
  );
  if (safe.length === 0) {
    return undefined;
  }
  if (safe.length === 1) {
    return safe[0];
  }
  return (event) => {
    for (const listener of safe) {
      listener(event);
    }
  };
}

/** Chain two optional listeners. @internal */
export function chainListeners(
  first: ((event: RetryEvent) => void) | undefined,
  second: ((event: RetryEvent) => void) | undefined,
): ((event: RetryEvent) => void) | undefined {
  if (!first) {
    return second;
  }
  if (!second) {
    return first;
  }
  return (event) => {
    first(event);
    second(event);
  };
}

/**
 * An options object (or `true`) gets the interceptor's clock unless it names its own (a `clock: undefined` names
 * none, as everywhere an undefined option is the default); anything else is kept.
 */
function withClock<T>(option: T, clock: Clock): T | { clock: Clock } {
  if (option === true) {
    return { clock };
  }
  if (
    typeof option === 'object' &&
    option !== null &&
    !Array.isArray(option) &&
    Object.getPrototypeOf(option) === Object.prototype
  ) {
    const own = (option as { clock?: unknown }).clock;
    return { ...(option as object), clock: own === undefined ? clock : own } as T;
  }
  return option;
}
