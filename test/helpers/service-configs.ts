/** Service configs for tests: one methodConfig entry naming a whole service, with one policy. */
export function oneEntryConfig(
  service: string,
  policy: { retryPolicy: object } | { hedgingPolicy: object },
  entry: Record<string, unknown> = {},
  root: Record<string, unknown> = {},
): object {
  return { methodConfig: [{ name: [{ service }], ...policy, ...entry }], ...root };
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
