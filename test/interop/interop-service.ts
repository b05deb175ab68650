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

/**
 * Test harness, not interop: names the call a request belongs to (`<case>/<n>`), so that the servers' records of
 * each attempt can be told apart by call and by case, also when an attempt reaches the server after its case ended.
 */
export const CALL_TAG_KEY = 'x-interop-call';
/**
 * Test harness, not interop: what the servers do with the FIRST attempt of a call (one without
 * `grpc-previous-rpc-attempts`); later attempts run as usual. See {@link FirstAttemptRule}.
 */
export const FIRST_ATTEMPT_KEY = 'x-interop-first-attempt';
/**
 * Test harness, not interop: the servers put the number of the attempt that answers (its
 * `grpc-previous-rpc-attempts`, 0 when absent) in the response headers and the trailers under this key, apart from
 * the keys the cases check.
 */
export const ATTEMPT_TAG_KEY = 'x-interop-attempt';
/** Sent by the retry interceptor on every attempt after the first. */
export const PREVIOUS_ATTEMPTS_KEY = 'grpc-previous-rpc-attempts';

/**
 * `unavailable`: the first attempt ends with UNAVAILABLE (Trailers-Only, no headers) once its request is in: at
 * once for unary and server-streaming calls, at the first request message or the half-close for client-streaming
 * and bidi calls, so that a retry replays what was written to it. `slow`: the first attempt answers nothing (no
 * headers either) for {@link SLOW_FIRST_ATTEMPT_MS}, then runs as usual unless cancelled meanwhile.
 */
export type FirstAttemptRule = 'unavailable' | 'slow';

/** How long a `slow` first attempt keeps silent. */
export const SLOW_FIRST_ATTEMPT_MS = 500;

/** Details of the UNAVAILABLE status an `unavailable` first attempt ends with. */
export const FIRST_ATTEMPT_FAILURE = 'interop server: the first attempt fails';

/** The rule a request's headers ask for, if it is the first attempt of its call. */
export function firstAttemptRule(get: (key: string) => readonly unknown[]): FirstAttemptRule | undefined {
  if (get(PREVIOUS_ATTEMPTS_KEY).length > 0) {
    return undefined;
  }
  const value = String(get(FIRST_ATTEMPT_KEY)[0] ?? '');
  return value === 'unavailable' || value === 'slow' ? value : undefined;
}

/** The attempt number (0-based: its `grpc-previous-rpc-attempts`) a request's headers carry. */
export function attemptOf(get: (key: string) => readonly unknown[]): number {
  const value = get(PREVIOUS_ATTEMPTS_KEY)[0];
  return value === undefined ? 0 : Number(value);
}

/**
 * How an attempt ended on the server: with a status its handler sent, or cancelled (reset, deadline); `at` is
 * `performance.now()` then (servers and clients share the process, and so the clock).
 */
export type ServerEnd = { kind: 'status'; code: number; at: number } | { kind: 'cancelled'; at: number };

export interface Payload {
  type?: string;
  body: Buffer;
}
export interface EchoStatus {
  code: number;
  message: string;
}
export interface BoolValue {
  value: boolean;
}
export interface SimpleRequest {
  responseSize?: number;
  payload?: Payload;
  responseStatus?: EchoStatus | null;
  responseCompressed?: BoolValue | null;
  expectCompressed?: BoolValue | null;
}
export interface SimpleResponse {
  payload: Payload | null;
}
export interface StreamingInputCallRequest {
  payload?: Payload;
  expectCompressed?: BoolValue | null;
}
export interface StreamingInputCallResponse {
  aggregatedPayloadSize: number;
}
export interface ResponseParameters {
  size: number;
  intervalUs?: number;
  compressed?: BoolValue | null;
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
