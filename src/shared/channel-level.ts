import type { InterceptorOptions } from '@grpc/grpc-js';

type MethodDefinition = InterceptorOptions['method_definition'];

/**
 * The mark `interceptChannel` puts on the method definition of every call it runs through interceptors: there the
 * messages are already serialized and the call's kind is unknown, so an interceptor that reads request fields can
 * say it cannot work instead of doing nothing. A registered symbol, so that two copies of the package (ESM and CJS)
 * agree on it; a non-enumerable own property, which grpc-js never reads.
 * @internal
 */
const CHANNEL_LEVEL = Symbol.for('grpc-retry-hedging.channel-level-call');

/** Marks a definition as made by `interceptChannel` (in place: the definition is the channel's own). @internal */
export function markChannelLevel<T extends object>(definition: T): T {
  Object.defineProperty(definition, CHANNEL_LEVEL, { value: true });
  return definition;
}

/** Whether the call was made at a channel by `interceptChannel`, with serialized messages. @internal */
export function isChannelLevel(definition: MethodDefinition): boolean {
  return (definition as MethodDefinition & { [CHANNEL_LEVEL]?: true })[CHANNEL_LEVEL] === true;
}
