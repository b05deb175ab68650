import * as grpc from '@grpc/grpc-js';

/**
 * A method of a generic service whose messages are raw bytes (identity serializers), for tests that define their
 * own small service without a .proto: `/service/name`.
 */
export function bufferMethod(
  service: string,
  name: string,
  requestStream: boolean,
  responseStream: boolean,
): grpc.MethodDefinition<Buffer, Buffer> {
  const identity = (message: Buffer): Buffer => message;
  return {
    path: `/${service}/${name}`,
    requestStream,
    responseStream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

/** The client class of such a service, typed as the test's `Client` (its methods as the test calls them). */
export function bufferClientConstructor<Client extends grpc.Client>(
  definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>>,
): new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => Client {
  return grpc.makeGenericClientConstructor(definition as never, 'S') as unknown as new (
    address: string,
    credentials: grpc.ChannelCredentials,
    options?: grpc.ClientOptions,
  ) => Client;
}
