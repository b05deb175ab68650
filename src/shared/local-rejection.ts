/**
 * A call rejected by the client itself (the adaptive throttle below the retry interceptor) before it reached the
 * network: its trailers carry a mark, so that the retry engine can tell it from a server's answer without
 * importing the throttle. The mark is the trailers object itself (in a WeakSet), not anything on the wire: a server
 * that forwards another service's local rejection, text and all, is still a server's answer.
 */
import { type Metadata, status as Status } from '@grpc/grpc-js';
import { emptyMetadataLike } from './callers-metadata.js';

/** Details of a local rejection start with this, so that logs and callers can tell it from a server's answer. */
export const LOCAL_REJECTION_DETAILS_PREFIX = 'adaptive throttle: rejected locally';

/**
 * Kept on `globalThis` under a registered symbol, so that the package's ESM and CJS builds (both may be loaded: an
 * ESM app's retry interceptor above a CommonJS library's throttle) know each other's marks.
 */
const MARKED = Symbol.for('grpc-retry-hedging.local-rejections');
const processWide = globalThis as { [MARKED]?: WeakSet<Metadata> };
processWide[MARKED] ??= new WeakSet();
const marked = processWide[MARKED];

/**
 * New trailers for a local rejection, marked as such (and empty but for what the caller adds), of the class of
 * `like`, the call's request metadata (see {@link emptyMetadataLike}).
 */
export function localRejectionTrailers(like?: Metadata): Metadata {
  const trailers = emptyMetadataLike(like);
  marked.add(trailers);
  return trailers;
}

/**
 * Whether `status` is a local rejection: UNAVAILABLE with trailers made by {@link localRejectionTrailers}. A status
 * whose trailers were copied on the way (by another interceptor between) reads as a server's answer.
 */
export function isLocalRejection(status: { readonly code: number; readonly metadata?: Metadata }): boolean {
  return status.code === Status.UNAVAILABLE && status.metadata !== undefined && marked.has(status.metadata);
}
