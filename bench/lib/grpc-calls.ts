/** Promise wrappers around FlakyTest client calls, shared by the benchmarks. */
import * as grpc from '@grpc/grpc-js';
import { loadFlakyTestService } from 'grpc-retry-hedging/testing';

/** Request header through which a benchmark tells the server which variant an attempt belongs to. */
export const VARIANT_METADATA_KEY = 'x-bench-variant';

/** Metadata carrying only the variant label. */
export function variantMetadata(variant: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(VARIANT_METADATA_KEY, variant);
  return md;
}

export interface TestRequest {
  payload?: string;
  blob?: Buffer;
}

export interface TestResponse {
  payload: string;
  attempt: number;
  messagesReceived: number;
  index: number;
}

type UnaryMethod = (
  request: TestRequest,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: TestResponse) => void,
) => grpc.ClientUnaryCall;
type ServerStreamMethod = (
  request: TestRequest,
  metadata: grpc.Metadata,
  options?: grpc.CallOptions,
) => grpc.ClientReadableStream<TestResponse>;

type ClientStreamMethod = (
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: TestResponse) => void,
) => grpc.ClientWritableStream<TestRequest>;

/** The FlakyTest client surface the benchmarks use. */
export interface BenchClient extends grpc.Client {
  Unary: UnaryMethod;
  ServerStream: ServerStreamMethod;
  ClientStream: ClientStreamMethod;
}

/**
 * Creates a FlakyTest client for `address` with the given channel options (interceptors included). Each client
 * gets its own subchannel (own TCP connection) so that variants compared side by side do not share one.
 */
export function createClient(address: string, options: grpc.ClientOptions = {}): BenchClient {
  const Service = loadFlakyTestService();
  return new Service(address, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    ...options,
  }) as unknown as BenchClient;
}

/** Waits until the client's channel is connected. */
export function waitForReady(client: grpc.Client, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + timeoutMs, (error) => (error ? reject(error) : resolve()));
  });
}

/** One unary call; resolves with the response, rejects with the ServiceError. */
export function unary(
  client: BenchClient,
  request: TestRequest,
  metadata: grpc.Metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    client.Unary(request, metadata, options, (error, response) => {
      if (error) reject(error);
      else resolve(response as TestResponse);
    });
  });
}

/** One server-streaming call; resolves with the number of messages received once the stream ends OK. */
export function serverStream(
  client: BenchClient,
  request: TestRequest,
  metadata: grpc.Metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    let settled = false;
    const call = client.ServerStream(request, metadata, options);
    call.on('data', () => {
      received++;
    });
    call.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    // grpc-js ends the readable side only for an OK status; errors come through 'error'.
    call.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(received);
    });
  });
}

/**
 * One client-streaming upload: `count` writes of `request` (the same object each time, as a loop reusing its
 * message would), waiting for `'drain'` whenever `write()` says the stream is full, then the half-close.
 * Resolves with the response, rejects with the ServiceError.
 */
export function clientStream(
  client: BenchClient,
  request: TestRequest,
  count: number,
  metadata: grpc.Metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const call = client.ClientStream(metadata, options, (error, response) => {
      if (error) reject(error);
      else resolve(response as TestResponse);
    });
    let written = 0;
    const pump = (): void => {
      while (written < count) {
        written++;
        if (!call.write(request)) {
          call.once('drain', pump);
          return;
        }
      }
      call.end();
    };
    pump();
  });
}
