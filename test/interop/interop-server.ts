/**
 * A test server of `grpc.testing.TestService` following the server side of grpc/grpc's
 * doc/interop-test-descriptions.md: EmptyCall, UnaryCall, StreamingOutputCall, StreamingInputCall,
 * FullDuplexCall and HalfDuplexCall, with Echo Status, Echo Metadata and ResponseParameters.interval_us.
 * UnimplementedCall and `grpc.testing.UnimplementedService` are left unimplemented (grpc-js answers UNIMPLEMENTED).
 * Listens on 127.0.0.1, port 0.
 */
import * as grpc from '@grpc/grpc-js';
import {
  ECHO_INITIAL_KEY,
  ECHO_TRAILING_KEY,
  type EchoStatus,
  type Empty,
  type ResponseParameters,
  type SimpleRequest,
  type SimpleResponse,
  type StreamingInputCallRequest,
  type StreamingInputCallResponse,
  type StreamingOutputCallRequest,
  type StreamingOutputCallResponse,
  testServiceDefinition,
  zeros,
} from './interop-service.js';

/** One call a handler of the server ran: its method name and request headers. */
export interface HandledCall {
  method: string;
  metadata: grpc.Metadata;
}

export interface InteropServer {
  /** `127.0.0.1:port`. */
  readonly address: string;
  /** Calls the handlers ran, oldest first (each attempt of a retried or hedged call is one). */
  readonly handled: HandledCall[];
  stop(): Promise<void>;
}

type ServerStream = grpc.ServerWritableStream<StreamingOutputCallRequest, StreamingOutputCallResponse>;
type DuplexStream = grpc.ServerDuplexStream<StreamingOutputCallRequest, StreamingOutputCallResponse>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Echo Metadata: the headers to send first, when the client asked for them. */
function echoedHeaders(request: grpc.Metadata): grpc.Metadata | undefined {
  const values = request.get(ECHO_INITIAL_KEY);
  if (values.length === 0) {
    return undefined;
  }
  const headers = new grpc.Metadata();
  for (const value of values) {
    headers.add(ECHO_INITIAL_KEY, value);
  }
  return headers;
}

/** Echo Metadata: the trailers to end with (empty when the client asked for none). */
function echoedTrailers(request: grpc.Metadata): grpc.Metadata {
  const trailers = new grpc.Metadata();
  for (const value of request.get(ECHO_TRAILING_KEY)) {
    trailers.add(ECHO_TRAILING_KEY, value);
  }
  return trailers;
}

/** Echo Status: the status a request asks the call to end with, if any. */
function echoedStatus(status: EchoStatus | null | undefined): EchoStatus | undefined {
  return status && status.code !== 0 ? status : undefined;
}

function response(size: number): StreamingOutputCallResponse {
  return { payload: { type: 'COMPRESSABLE', body: zeros(size) } };
}

/**
 * Sends one response per parameter, in order, each after its `interval_us` (a sleep before the response, counted
 * from the previous one). Stops when the call is cancelled.
 */
async function sendResponses(call: ServerStream | DuplexStream, parameters: readonly ResponseParameters[]) {
  for (const p of parameters) {
    const intervalUs = p.intervalUs ?? 0;
    if (intervalUs > 0) {
      await sleep(intervalUs / 1000);
    }
    if (call.cancelled) {
      return;
    }
    call.write(response(p.size));
  }
}

function endStream(call: ServerStream | DuplexStream, status: EchoStatus | undefined): void {
  if (call.cancelled) {
    return;
  }
  const trailers = echoedTrailers(call.metadata);
  if (status) {
    call.emit('error', { code: status.code, details: status.message, metadata: trailers });
  } else {
    call.end(trailers);
  }
}

function handlers(handled: HandledCall[]): grpc.UntypedServiceImplementation {
  const record = (method: string, call: { metadata: grpc.Metadata }) => {
    handled.push({ method, metadata: call.metadata });
  };
  const sendEchoedHeaders = (call: { metadata: grpc.Metadata; sendMetadata(md: grpc.Metadata): void }) => {
    const headers = echoedHeaders(call.metadata);
    if (headers) {
      call.sendMetadata(headers);
    }
  };

  return {
    EmptyCall(call: grpc.ServerUnaryCall<Empty, Empty>, callback: grpc.sendUnaryData<Empty>) {
      record('EmptyCall', call);
      callback(null, {});
    },

    UnaryCall(
      call: grpc.ServerUnaryCall<SimpleRequest, SimpleResponse>,
      callback: grpc.sendUnaryData<SimpleResponse>,
    ) {
      record('UnaryCall', call);
      sendEchoedHeaders(call);
      const trailers = echoedTrailers(call.metadata);
      const status = echoedStatus(call.request.responseStatus);
      if (status) {
        callback({ code: status.code, details: status.message, metadata: trailers });
        return;
      }
      const size = call.request.responseSize ?? 0;
      callback(null, { payload: { type: 'COMPRESSABLE', body: zeros(size) } }, trailers);
    },

    StreamingOutputCall(call: ServerStream) {
      record('StreamingOutputCall', call);
      sendEchoedHeaders(call);
      void sendResponses(call, call.request.responseParameters ?? []).then(() =>
        endStream(call, echoedStatus(call.request.responseStatus)),
      );
    },

    StreamingInputCall(
      call: grpc.ServerReadableStream<StreamingInputCallRequest, StreamingInputCallResponse>,
      callback: grpc.sendUnaryData<StreamingInputCallResponse>,
    ) {
      record('StreamingInputCall', call);
      let aggregated = 0;
      call.on('data', (request: StreamingInputCallRequest) => {
        aggregated += request.payload?.body.length ?? 0;
      });
      call.on('end', () =>
        callback(null, { aggregatedPayloadSize: aggregated }, echoedTrailers(call.metadata)),
      );
    },

    FullDuplexCall(call: DuplexStream) {
      record('FullDuplexCall', call);
      sendEchoedHeaders(call);
      // Each request is answered as it comes, after the previous request's responses.
      let queue = Promise.resolve();
      let finished = false;
      call.on('data', (request: StreamingOutputCallRequest) => {
        if (finished) {
          return; // Echo Status: no message after the status is processed
        }
        const status = echoedStatus(request.responseStatus);
        finished = status !== undefined;
        queue = queue
          .then(() => sendResponses(call, request.responseParameters ?? []))
          .then(() => {
            if (status) {
              endStream(call, status);
            }
          });
      });
      call.on('end', () => {
        queue = queue.then(() => {
          if (!finished) {
            finished = true;
            endStream(call, undefined);
          }
        });
      });
    },

    HalfDuplexCall(call: DuplexStream) {
      record('HalfDuplexCall', call);
      sendEchoedHeaders(call);
      const requests: StreamingOutputCallRequest[] = [];
      call.on('data', (request: StreamingOutputCallRequest) => requests.push(request));
      call.on('end', async () => {
        for (const request of requests) {
          await sendResponses(call, request.responseParameters ?? []);
          const status = echoedStatus(request.responseStatus);
          if (status) {
            endStream(call, status);
            return;
          }
        }
        endStream(call, undefined);
      });
    },
  };
}

/** Starts the interop test server on 127.0.0.1 (port 0). */
export async function startInteropServer(): Promise<InteropServer> {
  const server = new grpc.Server();
  const handled: HandledCall[] = [];
  server.addService(testServiceDefinition, handlers(handled));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    address: `127.0.0.1:${port}`,
    handled,
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Calls a test left open must not hold the shutdown.
        setTimeout(() => server.forceShutdown(), 1_000).unref();
      }),
  };
}
