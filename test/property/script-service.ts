import * as grpc from '@grpc/grpc-js';

/**
 * A generic service with one method per call type, whose messages are raw bytes (identity serializers), so that
 * the property tests control and compare every byte. The server's behaviour is picked per call by a request header.
 */
export type CallType = 'unary' | 'clientStream' | 'serverStream' | 'bidi';
export const CALL_TYPES: readonly CallType[] = ['unary', 'clientStream', 'serverStream', 'bidi'];

export const SERVICE_NAME = 'property.Script';
/** Request header naming the run (one script executed once, bare or intercepted) a call belongs to. */
export const RUN_ID_HEADER = 'x-script-run';

const identity = (b: Buffer): Buffer => b;
function method(
  name: string,
  requestStream: boolean,
  responseStream: boolean,
): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path: `/${SERVICE_NAME}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

export const SCRIPT_SERVICE = {
  unary: method('Unary', false, false),
  clientStream: method('ClientStream', true, false),
  serverStream: method('ServerStream', false, true),
  bidi: method('Bidi', true, true),
} satisfies Record<CallType, grpc.MethodDefinition<Buffer, Buffer>>;

export function requestStreams(type: CallType): boolean {
  return type === 'clientStream' || type === 'bidi';
}
export function responseStreams(type: CallType): boolean {
  return type === 'serverStream' || type === 'bidi';
}

export const ScriptClient = grpc.makeGenericClientConstructor(SCRIPT_SERVICE, 'Script');
export type ScriptClientInstance = InstanceType<typeof ScriptClient>;

/** A client of the script service, grpc-js's own retries off (the interceptor's are the only ones). */
export function scriptClient(address: string, interceptors: grpc.Interceptor[] = []): ScriptClientInstance {
  return new ScriptClient(address, grpc.credentials.createInsecure(), {
    interceptors,
    'grpc.enable_retries': 0,
  });
}
