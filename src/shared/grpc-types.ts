import type { NextCall } from '@grpc/grpc-js';

/**
 * Types that grpc-js uses in its interceptor API but does not export by name.
 * @internal
 */
export type InterceptingCallInterface = ReturnType<NextCall>;
/** @internal */
export type MessageContext = Parameters<InterceptingCallInterface['sendMessageWithContext']>[0];
