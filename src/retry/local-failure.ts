import { status as Status, type StatusObject } from '@grpc/grpc-js';

/**
 * The details grpc-js gives a request over the channel's `grpc.max_send_message_length` (1.10 to 1.14), and the
 * ones a grpc-js server gives a response over its own send limit. grpc-js makes the first check above its own
 * retry layer, so that it never retries it; this interceptor sits above that check, and each attempt fails alike.
 */
const SEND_LIMIT_DETAILS = [
  'Attempted to send message with a size larger than ',
  'Sent message larger than max (',
];

/**
 * Whether a failed attempt hit a message-size limit: a resend of the same request fails the same way, and says
 * nothing about the server's health, so it is neither retried nor counted against the server (A6 throttling).
 * @internal
 */
export function isMessageSizeRejection(status: Pick<StatusObject, 'code' | 'details'>): boolean {
  return (
    status.code === Status.RESOURCE_EXHAUSTED &&
    SEND_LIMIT_DETAILS.some((prefix) => status.details.startsWith(prefix))
  );
}
