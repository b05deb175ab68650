/**
 * The hello-world Greeter of examples/helloworld.proto as a typed grpc-js client, for the docs' snippet tests (the
 * docs show calls on it; the type is what a code generator would give).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export interface Reply {
  message: string;
}
export interface HelloRequest {
  name: string;
}
export interface GreeterClient extends grpc.Client {
  sayHello(request: HelloRequest, callback: grpc.requestCallback<Reply>): grpc.ClientUnaryCall;
  sayHello(
    request: HelloRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<Reply>,
  ): grpc.ClientUnaryCall;
  sayHello(
    request: HelloRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<Reply>,
  ): grpc.ClientUnaryCall;
  getCached(request: HelloRequest, callback: grpc.requestCallback<Reply>): grpc.ClientUnaryCall;
}
type GreeterConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => GreeterClient;

export const GREETER_PROTO = 'examples/helloworld.proto';
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(GREETER_PROTO));
/** The Greeter's client constructor, loaded from {@link GREETER_PROTO}. */
export const Greeter = (loaded.helloworld as grpc.GrpcObject).Greeter as unknown as GreeterConstructor &
  grpc.ServiceClientConstructor;
