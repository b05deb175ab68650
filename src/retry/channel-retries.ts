import type { Metadata } from '@grpc/grpc-js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';

/**
 * Whether what an attempt received (its response headers, or its trailers whatever its status) shows that a retry
 * layer under this one retried it: grpc-js's own retries (a `retryPolicy` or `hedgingPolicy` in the channel's
 * `grpc.service_config`, on unless `grpc.enable_retries` is 0), or a second retry interceptor, put
 * `grpc-previous-rpc-attempts` into what an attempt of theirs received after their first. Each of this engine's attempts then makes several, and the attempts multiply.
 *
 * `attemptNumber` is the engine's own (1-based). A value equal to what the attempt sent (nothing for the first,
 * `attemptNumber - 1` after) is a server echoing the request's headers, not a retry layer.
 * @internal
 */
export function retriedBelow(attemptNumber: number, trailers: Metadata | undefined): boolean {
  const values = trailers?.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY);
  if (values === undefined || values.length === 0) {
    return false;
  }
  return attemptNumber === 1 || values[0] !== String(attemptNumber - 1);
}
