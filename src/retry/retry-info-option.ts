/**
 * The interceptor option `retryInfo`: its validation, and what the call engine takes from it.
 */
import type { Metadata } from '@grpc/grpc-js';
import { describeValue, didYouMean } from '../util/option-checks.js';
import {
  DEFAULT_RETRY_INFO_MAX_DELAY_MS,
  MAX_RETRY_INFO_DELAY_LIMIT_MS,
  parseRetryInfo,
} from './retry-info.js';
import type { RetryInfoPolicy } from './server-hint.js';

/**
 * Interceptor option `retryInfo` as an object: how the engine treats `google.rpc.RetryInfo` hints. Like every
 * on/off option of the interceptor, `retryInfo` itself may also be `true` (the defaults) or `false` (hints
 * ignored: the details are not even decoded).
 */
export interface RetryInfoOptions {
  /**
   * Longest delay honoured, in ms (default {@link DEFAULT_RETRY_INFO_MAX_DELAY_MS}, 60 s; at most 2^31 - 1).
   * A longer delay ends the call with the attempt's status instead of sleeping.
   */
  maxDelayMs?: number | undefined;
}

/** {@link RetryInfoOptions} with defaults applied. */
export interface ResolvedRetryInfoOptions {
  readonly enabled: boolean;
  readonly maxDelayMs: number;
}

const RETRY_INFO_OPTION_KEYS: ReadonlySet<string> = new Set(['maxDelayMs']);

/**
 * Validates the interceptor option `retryInfo` and applies its defaults.
 *
 * @param value the option as the user passed it (`undefined` or `true`: defaults; `false`: off).
 * @param where prefix for error messages.
 * @throws TypeError for a value that is neither a boolean nor an object, an unknown key, or the removed `enabled`
 *   key; RangeError for a `maxDelayMs` that is not an integer in [0, 2^31 - 1]. Each names the option.
 */
export function resolveRetryInfoOptions(
  value: unknown,
  where = 'createRetryInterceptor: options.retryInfo',
): ResolvedRetryInfoOptions {
  if (value === undefined || typeof value === 'boolean') {
    return { enabled: value !== false, maxDelayMs: DEFAULT_RETRY_INFO_MAX_DELAY_MS };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `${where} must be true, false or an object { maxDelayMs? }, got ${describeValue(value)}`,
    );
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key === 'enabled') {
      throw new TypeError(
        `${where}.enabled was removed: write retryInfo: false to turn RetryInfo off (true, or an object, turns it on)`,
      );
    }
    if (!RETRY_INFO_OPTION_KEYS.has(key)) {
      throw new TypeError(
        `${where}.${key} is not an option${didYouMean(key, ['maxDelayMs'])} (known: maxDelayMs)`,
      );
    }
  }
  const maxDelayMs = record.maxDelayMs ?? DEFAULT_RETRY_INFO_MAX_DELAY_MS;
  if (
    typeof maxDelayMs !== 'number' ||
    !Number.isInteger(maxDelayMs) ||
    maxDelayMs < 0 ||
    maxDelayMs > MAX_RETRY_INFO_DELAY_LIMIT_MS
  ) {
    throw new RangeError(
      `${where}.maxDelayMs must be an integer from 0 to ${MAX_RETRY_INFO_DELAY_LIMIT_MS} (ms), got ${describeValue(maxDelayMs)}`,
    );
  }
  return { enabled: true, maxDelayMs };
}

/**
 * The engine's reader (`RetryInfoReader` of server-hint.ts): the RetryInfo delay in ms, or `undefined` when the
 * trailers hold none or a malformed one (a malformed hint is ignored, see {@link RetryInfo}). Never throws.
 */
export function readRetryInfoDelayMs(trailers: Metadata): number | undefined {
  const info = parseRetryInfo(trailers);
  return info.kind === 'retry-after' ? info.delayMs : undefined;
}

/**
 * Turns the interceptor option `retryInfo` into what the call engine takes (`RetryingCallContext.retryInfo`):
 * `undefined` when RetryInfo is switched off, else the reader and the cap.
 *
 * @throws TypeError/RangeError naming the option, as {@link resolveRetryInfoOptions}.
 */
export function retryInfoPolicy(value: unknown): RetryInfoPolicy | undefined {
  const { enabled, maxDelayMs } = resolveRetryInfoOptions(value);
  return enabled ? { read: readRetryInfoDelayMs, maxDelayMs } : undefined;
}
