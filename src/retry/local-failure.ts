import { status as Status, type StatusObject } from '@grpc/grpc-js';
import { servedPeer } from './call-events.js';

/**
 * The details grpc-js gives a request over the channel's `grpc.max_send_message_length` (1.10.10 to 1.14; before
 * 1.10.10 they read like a server's own size error, one reason the peer range starts there). grpc-js makes that
 * check above its own retry layer, so that it never retries it; this interceptor sits above that check, and each
 * attempt fails alike. (A grpc-js server's "Sent message larger than max" is the server's own status about
 * its response, which a resend may not meet again: it is a status like any other, as in grpc-js's retries.)
 */
const SEND_LIMIT_DETAILS = 'Attempted to send message with a size larger than ';

/**
 * Whether a failed attempt hit a message-size limit: a resend of the same request fails the same way, and says
 * nothing about the server's health, so it is neither retried nor counted against the server (A6 throttling).
 * @internal
 */
export function isMessageSizeRejection(status: Pick<StatusObject, 'code' | 'details'>): boolean {
  return (
    status.code === Status.RESOURCE_EXHAUSTED &&
    typeof status.details === 'string' &&
    status.details.startsWith(SEND_LIMIT_DETAILS)
  );
}

/**
 * Whether a status came from a server: gRPC's HTTP/2 protocol puts `content-type` in every response's headers, and
 * a status with no response before it (Trailers-Only) carries them; grpc-js's own statuses (a deadline, a dropped
 * connection, a cancel) carry none.
 * @internal
 */
export function sentByServer(status: { readonly metadata?: StatusObject['metadata'] }): boolean {
  return (status.metadata?.get('content-type').length ?? 0) > 0;
}

/**
 * The details grpc-js's xDS load balancing (grpc-js-xds's `xds_cluster_impl`) gives a call it drops, for the
 * cluster's `drop_overloads` ("… Category: lb") or its circuit breaker's `max_requests`; C-core words its drops
 * alike.
 */
const LB_DROP_DETAILS = 'Call dropped by load balancing policy';

/**
 * Whether the load-balancing policy dropped the attempt before it left the client: grpc-js, C-core and grpc-go
 * never retry a drop (grpc-js commits the call to it), since it is the control plane shedding load, and a resend
 * is dropped again or adds to the overload it sheds. grpc-js hands interceptors a drop as a plain status, so it is
 * known by its details on a status no server sent: it carries no `content-type` (which gRPC's HTTP/2 protocol puts
 * in every response's headers, a Trailers-Only status's included), and the attempt's `peer` names no connection
 * (grpc-js 1.14; before, a call with no policy of grpc-js's own says `unknown` there whatever answered). A server
 * relaying another's drop in its own status is a server's answer like any other.
 * @internal
 */
export function isLoadBalancerDrop(
  status: Pick<StatusObject, 'details' | 'metadata'>,
  peer: () => string,
): boolean {
  return (
    typeof status.details === 'string' &&
    status.details.startsWith(LB_DROP_DETAILS) &&
    !sentByServer(status) &&
    servedPeer(peer()) === undefined
  );
}
