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
import type { MethodConfig, RetryThrottlingConfig, ServiceConfig } from '../config/types.js';
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
  const throttled = config.retryThrottling !== undefined;
  return [
    ...config.methodConfig.flatMap((entry, index) =>
      entryFindings(entry, ['methodConfig', index], maxAttemptsLimit, throttled),
    ),
    ...(config.retryThrottling === undefined ? [] : throttlingFindings(config.retryThrottling)),
  ];
}

function entryFindings(
  entry: MethodConfig,
  path: JsonPath,
  limit: number,
  throttled: boolean,
): LoadAmplifyingPolicy[] {
  const found: LoadAmplifyingPolicy[] = [];
  const retry = entry.retryPolicy;
  if (retry !== undefined) {
    const attempts = clampPolicy(retry, limit).maxAttempts;
    const retryPath = [...path, 'retryPolicy'];
    const first = cappedBackoffMs(retry, 1);
    if (!throttled && attempts > 1 && first < IMMEDIATE_RETRY_MS) {
      const field = retry.initialBackoffMs < IMMEDIATE_RETRY_MS ? 'initialBackoff' : 'maxBackoff';
      let spread = 0;
      for (let n = 1; n < attempts; n++) {
        spread += cappedBackoffMs(retry, n);
      }
      found.push({
        path: [...retryPath, field],
        message:
          `makes the first retry come ${formatDuration(first)} after a failure, and no retryThrottling limits ` +
          `retries: while a server fails, each call sends it ${attempts} attempts within about ` +
          `${formatDuration(spread)}, ${attempts}× the load of calls that are not retried; ${ADD_THROTTLING}, or ` +
          `start the backoff at ${formatDuration(IMMEDIATE_RETRY_MS)} or more`,
      });
    }
    if (!throttled && attempts > 1 && retry.retryableStatusCodes.includes(RESOURCE_EXHAUSTED)) {
      found.push({
        path: [...retryPath, 'retryableStatusCodes'],
        message:
          'lists RESOURCE_EXHAUSTED, which a server returns when it is out of capacity or quota, and no ' +
          `retryThrottling limits retries: each such call sends up to ${attempts - 1} more attempts to a server ` +
          `that is already overloaded, as soon as the backoff allows unless the server says when to come back ` +
          `(grpc-retry-pushback-ms, google.rpc.RetryInfo); ${ADD_THROTTLING}, or leave the code out`,
      });
    }
  }
  const hedging = entry.hedgingPolicy;
  if (hedging !== undefined) {
    const attempts = clampPolicy(hedging, limit).maxAttempts;
    const hedgingPath = [...path, 'hedgingPolicy'];
    if (attempts > 1 && hedging.hedgingDelayMs === 0) {
      found.push({
        path: [...hedgingPath, 'hedgingDelay'],
        message:
          `is 0s or left out: every call sends all ${attempts} attempts at once, ${attempts}× the load of calls that are not ` +
          'hedged even when nothing fails (throttling does not limit them then); a delay near the latency most ' +
          'calls answer within (their p95, say) hedges only the slow ones',
      });
    }
    if (!throttled && attempts > 1 && hedging.nonFatalStatusCodes.includes(RESOURCE_EXHAUSTED)) {
      found.push({
        path: [...hedgingPath, 'nonFatalStatusCodes'],
        message:
          'lists RESOURCE_EXHAUSTED, which a server returns when it is out of capacity or quota, and no ' +
          `retryThrottling limits hedges: each such answer sends the next hedge at once, up to ${attempts} ` +
          `attempts a call to a server that is already overloaded; ${ADD_THROTTLING}, or leave the code out`,
      });
    }
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
