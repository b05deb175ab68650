/**
 * A call rejected by the client itself (the adaptive throttle below the retry interceptor) before it reached the
 * network: how its status reads, so that the retry engine can tell it from a server's answer without importing the
 * throttle.
 */
import { status as Status } from '@grpc/grpc-js';

/** Details of a local rejection start with this, so that logs and callers can tell it from a server's answer. */
export const LOCAL_REJECTION_DETAILS_PREFIX = 'adaptive throttle: rejected locally';

/** Whether `status` is a local rejection (UNAVAILABLE, details starting with the prefix): no server answered. */
export function isLocalRejection(status: { readonly code: number; readonly details: string }): boolean {
  return status.code === Status.UNAVAILABLE && status.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX);
}
