/**
 * One call through a request-id interceptor against a fake next call, without a network: what reached the next call
 * (metadata, messages, cancels) can be read exactly.
 */
import * as grpc from '@grpc/grpc-js';

export interface Sent {
  metadata: grpc.Metadata[];
  messages: unknown[];
  cancelled: Array<{ code: number; details: string }>;
}

export type Serializer = (value: object) => Buffer;
export const json: Serializer = (value) => Buffer.from(JSON.stringify(value));

export function definitionOf(
  path: string,
  serialize: Serializer = json,
  requestStream = false,
): grpc.InterceptorOptions['method_definition'] {
  return {
    path,
    requestStream,
    responseStream: false,
    requestSerialize: serialize,
    responseDeserialize: (bytes: Buffer) => bytes,
  } as unknown as grpc.InterceptorOptions['method_definition'];
}

/** Starts a call through `interceptor` with `metadata`, sends `message`; returns what reached the next call. */
export function run(
  interceptor: grpc.Interceptor,
  message: unknown,
  options: { metadata?: grpc.Metadata; definition?: grpc.InterceptorOptions['method_definition'] } = {},
): Sent {
  const sent: Sent = { metadata: [], messages: [], cancelled: [] };
  const next = {
    start: (metadata: grpc.Metadata) => sent.metadata.push(metadata),
    sendMessageWithContext: (_context: object, m: unknown) => sent.messages.push(m),
    sendMessage: (m: unknown) => sent.messages.push(m),
    halfClose: () => {},
    cancelWithStatus: (code: number, details: string) => sent.cancelled.push({ code, details }),
    startRead: () => {},
    getPeer: () => '',
  };
  const call = interceptor(
    { method_definition: options.definition ?? definitionOf('/pkg.S/M') } as grpc.InterceptorOptions,
    () => next as unknown as grpc.InterceptingCall,
  );
  call.start(options.metadata ?? new grpc.Metadata(), {});
  call.sendMessage(message);
  return sent;
}
