/** The retry policy the overhead benchmarks (bench:overhead, bench:cpu) give FlakyTest: every call succeeds, so it only has to be there. */
import { FLAKY_TEST_SERVICE } from 'grpc-retry-hedging/testing';

export const retryPolicy = {
  maxAttempts: 3,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

/** The policy for every FlakyTest method: for the interceptor, and as grpc-js's own `grpc.service_config`. */
export const retryConfig = { methodConfig: [{ name: [{ service: FLAKY_TEST_SERVICE }], retryPolicy }] };
