import { type CallOptions, Metadata } from '@grpc/grpc-js';
import { parseCallPolicy } from '../config/parse-service-config.js';
import type { HedgingPolicyJson, RetryPolicyJson } from '../config/service-config-json.js';
import type { CallPolicy } from '../config/types.js';
import { checkBoolean, checkOptions, describeValue, isThenable } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { checkCallPolicy, isCallPolicyForm } from './call-policy-check.js';
import type { RetryEvent, RetryEventListener } from './events.js';
import { chainListeners, listenerOf } from './interceptor-options.js';

/**
 * Where per-call retry options travel inside grpc-js `CallOptions` (grpc-js hands the call options, symbol keys
 * included, to every interceptor).
 * @internal
 */
export const CALL_RETRY_OPTIONS: unique symbol = Symbol.for('grpc-retry-hedging.call-retry-options');

/** A policy in service-config form, as it would appear inside a methodConfig entry. */
export type PolicyOverride =
  | { readonly retryPolicy: RetryPolicyJson }
  | { readonly hedgingPolicy: HedgingPolicyJson };

/** Per-call control of the retry interceptor; see {@link withRetryOptions}. */
export interface CallRetryOptions {
  /**
   * `false`: this call makes a single attempt, with no retries and no hedges. Default true. Not with `policy`:
   * the two together are refused, since the policy would never be read.
   */
  readonly enabled?: boolean | undefined;
  /**
   * Use this policy for the call instead of the one the service config gives its method, in service-config form:
   * `{ retryPolicy: {...} }` or `{ hedgingPolicy: {...} }`, or in the interceptor's own form (what
   * `findMethodPolicy` returns: `{ kind: 'retry', maxAttempts, initialBackoffMs, ... }`). Either is validated by
   * {@link withRetryOptions}, and its maxAttempts is clamped to the interceptor's limit.
   */
  readonly policy?: PolicyOverride | CallPolicy | undefined;
  /** A listener (or several) for this call's events, called after the interceptor's own `onEvent`. */
  readonly onEvent?: RetryEventListener | readonly RetryEventListener[] | undefined;
}

/** Validated per-call options, as the interceptor reads them. @internal */
export interface ResolvedCallRetryOptions {
  readonly enabled: boolean;
  readonly policy: CallPolicy | undefined;
  readonly onEvent: ((event: RetryEvent) => void) | undefined;
}

const KNOWN_KEYS: readonly (keyof CallRetryOptions)[] = ['enabled', 'policy', 'onEvent'];

/** Where option errors point: `withRetryOptions: options.enabled must be ...`. */
const PATH = 'withRetryOptions: options';

/**
 * Call options that steer the retry interceptor for one call. Pass the result as the call's options:
 *
 * ```ts
 * client.getUser(request, withRetryOptions({ enabled: false }), callback);
 * client.getUser(request, metadata, withRetryOptions({ policy: { hedgingPolicy: {...} } }, { deadline }), cb);
 * ```
 * Given call options that already carry retry options (an earlier `withRetryOptions`, say a helper's), the two
 * merge: what `retry` sets wins (a policy it gives turns retries back on after an earlier `enabled: false`), and
 * the listeners of both are called, the earlier ones first.
 *
 * @param retry What to change for this call.
 * @param callOptions Ordinary grpc-js call options to keep (deadline, credentials, ...).
 * @returns A new call options object; `callOptions` is not modified.
 * @throws ServiceConfigError (path `policy...`) when the policy override is invalid; TypeError for other bad input,
 *   including `enabled: false` together with a policy, which would never be read, a Promise for either argument,
 *   a grpc.Metadata as `callOptions`, a `deadline` that is not a Date or a number, and a `waitForReady` among the
 *   call options (grpc-js reads it from the metadata only: `metadata.setOptions({ waitForReady: true })`).
 */
export function withRetryOptions(retry: CallRetryOptions, callOptions: CallOptions = {}): CallOptions {
  if (retry === undefined) {
    throw new TypeError(`${PATH} must be an object such as { enabled: false }, got nothing`);
  }
  checkOptions(PATH, retry, KNOWN_KEYS);
  checkCallOptions(callOptions);
  const enabled = checkBoolean(PATH, 'enabled', retry.enabled, true);
  if (!enabled && retry.policy !== undefined) {
    throw new TypeError(
      `${PATH}: enabled is false and a policy is given; a call with retries off makes one attempt and never reads the policy, so drop one of them (a policy with maxAttempts 1 also makes one attempt)`,
    );
  }
  const policy =
    retry.policy === undefined
      ? undefined
      : isCallPolicyForm(retry.policy)
        ? checkCallPolicy(`${PATH}.policy`, retry.policy)
        : parseCallPolicy(retry.policy);
  const onEvent = listenerOf(retry.onEvent, `${PATH}.onEvent`);
  const earlier = callOptions === null ? undefined : readCallRetryOptions(callOptions);
  const resolved: ResolvedCallRetryOptions =
    earlier === undefined
      ? { enabled, policy, onEvent }
      : {
          // A later policy with `enabled` left out is what the later options set: it wins over an earlier
          // `enabled: false`, which would otherwise leave it silently unread.
          enabled: retry.enabled === undefined && policy === undefined ? earlier.enabled : enabled,
          policy: policy ?? earlier.policy,
          onEvent: chainListeners(earlier.onEvent, onEvent),
        };
  return { ...callOptions, [CALL_RETRY_OPTIONS]: resolved } as CallOptions;
}

/** What `callOptions` must be, for its errors. */
const CALL_OPTIONS =
  'withRetryOptions: callOptions must be grpc-js call options (an object such as { deadline })';

/**
 * `callOptions` is grpc-js call options or null (taken as none, as it was before): not a Promise, not the call's
 * Metadata (the argument before it), with no `waitForReady` (a metadata option, which grpc-js ignores here), and
 * with a deadline grpc-js can read.
 */
function checkCallOptions(callOptions: unknown): void {
  if (callOptions === null) {
    return;
  }
  if (isThenable(callOptions)) {
    throw new TypeError(`${CALL_OPTIONS}, got a Promise; await it and pass what it resolves to`);
  }
  if (typeof callOptions !== 'object' || Array.isArray(callOptions)) {
    throw new TypeError(`${CALL_OPTIONS}, got ${describeValue(callOptions)}`);
  }
  if (isMetadata(callOptions)) {
    throw new TypeError(
      `${CALL_OPTIONS}, got a grpc.Metadata; the metadata is an argument of its own, before the call options: client.method(request, metadata, withRetryOptions(...), callback)`,
    );
  }
  if (Object.hasOwn(callOptions, 'waitForReady')) {
    // grpc-js reads waitForReady from the call's metadata only; in the call options it is dropped without a word.
    throw new TypeError(
      "withRetryOptions: callOptions.waitForReady is not a grpc-js call option (grpc-js ignores it there, and the call would not wait); set it on the call's metadata: metadata.setOptions({ waitForReady: true })",
    );
  }
  const { deadline } = callOptions as { deadline?: unknown };
  if (deadline === undefined || deadline === null || isValidDeadline(deadline)) {
    return;
  }
  const given = deadline instanceof Date ? 'an invalid Date' : describeValue(deadline);
  throw new TypeError(
    `withRetryOptions: callOptions.deadline must be a Date or a number (ms since the epoch, such as Date.now() + 1000; Infinity for none), got ${given}${wrongTypeHint(deadline, 'number')}`,
  );
}

/** A deadline grpc-js reads: a Date that holds a time, or a number (Infinity: none), not NaN. */
function isValidDeadline(deadline: unknown): boolean {
  if (deadline instanceof Date) {
    return !Number.isNaN(deadline.getTime());
  }
  return typeof deadline === 'number' && !Number.isNaN(deadline);
}

/** A grpc-js Metadata (of whichever copy of grpc-js made it). */
function isMetadata(value: object): boolean {
  if (value instanceof Metadata) {
    return true;
  }
  const v = value as Record<string, unknown>;
  return typeof v.getMap === 'function' && typeof v.toHttp2Headers === 'function';
}

/** The per-call options grpc-js passed along to the interceptor, if any. @internal */
export function readCallRetryOptions(callOptions: CallOptions): ResolvedCallRetryOptions | undefined {
  return (callOptions as { [CALL_RETRY_OPTIONS]?: ResolvedCallRetryOptions })[CALL_RETRY_OPTIONS];
}
