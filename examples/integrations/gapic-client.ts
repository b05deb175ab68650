/**
 * A stand-in for a client that Google's GAPIC generator makes for a Cloud API (`PublisherClient` of
 * @google-cloud/pubsub, `SpannerClient` of @google-cloud/spanner, ...), for the flaky test service. It builds its
 * google-gax client the way those do: one `GrpcClient` given the constructor's options, call settings from the
 * generated client config merged with `options.clientConfig` (`constructSettings`), a grpc-js stub made by
 * `createStub` (which hands grpc-js only the options whose keys start with `grpc.` or `grpc-node.`), and one
 * `createApiCall` per method. Only the two calls the examples make are here: a unary call and a server-streaming
 * read.
 */
import { credentials } from '@grpc/grpc-js';
import {
  type CallOptions,
  type CancellableStream,
  type ClientConfig,
  type ClientOptions,
  type ClientStub,
  createApiCall,
  type GaxCall,
  type GRPCCall,
  GrpcClient,
  StreamDescriptor,
  StreamType,
} from 'google-gax';
import { flakyTestProtoPath } from 'grpc-retry-hedging/testing';

export const FLAKY_TEST_SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';

export interface TestRequest {
  payload?: string;
}

export interface TestResponse {
  payload: string;
  attempt: number;
}

/**
 * What a generated client ships as its `*_client_config.json`: for idempotent methods gax retries UNAVAILABLE
 * (for up to 10 minutes), and every call gets a 60 s timeout.
 */
const generatedClientConfig: ClientConfig = {
  interfaces: {
    [FLAKY_TEST_SERVICE]: {
      retry_codes: { non_idempotent: [], idempotent: ['DEADLINE_EXCEEDED', 'UNAVAILABLE'] },
      retry_params: {
        default: {
          initial_retry_delay_millis: 100,
          retry_delay_multiplier: 1.3,
          max_retry_delay_millis: 60_000,
          initial_rpc_timeout_millis: 60_000,
          rpc_timeout_multiplier: 1,
          max_rpc_timeout_millis: 60_000,
          total_timeout_millis: 600_000,
        },
      },
      methods: {
        Unary: { timeout_millis: 60_000, retry_codes_name: 'idempotent', retry_params_name: 'default' },
        ServerStream: {
          timeout_millis: 60_000,
          retry_codes_name: 'idempotent',
          retry_params_name: 'default',
        },
      },
    },
  },
};

/**
 * The options of a client that talks to a local server without TLS or Google credentials (as to an emulator):
 * `servicePath` and `port` from `address` ("host:port"), insecure `sslCreds`.
 */
export function localServerOptions(address: string): ClientOptions {
  const at = address.lastIndexOf(':');
  return {
    servicePath: address.slice(0, at),
    port: Number(address.slice(at + 1)),
    sslCreds: credentials.createInsecure(),
    // Known here, so google-auth-library does not look for credentials to learn it.
    universeDomain: 'googleapis.com',
  };
}

export class FlakyTestClient {
  private readonly stub: Promise<ClientStub>;
  private readonly innerApiCalls: { unary: GaxCall; serverStream: GaxCall };

  constructor(options: ClientOptions) {
    const gaxGrpc = new GrpcClient(options);
    const protos = gaxGrpc.loadProto(flakyTestProtoPath()) as unknown as {
      grpc_retry_hedging: { testing: { v1: { FlakyTest: typeof ClientStub } } };
    };
    const defaults = gaxGrpc.constructSettings(
      FLAKY_TEST_SERVICE,
      generatedClientConfig,
      options.clientConfig ?? {},
      {},
    );
    this.stub = gaxGrpc.createStub(protos.grpc_retry_hedging.testing.v1.FlakyTest, options);
    const descriptors = {
      serverStream: new StreamDescriptor(
        StreamType.SERVER_STREAMING,
        false,
        options.gaxServerStreamingRetries === true,
      ),
    };
    const apiCall = (method: 'unary' | 'serverStream', descriptor?: StreamDescriptor): GaxCall => {
      const call = this.stub.then(
        (stub) =>
          ((...args: unknown[]) => (stub[method] as (...a: unknown[]) => unknown)(...args)) as GRPCCall,
        (error: unknown) => () => {
          throw error;
        },
      );
      return createApiCall(call, defaults[method], descriptor, false);
    };
    this.innerApiCalls = {
      unary: apiCall('unary'),
      serverStream: apiCall('serverStream', descriptors.serverStream),
    };
  }

  /** Resolves with `[response, ...]`, as a generated client's unary methods do. */
  unary(request: TestRequest, options: CallOptions = {}): Promise<[TestResponse, ...unknown[]]> {
    return this.innerApiCalls.unary(request, options) as unknown as Promise<[TestResponse, ...unknown[]]>;
  }

  serverStream(request: TestRequest, options: CallOptions = {}): CancellableStream {
    return this.innerApiCalls.serverStream(request, options) as CancellableStream;
  }

  async close(): Promise<void> {
    (await this.stub).close();
  }
}

/** The responses of a server-streaming read, once it has ended (rejects with its error). */
export function readAll(stream: CancellableStream): Promise<TestResponse[]> {
  return new Promise((resolve, reject) => {
    const responses: TestResponse[] = [];
    stream.on('data', (response: TestResponse) => responses.push(response));
    stream.on('error', reject);
    stream.on('end', () => resolve(responses));
  });
}
