import type { ServiceConfigJson } from '../../src/config/service-config-json.js';

/**
 * Service configs for tests: one methodConfig entry naming a whole service, with one policy. Typed as service-config
 * JSON without being checked as one, so that a test can build an invalid config the parser is to refuse.
 */
export function oneEntryConfig(
  service: string,
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  entry: Record<string, unknown> = {},
  root: Record<string, unknown> = {},
): ServiceConfigJson {
  return { methodConfig: [{ name: [{ service }], ...policy, ...entry }], ...root } as ServiceConfigJson;
}

/** 3 attempts on UNAVAILABLE, backoff 0.1 s doubling up to 1 s. */
export const RETRY_UNAVAILABLE_POLICY = {
  retryPolicy: {
    maxAttempts: 3,
    initialBackoff: '0.1s',
    maxBackoff: '1s',
    backoffMultiplier: 2,
    retryableStatusCodes: ['UNAVAILABLE'],
  },
};

/** RETRY_UNAVAILABLE_POLICY for test.Svc. */
export const RETRY_UNAVAILABLE_CONFIG = oneEntryConfig('test.Svc', RETRY_UNAVAILABLE_POLICY);

/** A value handed to the API as service-config JSON without being typed as one: a test of what the parser refuses. */
export function unchecked(value: unknown): ServiceConfigJson {
  return value as ServiceConfigJson;
}
