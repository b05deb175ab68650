/**
 * A test server of `grpc.testing.TestService` following the server side of grpc/grpc's
 * doc/interop-test-descriptions.md: EmptyCall, UnaryCall, StreamingOutputCall, StreamingInputCall,
 * FullDuplexCall and HalfDuplexCall, with Echo Status, Echo Metadata and ResponseParameters.interval_us.
 * UnimplementedCall and `grpc.testing.UnimplementedService` are left unimplemented (grpc-js answers UNIMPLEMENTED).
 * Listens on 127.0.0.1, port 0.
 *
 * Test harness additions (interop-service.ts): the first attempt of a call misbehaves as its
 * `x-interop-first-attempt` header asks (fails with UNAVAILABLE, or keeps silent a while); every response's headers
 * and trailers name the attempt that sent them (`x-interop-attempt`); and each attempt's record says how it ended.
 */
import * as grpc from '@grpc/grpc-js';
import {
  ATTEMPT_TAG_KEY,
  attemptOf,
  CALL_TAG_KEY,
  ECHO_INITIAL_KEY,
  ECHO_TRAILING_KEY,
  type EchoStatus,
  type Empty,
  FIRST_ATTEMPT_FAILURE,
  type FirstAttemptRule,
  firstAttemptRule,
  type ResponseParameters,
  type ServerEnd,
  type SimpleRequest,
  type SimpleResponse,
  SLOW_FIRST_ATTEMPT_MS,
  type StreamingInputCallRequest,
  type StreamingInputCallResponse,
  type StreamingOutputCallRequest,
  type StreamingOutputCallResponse,
  testServiceDefinition,
  zeros,
} from './interop-service.js';

/** One call a handler of the server ran (one attempt of a retried or hedged call). */
export interface HandledCall {
  method: string;
  metadata: grpc.Metadata;
  /** Its `grpc-previous-rpc-attempts` (0 when absent). */
  attempt: number;
  /** Its `x-interop-call` ('' when absent). */
  callTag: string;
  /** What its first attempt rule made it do, when it was one. */
  rule: FirstAttemptRule | undefined;
  /** How it ended, once it has: the first of the handler's status and the call's cancellation. */
  end: ServerEnd | undefined;
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
type InputStream = grpc.ServerReadableStream<StreamingInputCallRequest, StreamingInputCallResponse>;
type AnyServerCall = grpc.ServerUnaryCall<unknown, unknown> | ServerStream | DuplexStream | InputStream;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Echo Status: the status a request asks the call to end with, if any. */
function echoedStatus(status: EchoStatus | null | undefined): EchoStatus | undefined {
  return status && status.code !== 0 ? status : undefined;
}

function response(size: number): StreamingOutputCallResponse {
  return { payload: { type: 'COMPRESSABLE', body: zeros(size) } };
}

/** One attempt as a handler serves it: its record, and what it sends (each send goes through here). */
class Served {
  private headersSent = false;

  constructor(
    readonly call: AnyServerCall,
    readonly record: HandledCall,
  ) {
    (call as grpc.ServerUnaryCall<unknown, unknown>).on('cancelled', () => {
      record.end ??= { kind: 'cancelled', at: performance.now() };
    });
  }

  /** The response headers: Echo Metadata's, and the attempt tag. Sent once, before anything else the call sends. */
  sendHeaders(): void {
    if (this.headersSent || this.call.cancelled) {
      return;
    }
    this.headersSent = true;
    const headers = new grpc.Metadata();
    for (const value of this.call.metadata.get(ECHO_INITIAL_KEY)) {
      headers.add(ECHO_INITIAL_KEY, value);
    }
    headers.set(ATTEMPT_TAG_KEY, String(this.record.attempt));
    this.call.sendMetadata(headers);
  }

  /** Echo Metadata asks for initial metadata: it goes at once. */
  sendEchoedHeaders(): void {
    if (this.call.metadata.get(ECHO_INITIAL_KEY).length > 0) {
      this.sendHeaders();
    }
  }

  /** Echo Metadata's trailers, and the attempt tag. */
  trailers(): grpc.Metadata {
    const trailers = new grpc.Metadata();
    for (const value of this.call.metadata.get(ECHO_TRAILING_KEY)) {
      trailers.add(ECHO_TRAILING_KEY, value);
    }
    trailers.set(ATTEMPT_TAG_KEY, String(this.record.attempt));
    return trailers;
  }

  /** Records the status the handler is about to send (unless the call was cancelled first). */
  ending(code: number): void {
    if (!this.call.cancelled) {
      this.record.end ??= { kind: 'status', code, at: performance.now() };
    }
  }

  error(status: EchoStatus): grpc.ServerErrorResponse {
    this.ending(status.code);
    return Object.assign(new Error(status.message), {
      code: status.code,
      details: status.message,
      metadata: this.trailers(),
    });
  }
}

/** Runs `handler` for an attempt, first applying the attempt's first-attempt rule (`fail` ends it UNAVAILABLE). */
function serve<C extends AnyServerCall>(
  handled: HandledCall[],
  method: string,
  call: C,
  handler: (served: Served) => void,
  fail: (served: Served, status: EchoStatus) => void,
): void {
  const get = (key: string) => call.metadata.get(key);
  const record: HandledCall = {
    method,
    metadata: call.metadata,
    attempt: attemptOf(get),
    callTag: String(get(CALL_TAG_KEY)[0] ?? ''),
    rule: firstAttemptRule(get),
    end: undefined,
  };
  handled.push(record);
  const served = new Served(call, record);
  if (record.rule === 'unavailable') {
    fail(served, { code: grpc.status.UNAVAILABLE, message: FIRST_ATTEMPT_FAILURE });
  } else if (record.rule === 'slow') {
    // A slow replica that reads its request but answers late: a request stream is read meanwhile and handed to the
    // handler when it runs. Left unread, its data would hold the connection's HTTP/2 flow-control window (grpc-js
    // 1.10's server does not widen it), and the hedges on the same connection would wait behind it.
    const early = 'on' in call && 'read' in call ? readAhead(call as InputStream | DuplexStream) : undefined;
    setTimeout(() => {
      if (!call.cancelled) {
        handler(served);
        early?.replay();
      }
    }, SLOW_FIRST_ATTEMPT_MS);
  } else {
    handler(served);
  }
}

/**
 * Reads a request stream ahead of its handler: the messages (and the half-close) that arrive are kept, and
 * `replay` emits them again, in order, to the listeners the handler has attached since.
 */
function readAhead(call: InputStream | DuplexStream): { replay: () => void } {
  const messages: unknown[] = [];
  let ended = false;
  const keep = (message: unknown) => messages.push(message);
  const end = () => {
    ended = true;
  };
  call.on('data', keep);
  call.on('end', end);
  return {
    replay() {
      call.removeListener('data', keep);
      call.removeListener('end', end);
      for (const message of messages) {
        call.emit('data', message);
      }
      if (ended) {
        call.emit('end');
      }
    },
  };
}

/**
 * Calls `then` on the client's half-close. The request stream also ends when the client resets the call: that is
 * no half-close, and the call is known to be cancelled a macrotask later.
 */
function onHalfClose(call: InputStream | DuplexStream, then: () => void): void {
  call.on('end', () =>
    setImmediate(() => {
      if (!call.cancelled) {
        then();
      }
    }),
  );
}

/** Calls `then` once the first request message or the half-close of a call with a request stream arrives. */
function onFirstRequest(call: InputStream | DuplexStream, then: () => void): void {
  let called = false;
  const once = () => {
    if (!called) {
      called = true;
      then();
    }
  };
  call.on('data', once);
  onHalfClose(call, once);
}

/**
 * Sends one response per parameter, in order, each after its `interval_us` (a sleep before the response, counted
 * from the previous one). Stops when the call is cancelled.
 */
async function sendResponses(served: Served, parameters: readonly ResponseParameters[]) {
  const call = served.call as ServerStream | DuplexStream;
  for (const p of parameters) {
    const intervalUs = p.intervalUs ?? 0;
    if (intervalUs > 0) {
      await sleep(intervalUs / 1000);
    }
    if (call.cancelled) {
      return;
    }
    served.sendHeaders();
    call.write(response(p.size));
  }
}

function endStream(served: Served, status: EchoStatus | undefined): void {
  const call = served.call as ServerStream | DuplexStream;
  if (call.cancelled) {
    return;
  }
  if (status) {
    call.emit('error', served.error(status));
  } else {
    served.ending(grpc.status.OK);
    call.end(served.trailers());
  }
}

function handlers(handled: HandledCall[]): grpc.UntypedServiceImplementation {
  return {
    EmptyCall(call: grpc.ServerUnaryCall<Empty, Empty>, callback: grpc.sendUnaryData<Empty>) {
      serve(
        handled,
        'EmptyCall',
        call,
        (served) => {
          served.sendHeaders();
          served.ending(grpc.status.OK);
          callback(null, {}, served.trailers());
        },
        (served, status) => callback(served.error(status)),
      );
    },

    UnaryCall(
      call: grpc.ServerUnaryCall<SimpleRequest, SimpleResponse>,
      callback: grpc.sendUnaryData<SimpleResponse>,
    ) {
      serve(
        handled,
        'UnaryCall',
        call,
        (served) => {
          served.sendEchoedHeaders();
          const status = echoedStatus(call.request.responseStatus);
          if (status) {
            callback(served.error(status));
            return;
          }
          const size = call.request.responseSize ?? 0;
          served.sendHeaders();
          served.ending(grpc.status.OK);
          callback(null, { payload: { type: 'COMPRESSABLE', body: zeros(size) } }, served.trailers());
        },
        (served, status) => callback(served.error(status)),
      );
    },

    StreamingOutputCall(call: ServerStream) {
      serve(
        handled,
        'StreamingOutputCall',
        call,
        (served) => {
          served.sendEchoedHeaders();
          void sendResponses(served, call.request.responseParameters ?? []).then(() =>
            endStream(served, echoedStatus(call.request.responseStatus)),
          );
        },
        (served, status) => endStream(served, status),
      );
    },

    StreamingInputCall(call: InputStream, callback: grpc.sendUnaryData<StreamingInputCallResponse>) {
      serve(
        handled,
        'StreamingInputCall',
        call,
        (s) => {
          let aggregated = 0;
          call.on('data', (request: StreamingInputCallRequest) => {
            aggregated += request.payload?.body.length ?? 0;
          });
          onHalfClose(call, () => {
            s.sendHeaders();
            s.ending(grpc.status.OK);
            callback(null, { aggregatedPayloadSize: aggregated }, s.trailers());
          });
        },
        (s, status) => onFirstRequest(call, () => callback(s.error(status))),
      );
    },

    FullDuplexCall(call: DuplexStream) {
      serve(
        handled,
        'FullDuplexCall',
        call,
        (served) => {
          served.sendEchoedHeaders();
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
              .then(() => sendResponses(served, request.responseParameters ?? []))
              .then(() => {
                if (status) {
                  endStream(served, status);
                }
              });
          });
          onHalfClose(call, () => {
            queue = queue.then(() => {
              if (!finished) {
                finished = true;
                endStream(served, undefined);
              }
            });
          });
        },
        (served, status) => onFirstRequest(call, () => endStream(served, status)),
      );
    },

    HalfDuplexCall(call: DuplexStream) {
      serve(
        handled,
        'HalfDuplexCall',
        call,
        (served) => {
          served.sendEchoedHeaders();
          const requests: StreamingOutputCallRequest[] = [];
          call.on('data', (request: StreamingOutputCallRequest) => requests.push(request));
          onHalfClose(call, async () => {
            for (const request of requests) {
              await sendResponses(served, request.responseParameters ?? []);
              const status = echoedStatus(request.responseStatus);
              if (status) {
                endStream(served, status);
                return;
              }
            }
            endStream(served, undefined);
          });
        },
        (served, status) => onFirstRequest(call, () => endStream(served, status)),
      );
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
