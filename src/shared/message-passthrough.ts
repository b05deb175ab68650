/**
 * Calls of this package's own interceptors that hand each request message on untouched say which call they hand it
 * to, under this key: the retry interceptor above them may then let grpc-js's serialization at the bottom use the
 * bytes it already made (src/retry/request-serializer.ts), which it does only when nothing between it and grpc-js
 * could change a message in place. `Symbol.for`: the package's ESM and CJS copies know each other's calls.
 * @internal
 */
export const FORWARDS_MESSAGES_TO: unique symbol = Symbol.for('grpc-retry-hedging.forwards-messages-to');

/** A call that says where it hands request messages, untouched (undefined: nowhere yet). @internal */
export interface ForwardsMessages {
  readonly [FORWARDS_MESSAGES_TO]: unknown;
}

/** The call `call` hands request messages to in the end, through calls of this package's that forward them. */
export function lastForwardOf(call: unknown): unknown {
  let current = call;
  for (let depth = 0; depth < 8; depth++) {
    if (typeof current !== 'object' || current === null || !(FORWARDS_MESSAGES_TO in current)) {
      return current;
    }
    current = (current as ForwardsMessages)[FORWARDS_MESSAGES_TO];
  }
  return undefined;
}
