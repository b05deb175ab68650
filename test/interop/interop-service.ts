/**
 * The gRPC interop test service (`grpc.testing.TestService`, protos/grpc/testing/test.proto): its loaded
 * definition and the JavaScript shapes of its messages, as @grpc/proto-loader gives them with the options below.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const TEST_SERVICE = 'grpc.testing.TestService';
export const UNIMPLEMENTED_SERVICE = 'grpc.testing.UnimplementedService';

/** Client sends it; the server echoes its value in the response headers. */
export const ECHO_INITIAL_KEY = 'x-grpc-test-echo-initial';
/** Client sends it; the server echoes its value in the trailers. */
export const ECHO_TRAILING_KEY = 'x-grpc-test-echo-trailing-bin';

export interface Payload {
  type?: string;
  body: Buffer;
}
export interface EchoStatus {
  code: number;
  message: string;
}
export interface SimpleRequest {
  responseSize?: number;
  payload?: Payload;
  responseStatus?: EchoStatus | null;
}
export interface SimpleResponse {
  payload: Payload | null;
}
export interface StreamingInputCallRequest {
  payload?: Payload;
}
export interface StreamingInputCallResponse {
  aggregatedPayloadSize: number;
}
export interface ResponseParameters {
  size: number;
  intervalUs?: number;
}
export interface StreamingOutputCallRequest {
  responseParameters?: ResponseParameters[];
  payload?: Payload;
  responseStatus?: EchoStatus | null;
}
export interface StreamingOutputCallResponse {
  payload: Payload | null;
}
export type Empty = Record<string, never>;

type Callback<T> = (error: grpc.ServiceError | null, response?: T) => void;
type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: Callback<Res>,
) => grpc.ClientUnaryCall;

/** A client of `grpc.testing.TestService`, typed for the methods the cases call. */
export interface TestServiceClient extends grpc.Client {
  EmptyCall: UnaryMethod<Empty, Empty>;
  UnaryCall: UnaryMethod<SimpleRequest, SimpleResponse>;
  UnimplementedCall: UnaryMethod<Empty, Empty>;
  StreamingOutputCall(
    request: StreamingOutputCallRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
  ): grpc.ClientReadableStream<StreamingOutputCallResponse>;
  StreamingInputCall(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: Callback<StreamingInputCallResponse>,
  ): grpc.ClientWritableStream<StreamingInputCallRequest>;
  FullDuplexCall(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
  ): grpc.ClientDuplexStream<StreamingOutputCallRequest, StreamingOutputCallResponse>;
  HalfDuplexCall(
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
  ): grpc.ClientDuplexStream<StreamingOutputCallRequest, StreamingOutputCallResponse>;
}

/** A client of `grpc.testing.UnimplementedService`. */
export interface UnimplementedServiceClient extends grpc.Client {
  UnimplementedCall: UnaryMethod<Empty, Empty>;
}

type ClientConstructor<T> = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => T;

interface InteropPackage {
  TestService: grpc.ServiceClientConstructor;
  UnimplementedService: grpc.ServiceClientConstructor;
}

const PROTOS = fileURLToPath(new URL('../../protos', import.meta.url));

function load(): InteropPackage {
  const definition = protoLoader.loadSync('grpc/testing/test.proto', {
    includeDirs: [PROTOS],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const root = grpc.loadPackageDefinition(definition) as unknown as { grpc: { testing: InteropPackage } };
  return root.grpc.testing;
}

const loaded = load();

/** The service definition the test server implements. */
export const testServiceDefinition: grpc.ServiceDefinition = loaded.TestService.service;

export const TestServiceClientConstructor =
  loaded.TestService as unknown as ClientConstructor<TestServiceClient>;
export const UnimplementedServiceClientConstructor =
  loaded.UnimplementedService as unknown as ClientConstructor<UnimplementedServiceClient>;

/** `size` bytes of zeros, as every interop payload body is. */
export function zeros(size: number): Buffer {
  return Buffer.alloc(size);
}
