/**
 * A typed client for the flaky test service (`protos/flaky_test.proto`), as loaded by @grpc/proto-loader with
 * camelCase field names. Hand-typed after the proto; a test checks both agree.
 */

import * as grpc from '@grpc/grpc-js';
import { checkOptions, describeValue } from '../util/option-checks.js';
import { loadFlakyTestService } from './flaky-test-service.js';

/** `grpc_retry_hedging.testing.v1.TestRequest` as a client sends it. */
export interface FlakyTestRequest {
  /** Free text, echoed back by the server. */
  payload?: string | undefined;
  /** Optional bulk data, to exercise replay-buffer limits. */
  blob?: Uint8Array | string | undefined;
  /** Request id (AIP-155, proto field `request_id`), recorded per attempt by the server. */
  requestId?: string | undefined;
}

/** `grpc_retry_hedging.testing.v1.TestResponse` as a client receives it (every field present). */
export interface FlakyTestResponse {
  /** Unary / server streaming: the request payload. Client streaming: the received payloads joined by ",". */
  payload: string;
  /** 1-based attempt number of the call id that produced this response. */
  attempt: number;
  /** Client streaming and bidi: how many client messages the attempt had received when it answered. */
  messagesReceived: number;
  /** Streaming responses: 0-based index of this message within the attempt's responses. */
  index: number;
}

/** Callback of a call with a single response (unary, client streaming). */
export type FlakyTestCallback = grpc.requestCallback<FlakyTestResponse>;

/** A unary method of the flaky test client, with grpc-js's four call shapes. */
export interface FlakyUnaryMethod {
  (
    request: FlakyTestRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: FlakyTestCallback,
  ): grpc.ClientUnaryCall;
  (request: FlakyTestRequest, metadata: grpc.Metadata, callback: FlakyTestCallback): grpc.ClientUnaryCall;
  (request: FlakyTestRequest, options: grpc.CallOptions, callback: FlakyTestCallback): grpc.ClientUnaryCall;
  (request: FlakyTestRequest, callback: FlakyTestCallback): grpc.ClientUnaryCall;
}

/** A server-streaming method of the flaky test client. */
export interface FlakyServerStreamMethod {
  (
    request: FlakyTestRequest,
    metadata?: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<FlakyTestResponse>;
  (request: FlakyTestRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<FlakyTestResponse>;
}

/** A client-streaming method of the flaky test client. */
export interface FlakyClientStreamMethod {
  (
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: FlakyTestCallback,
  ): grpc.ClientWritableStream<FlakyTestRequest>;
  (metadata: grpc.Metadata, callback: FlakyTestCallback): grpc.ClientWritableStream<FlakyTestRequest>;
  (options: grpc.CallOptions, callback: FlakyTestCallback): grpc.ClientWritableStream<FlakyTestRequest>;
  (callback: FlakyTestCallback): grpc.ClientWritableStream<FlakyTestRequest>;
}

/** A bidi-streaming method of the flaky test client. */
export interface FlakyBidiMethod {
  (
    metadata?: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<FlakyTestRequest, FlakyTestResponse>;
  (options?: grpc.CallOptions): grpc.ClientDuplexStream<FlakyTestRequest, FlakyTestResponse>;
}

/**
 * A client of `grpc_retry_hedging.testing.v1.FlakyTest`. Each method exists under its proto name (`Unary`) and,
 * as grpc-js also installs it, in lower camel case (`unary`).
 */
export interface FlakyTestClient extends grpc.Client {
  Unary: FlakyUnaryMethod;
  unary: FlakyUnaryMethod;
  ServerStream: FlakyServerStreamMethod;
  serverStream: FlakyServerStreamMethod;
  ClientStream: FlakyClientStreamMethod;
  clientStream: FlakyClientStreamMethod;
  Bidi: FlakyBidiMethod;
  bidi: FlakyBidiMethod;
}

/** The constructor returned by {@link loadFlakyTestService}. */
export interface FlakyTestClientConstructor {
  new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions): FlakyTestClient;
  /** The service definition, e.g. for `server.addService`. */
  readonly service: grpc.ServiceDefinition;
  /** `FlakyTest` (grpc-js gives the unqualified name; see FLAKY_TEST_SERVICE for the full one). */
  readonly serviceName: string;
}

/** Options of {@link createFlakyTestClient}. */
export interface FlakyTestClientOptions {
  /** Channel credentials; default insecure (the flaky server listens without TLS). */
  credentials?: grpc.ChannelCredentials | undefined;
  /** Client interceptors, e.g. `[createRetryInterceptor(config)]`. */
  interceptors?: grpc.Interceptor[] | undefined;
  /** Channel options, e.g. `{ 'grpc.enable_retries': 0 }`. */
  channelOptions?: Partial<grpc.ChannelOptions> | undefined;
}

const CLIENT_OPTION_NAMES: ReadonlySet<string> = new Set(['credentials', 'interceptors', 'channelOptions']);

/**
 * Creates a typed client of the flaky test service at `address` (e.g. `server.address`).
 *
 * @throws TypeError naming the option when `address` or an option is invalid or unknown.
 * @example
 * const client = createFlakyTestClient(server.address, { interceptors: [createRetryInterceptor(config)] });
 * client.Unary({ payload: 'hi' }, metadata, (error, response) => {});
 */
export function createFlakyTestClient(
  address: string,
  options: FlakyTestClientOptions = {},
): FlakyTestClient {
  if (typeof address !== 'string' || address === '') {
    throw new TypeError(
      'createFlakyTestClient: address must be a non-empty string such as "127.0.0.1:50051"',
    );
  }
  checkOptions('createFlakyTestClient: options', options, [...CLIENT_OPTION_NAMES]);
  const { credentials, interceptors, channelOptions } = options;
  // Not instanceof: a second copy of grpc-js in node_modules would make valid credentials fail it.
  if (credentials !== undefined && (typeof credentials !== 'object' || credentials === null)) {
    throw new TypeError(
      `createFlakyTestClient: option "credentials" must be grpc.ChannelCredentials, got ${describeValue(credentials)}`,
    );
  }
  if (interceptors !== undefined && !(Array.isArray(interceptors) && interceptors.every(isFunction))) {
    throw new TypeError(
      `createFlakyTestClient: option "interceptors" must be an array of interceptor functions, got ${describeValue(interceptors)}`,
    );
  }
  if (channelOptions !== undefined && (typeof channelOptions !== 'object' || channelOptions === null)) {
    throw new TypeError(
      `createFlakyTestClient: option "channelOptions" must be an object, got ${describeValue(channelOptions)}`,
    );
  }
  const FlakyTest = loadFlakyTestService();
  const clientOptions: grpc.ClientOptions = { ...channelOptions };
  if (interceptors !== undefined) {
    clientOptions.interceptors = interceptors;
  }
  return new FlakyTest(address, credentials ?? grpc.credentials.createInsecure(), clientOptions);
}

function isFunction(value: unknown): boolean {
  return typeof value === 'function';
}
