/**
 * Policies that validate and work as written, but multiply the load on a server that fails or is overloaded, for
 * `check` to warn about (pure): retries that come at once with nothing to throttle them, retries of
 * RESOURCE_EXHAUSTED with nothing to throttle them, hedges that all go at once, and a `tokenRatio` so large that
 * throttling waits for nearly every attempt to fail.
 *
 * The thresholds are judgement, not spec: A6 allows every one of these. Each message says what the policy does to a
 * failing server, with the config's own numbers, and what to change.
 */

import type { JsonPath } from '../config/json-path.js';
import { clampPolicy } from '../config/method-policy.js';
import type {
  HedgingPolicy,
  MethodConfig,
  RetryPolicy,
  RetryThrottlingConfig,
  ServiceConfig,
} from '../config/types.js';
import { cappedBackoffMs } from '../retry/backoff.js';
import { formatDuration } from './format.js';

/** One such finding, at the JSON path of the value it is about. */
export interface LoadAmplifyingPolicy {
  readonly path: JsonPath;
  readonly message: string;
}

/**
 * A first backoff shorter than this retries at once, for load: a server that failed an attempt gets its retry
 * before anything about it can have changed. (10 ms, the shortest backoff of the examples and docs, is not found.)
 */
export const IMMEDIATE_RETRY_MS = 10;

/**
 * A `tokenRatio` whose throttling waits for this share of attempts (or more) to fail before it limits retries: with
 * ratio r, tokens fall only while failures outnumber successes r to 1, a failing share above r / (1 + r).
 */
export const LENIENT_THROTTLING_SHARE = 0.9;

/** The status code of a server out of capacity or quota. */
const RESOURCE_EXHAUSTED = 8;

/** How a RESOURCE_EXHAUSTED warning starts, for retries and for hedges alike. */
const EXHAUSTED_UNTHROTTLED =
  'lists RESOURCE_EXHAUSTED, which a server returns when it is out of capacity or quota, and no retryThrottling limits';

/** The remedy, and what `check` cannot see (a gate given to the interceptor in code limits retries as well). */
const ADD_THROTTLING =
  'add retryThrottling (A6 limits retries and hedges across calls once many fail), or give the interceptor a ' +
  'gate such as a RetryBudget (not visible to check)';

/**
 * Every load-amplifying policy of a valid config, entry by entry, then its throttling.
 *
 * @param maxAttemptsLimit The attempt limit the interceptor applies (5 unless raised), for the attempts quoted.
 */
export function findLoadAmplifyingPolicies(
  config: ServiceConfig,
  maxAttemptsLimit: number,
): LoadAmplifyingPolicy[] {
  const throttling = config.retryThrottling;
  return [
    ...config.methodConfig.flatMap((entry, index) =>
      entryFindings(entry, ['methodConfig', index], maxAttemptsLimit, throttling !== undefined),
    ),
    ...(throttling === undefined ? [] : throttlingFindings(throttling)),
  ];
}

function entryFindings(
  entry: MethodConfig,
  path: JsonPath,
  limit: number,
  throttled: boolean,
): LoadAmplifyingPolicy[] {
  return [
    ...(entry.retryPolicy === undefined || throttled
      ? []
      : unthrottledRetryFindings(entry.retryPolicy, [...path, 'retryPolicy'], limit)),
    ...(entry.hedgingPolicy === undefined
      ? []
      : hedgingFindings(entry.hedgingPolicy, [...path, 'hedgingPolicy'], limit, throttled)),
  ];
}

/** A retry policy's findings when no retryThrottling limits its retries. */
function unthrottledRetryFindings(retry: RetryPolicy, path: JsonPath, limit: number): LoadAmplifyingPolicy[] {
  const attempts = clampPolicy(retry, limit).maxAttempts;
  if (attempts <= 1) {
    return [];
  }
  const found: LoadAmplifyingPolicy[] = [];
  const first = cappedBackoffMs(retry, 1);
  if (first < IMMEDIATE_RETRY_MS) {
    const field = retry.initialBackoffMs < IMMEDIATE_RETRY_MS ? 'initialBackoff' : 'maxBackoff';
    let spread = 0;
    for (let n = 1; n < attempts; n++) {
      spread += cappedBackoffMs(retry, n);
    }
    found.push({
      path: [...path, field],
      message:
        `makes the first retry come ${formatDuration(first)} after a failure, and no retryThrottling limits ` +
        `retries: while a server fails, each call sends it ${attempts} attempts within about ` +
        `${formatDuration(spread)}, ${attempts}× the load of calls that are not retried; ${ADD_THROTTLING}, or ` +
        `start the backoff at ${formatDuration(IMMEDIATE_RETRY_MS)} or more`,
    });
  }
  if (retry.retryableStatusCodes.includes(RESOURCE_EXHAUSTED)) {
    found.push({
      path: [...path, 'retryableStatusCodes'],
      message:
        `${EXHAUSTED_UNTHROTTLED} retries: each such call sends up to ${attempts - 1} more attempts to a server ` +
        'that is already overloaded, as soon as the backoff allows unless the server says when to come back ' +
        `(grpc-retry-pushback-ms, google.rpc.RetryInfo); ${ADD_THROTTLING}, or leave the code out`,
    });
  }
  return found;
}

function hedgingFindings(
  hedging: HedgingPolicy,
  path: JsonPath,
  limit: number,
  throttled: boolean,
): LoadAmplifyingPolicy[] {
  const attempts = clampPolicy(hedging, limit).maxAttempts;
  if (attempts <= 1) {
    return [];
  }
  const found: LoadAmplifyingPolicy[] = [];
  if (hedging.hedgingDelayMs === 0) {
    found.push({
      path: [...path, 'hedgingDelay'],
      message:
        `is 0s or left out: every call sends all ${attempts} attempts at once, ${attempts}× the load of calls that ` +
        'are not hedged even when nothing fails (throttling does not limit them then); a delay near the latency ' +
        'most calls answer within (their p95, say) hedges only the slow ones',
    });
  }
  if (!throttled && hedging.nonFatalStatusCodes.includes(RESOURCE_EXHAUSTED)) {
    found.push({
      path: [...path, 'nonFatalStatusCodes'],
      message:
        `${EXHAUSTED_UNTHROTTLED} hedges: each such answer sends the next hedge at once, up to ${attempts} ` +
        `attempts a call to a server that is already overloaded; ${ADD_THROTTLING}, or leave the code out`,
    });
  }
  return found;
}

function throttlingFindings(throttling: RetryThrottlingConfig): LoadAmplifyingPolicy[] {
  const ratio = throttling.tokenRatio;
  const share = ratio / (1 + ratio);
  if (share < LENIENT_THROTTLING_SHARE) {
    return [];
  }
  const percent = Math.floor(share * 1000) / 10;
  return [
    {
      path: ['retryThrottling', 'tokenRatio'],
      message:
        `gives back ${ratio} tokens for each success, against 1 for each failure: retries and hedges are ` +
        `throttled only while more than ${percent}% of attempts fail, so a server failing most calls still gets ` +
        "every retry; a ratio of 0.1 (A6's example) throttles once more than about 9% fail",
    },
  ];
}
