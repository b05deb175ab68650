/** Request header telling the server how many attempts preceded this one (A6); also set in the call's trailers. */
export const PREVIOUS_RPC_ATTEMPTS_METADATA_KEY = 'grpc-previous-rpc-attempts';

/** Trailer through which a server tells the client when (or whether) to retry (A6). */
export const PUSHBACK_METADATA_KEY = 'grpc-retry-pushback-ms';

/** Trailer carrying a serialized `google.rpc.Status` (rich error details, where RetryInfo travels). */
export const STATUS_DETAILS_METADATA_KEY = 'grpc-status-details-bin';

/** Default header of an AIP-155 request id (`createRequestIdInterceptor`, and what the flaky server records). */
export const DEFAULT_REQUEST_ID_HEADER = 'x-request-id';
