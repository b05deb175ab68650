import { status as Status, type StatusObject } from '@grpc/grpc-js';

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
  return status.code === Status.RESOURCE_EXHAUSTED && status.details.startsWith(SEND_LIMIT_DETAILS);
}
