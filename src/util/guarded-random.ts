/**
 * An application's random source as the library draws from it: from inside grpc-js callbacks and timers (the retry
 * engine's jitter, a RetryBudget's fractional retries), where an exception would escape as an uncaught one. A
 * source that throws or gives a number outside [0, 1) is reported once per source as a process warning
 * (`GRPC_RETRY_HEDGING_HOOK_ERROR`), and the draw comes from `Math.random`. The interceptor's gate is guarded the
 * same way (src/retry/guarded-hooks.ts).
 * @internal
 */

import { errorMessage as describeError } from './error-message.js';
import { describeValue } from './option-checks.js';
import { warnOncePerProcess } from './warn-once.js';

const CODE = 'GRPC_RETRY_HEDGING_HOOK_ERROR';

/** Reports the first error of each hook (`key`), not the ones after it. */
export function hookReporter(): (key: string, message: string) => void {
  const warned = new Set<string>();
  return (key, message) => {
    if (!warned.has(key)) {
      warned.add(key);
      warnOncePerProcess(`grpc-retry-hedging: ${message}; further errors of it are not reported`, CODE);
    }
  };
}

/**
 * `random`, never throwing and always in [0, 1): a throw or a value outside it is a draw of `Math.random`.
 * @param path The options it came from, for the warning (the interceptor's, a RetryBudget's).
 */
export function guardedRandom(random: () => number, path = 'createRetryInterceptor: options'): () => number {
  const report = hookReporter();
  return () => {
    let value: unknown;
    try {
      value = random();
    } catch (error) {
      report('random', `${path}.random threw (${thrownMessage(error)}); Math.random is drawn instead`);
      return Math.random();
    }
    if (typeof value !== 'number' || !(value >= 0 && value < 1)) {
      report(
        'random',
        `${path}.random must return a number in [0, 1), got ${describeValue(value)}; Math.random is drawn instead`,
      );
      return Math.random();
    }
    return value;
  };
}

/** What was thrown, for the warning; never throws itself (a thrown value may have a throwing toString). */
export function thrownMessage(error: unknown): string {
  try {
    return describeError(error);
  } catch {
    return 'a value that cannot be shown';
  }
}
