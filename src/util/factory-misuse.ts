/**
 * An interceptor factory handed to grpc-js in place of the interceptor it makes: `interceptors:
 * [createRetryInterceptor]` without the call. grpc-js then calls the factory with a call's options and its next
 * call, which reads as a bad config or bad options; this names the actual mistake.
 */

/**
 * Throws when `firstArgument` is what grpc-js hands an interceptor (call options with a `method_definition`): the
 * factory `name` was itself put in a client's `interceptors`.
 *
 * @param name The factory, as the user calls it (`createRetryInterceptor`).
 * @param call How to call it, for the message (`createRetryInterceptor(config)`).
 */
export function checkNotUsedAsInterceptor(name: string, call: string, firstArgument: unknown): void {
  const definition = (firstArgument as { method_definition?: { path?: unknown } } | null | undefined)
    ?.method_definition;
  if (typeof definition?.path === 'string') {
    throw new TypeError(
      `${name} was put in a client's interceptors itself, so grpc-js called it for the call ${definition.path}: it makes the interceptor. Call it once, and put what it returns there: interceptors: [${call}]`,
    );
  }
}
