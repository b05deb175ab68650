/**
 * Policies that validate but cannot do what they say, for `check` to warn about (pure): a timeout no retry or
 * hedge fits in, an initialBackoff the cap overrides, `OK` among the codes a call is
 * retried or hedged on, a `retryThrottling` whose first failure throttles, a `tokenRatio` more precise than A6 reads.
 */

import type { JsonPath } from '../config/json-path.js';
import { truncateTokenRatio } from '../config/token-ratio.js';
import type { MethodConfig, ServiceConfig } from '../config/types.js';
import { initialBackoffState, type JitterStrategy, nextBackoff } from '../retry/backoff.js';
import { formatDuration } from './format.js';

/** One such finding, at the JSON path of the value it is about. */
export interface IneffectivePolicy {
  readonly path: JsonPath;
  readonly message: string;
}

/** The status code a call that succeeded ends with. */
const OK = 0;

/**
 * Every ineffective policy of a valid config, entry by entry.
 *
 * @param jitter The interceptor's jitter strategy: it sets how soon the first retry can start.
 */
export function findIneffectivePolicies(config: ServiceConfig, jitter: JitterStrategy): IneffectivePolicy[] {
  return [
    ...config.methodConfig.flatMap((entry, index) => entryFindings(entry, ['methodConfig', index], jitter)),
    ...throttlingFindings(config),
  ];
}

/**
 * A `retryThrottling` of 1 or 2 `maxTokens`: tokens never exceed maxTokens, so the failure a retry (or a hedge
 * after a failure) would follow takes them to maxTokens / 2 or below, where A6 sends no retry or further hedge.
 * Said only when some entry has a policy for it to hold back.
 */
function throttlingFindings(config: ServiceConfig): IneffectivePolicy[] {
  const throttling = config.retryThrottling;
  if (throttling === undefined || throttling.maxTokens - 1 > throttling.maxTokens / 2) {
    return [];
  }
  if (
    !config.methodConfig.some((entry) => entry.retryPolicy !== undefined || entry.hedgingPolicy !== undefined)
  ) {
    return [];
  }
  const { maxTokens } = throttling;
  return [
    {
      path: ['retryThrottling', 'maxTokens'],
      message: `is ${maxTokens}: a failed attempt takes 1 token, leaving ${maxTokens - 1}, which is not above the threshold (maxTokens / 2 = ${maxTokens / 2}), so no retry, nor a hedge after a failure, is ever sent; give maxTokens 3 or more`,
    },
  ];
}

function entryFindings(entry: MethodConfig, path: JsonPath, jitter: JitterStrategy): IneffectivePolicy[] {
  // (An entry with no name is the validator's warning: config-warnings.ts.)
  const found: IneffectivePolicy[] = [];
  const retry = entry.retryPolicy;
  if (retry !== undefined) {
    const retryPath = [...path, 'retryPolicy'];
    if (retry.initialBackoffMs > retry.maxBackoffMs) {
      found.push({
        path: [...retryPath, 'initialBackoff'],
        message: `is longer than maxBackoff (${formatDuration(retry.initialBackoffMs)} > ${formatDuration(retry.maxBackoffMs)}): every backoff is capped at maxBackoff, so initialBackoff has no effect`,
      });
    }
    if (retry.retryableStatusCodes.includes(OK)) {
      found.push({
        path: [...retryPath, 'retryableStatusCodes'],
        message: 'lists OK: a call that succeeds is never retried, so the code has no effect',
      });
    }
    const earliest = nextBackoff(retry, jitter, initialBackoffState(retry), 0).delayMs;
    if (entry.timeoutMs !== undefined && entry.timeoutMs <= earliest) {
      found.push({
        path: [...path, 'timeout'],
        message: `${formatDuration(entry.timeoutMs)} is not longer than the earliest first backoff (${formatDuration(earliest)}, with ${jitter} jitter): no retry can start before the deadline, unless a server pushback asks for one sooner`,
      });
    }
  }
  const hedging = entry.hedgingPolicy;
  if (hedging !== undefined) {
    const hedgingPath = [...path, 'hedgingPolicy'];
    if (hedging.nonFatalStatusCodes.includes(OK)) {
      found.push({
        path: [...hedgingPath, 'nonFatalStatusCodes'],
        message: 'lists OK: the first OK answer ends the call, so the code has no effect',
      });
    }
    if (
      entry.timeoutMs !== undefined &&
      hedging.hedgingDelayMs > 0 &&
      hedging.maxAttempts > 1 &&
      entry.timeoutMs <= hedging.hedgingDelayMs
    ) {
      found.push({
        path: [...path, 'timeout'],
        message: `${formatDuration(entry.timeoutMs)} is not longer than hedgingDelay (${formatDuration(hedging.hedgingDelayMs)}): no hedge is sent on its delay before the deadline, only after a non-fatal failure`,
      });
    }
  }
  return found;
}

/**
 * A `retryThrottling.tokenRatio` written with more than three decimals, which A6 drops: read off the JSON as
 * written (`raw`), since the parsed config holds the truncated ratio.
 */
export function findTokenRatioPrecision(raw: unknown): IneffectivePolicy[] {
  const throttling = isRecord(raw) ? raw.retryThrottling : undefined;
  const ratio = isRecord(throttling) ? throttling.tokenRatio : undefined;
  if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio <= 0) {
    return [];
  }
  const truncated = truncateTokenRatio(ratio);
  if (truncated === ratio || truncated <= 0) {
    return [];
  }
  return [
    {
      path: ['retryThrottling', 'tokenRatio'],
      message: `has more than three decimals, which A6 drops: the ratio is ${truncated}, not ${ratio}`,
    },
  ];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
