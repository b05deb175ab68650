/**
 * The longest methodConfig `timeout` the interceptor applies, in ms (2,147,482,647: about 24.8 days); a longer one is
 * held at this. grpc-js sends a call's time left in its `grpc-timeout` header rounded up to whole seconds, and a
 * grpc-js server times the call with setTimeout, which fires at once for 2^31 ms or more: a timeout past this one
 * ended every call that took a server more than a moment with DEADLINE_EXCEEDED. `check` warns of it.
 * @internal
 */
export const LONGEST_CONFIG_TIMEOUT_MS = 2 ** 31 - 1 - 1000;
