import type { Metadata } from '@grpc/grpc-js';
import { parsePushback } from './pushback.js';

/**
 * What the server said about retrying a failed attempt: A6's `grpc-retry-pushback-ms` trailer or a
 * `google.rpc.RetryInfo` in the rich status details. The trailer wins when both are present.
 * @internal
 */
export type ServerHint =
  | { readonly kind: 'none' }
  | { readonly kind: 'retry-after'; readonly delayMs: number; readonly source: HintSource }
  | { readonly kind: 'do-not-retry'; readonly reason: string; readonly source: HintSource };

export type HintSource = 'pushback' | 'retry-info';

/** Reads a RetryInfo delay (ms) from a failed attempt's trailers; undefined when there is none. @internal */
export type RetryInfoReader = (trailers: Metadata) => number | undefined;

/** How RetryInfo hints are honoured. @internal */
export interface RetryInfoPolicy {
  readonly read: RetryInfoReader;
  /** A longer delay ends the call with its status instead of sleeping. */
  readonly maxDelayMs: number;
}

export const NO_HINT: ServerHint = Object.freeze({ kind: 'none' });

/** The server's hint in a failed attempt's trailers. @internal */
export function readServerHint(
  trailers: Metadata | undefined,
  retryInfo: RetryInfoPolicy | undefined,
): ServerHint {
  if (!trailers) {
    return NO_HINT;
  }
  const pushback = parsePushback(trailers);
  if (pushback.kind === 'retry-after') {
    return { kind: 'retry-after', delayMs: pushback.delayMs, source: 'pushback' };
  }
  if (pushback.kind === 'do-not-retry') {
    return { kind: 'do-not-retry', reason: pushback.reason, source: 'pushback' };
  }
  if (retryInfo === undefined) {
    return NO_HINT;
  }
  const delayMs = retryInfo.read(trailers);
  if (delayMs === undefined) {
    return NO_HINT;
  }
  if (delayMs > retryInfo.maxDelayMs) {
    return {
      kind: 'do-not-retry',
      reason: `RetryInfo delay ${delayMs} ms is over the ${retryInfo.maxDelayMs} ms cap`,
      source: 'retry-info',
    };
  }
  return { kind: 'retry-after', delayMs, source: 'retry-info' };
}
