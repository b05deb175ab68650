/**
 * Policies whose maxAttempts is above the client's attempt limit (5 by default, as A6 sets it): the calls make at
 * most the limit's attempts, as A6 requires, which the config does not say. `check` warns of them, and so does
 * `createRetryInterceptor` (pure).
 */
import type { JsonPath } from './json-path.js';
import type { ServiceConfig } from './types.js';

/** A maxAttempts over the limit, at its JSON path. */
export interface AttemptLimitExcess {
  readonly path: JsonPath;
  readonly maxAttempts: number;
}

/** Every retryPolicy or hedgingPolicy of `config` whose maxAttempts is above `maxAttemptsLimit`, in order. */
export function findAttemptLimitExcess(
  config: ServiceConfig,
  maxAttemptsLimit: number,
): AttemptLimitExcess[] {
  return config.methodConfig.flatMap((entry, index) => {
    const [kind, policy] =
      entry.retryPolicy !== undefined
        ? (['retryPolicy', entry.retryPolicy] as const)
        : (['hedgingPolicy', entry.hedgingPolicy] as const);
    return policy !== undefined && policy.maxAttempts > maxAttemptsLimit
      ? [{ path: ['methodConfig', index, kind, 'maxAttempts'], maxAttempts: policy.maxAttempts }]
      : [];
  });
}

/**
 * What the calls do about it: `is 10, above the attempt limit of 5: calls make at most 5 attempts (...)`, with how
 * to `raise` the limit.
 */
export function attemptLimitExcessMessage(
  excess: AttemptLimitExcess,
  maxAttemptsLimit: number,
  raise: string,
): string {
  const why = maxAttemptsLimit === 5 ? 'A6 caps maxAttempts at 5; ' : '';
  return `is ${excess.maxAttempts}, above the attempt limit of ${maxAttemptsLimit}: calls make at most ${maxAttemptsLimit} ${maxAttemptsLimit === 1 ? 'attempt' : 'attempts'} (${why}${raise} to allow more)`;
}
