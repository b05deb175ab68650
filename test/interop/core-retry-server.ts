/**
 * A small raw-bytes server and client for test/interop/core-retry-cases.e2e.test.ts, which re-creates the
 * scenarios of gRPC C-core's end-to-end retry tests. C-core's tests drive both ends step by step; here each test
 * gives a handler that runs every attempt the server receives, with full control of what goes back (response
 * headers on their own, messages, a status with trailers, or a Trailers-Only status) and records what the server
 * saw of each attempt: its `grpc-previous-rpc-attempts` header, its metadata, the messages in order, the
 * half-close and a cancellation.
 *
 * Every method is served as a bidi stream (the wire format is the same whatever the client's call type), so a
 * handler can answer a unary call with headers, then a message, then a non-OK status. The client side has a unary
 * method (`/service/method`, C-core's method name) and a bidi method (`/service/stream`), both with identity
 * (Buffer) serializers. Listens on 127.0.0.1, port 0.
 */
import * as grpc from '@grpc/grpc-js';
import { createRetryInterceptor } from '../../src/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import type { RetryInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { bindLocal } from '../helpers/bind-local.js';
import { bufferClientConstructor, bufferMethod } from '../helpers/buffer-service.js';

/** The service name the cases' service configs name. */
export const SERVICE = 'service';
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

/** What the server saw of one attempt (one incoming call), as it happens. */
export class ServerAttempt {
  /** 0 for the first call the server received, then 1, 2, ... */
  readonly index: number;
  readonly path: string;
  readonly metadata: grpc.Metadata;
  /** The `grpc-previous-rpc-attempts` header, as sent (absent on a first attempt). */
  readonly previousAttempts: string | undefined;
  /** When the server received the call (Date.now()). */
  readonly startedAt = Date.now();
  /** The request messages received, in order, as text. */
  readonly messages: string[] = [];
  halfClosed = false;
  /** The client cancelled it (or its deadline passed) before the handler ended it. */
  cancelled = false;
  /** When the handler ended it with a status (Date.now()), if it did. */
  endedAt: number | undefined;
  private readonly wakers = new Set<() => void>();

  constructor(index: number, path: string, metadata: grpc.Metadata) {
    this.index = index;
    this.path = path;
    this.metadata = metadata;
    const previous = metadata.get(PREVIOUS_ATTEMPTS)[0];
    this.previousAttempts = previous === undefined ? undefined : String(previous);
  }

  /** Resolves with the n-th request message (0-based) once received, or undefined if the stream ended before. */
  async message(n: number): Promise<string | undefined> {
    await this.until(() => this.messages.length > n || this.halfClosed || this.cancelled);
    return this.messages[n];
  }

  /** Resolves once the client has half-closed (or cancelled) this attempt. */
  async closed(): Promise<void> {
    await this.until(() => this.halfClosed || this.cancelled);
  }

  /** Resolves once the client has cancelled this attempt. */
  async cancellation(): Promise<void> {
    await this.until(() => this.cancelled);
  }

  /** @internal wakes the waiters after a change */
  changed(): void {
    for (const wake of [...this.wakers]) wake();
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        if (!done()) return;
        this.wakers.delete(wake);
        resolve();
      };
      this.wakers.add(wake);
    });
  }
}

/** How a handler answers one attempt. */
export interface Reply {
  /** Sends response headers now, on their own (this commits the call on the client). */
  headers(entries?: Record<string, string>): void;
  /** Sends one response message (with headers first, if none were sent). */
  send(text: string): void;
  /**
   * Ends the attempt with this status, after the messages sent. With no headers or message sent before, the
   * response is Trailers-Only (grpc-js sends the status in the headers frame), which does not commit the call.
   */
  finish(code: grpc.status, details: string, trailers?: Record<string, string>): void;
}

export type AttemptHandler = (attempt: ServerAttempt, reply: Reply) => void | Promise<void>;

function metadataOf(entries: Record<string, string> | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(entries ?? {})) md.set(key, value);
  return md;
}

const SERVER_SIDE = {
  Method: bufferMethod(SERVICE, 'method', true, true),
  Stream: bufferMethod(SERVICE, 'stream', true, true),
};

export interface CoreServer {
  readonly address: string;
  /** Every call the server received, oldest first. */
  readonly attempts: ServerAttempt[];
  /** Resolves once `done()` holds, checking after every change the server sees (or rejects after `ms`). */
  waitFor(done: () => boolean, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a server that runs `handler` for every attempt of every method. */
export async function startCoreServer(handler: AttemptHandler): Promise<CoreServer> {
  const attempts: ServerAttempt[] = [];
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watch of [...watchers]) watch();
  };
  const serve = (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
    const attempt = new ServerAttempt(attempts.length, call.getPath(), call.metadata);
    attempts.push(attempt);
    const touch = () => {
      attempt.changed();
      notify();
    };
    call.on('data', (message: Buffer) => {
      attempt.messages.push(message.toString());
      touch();
    });
    call.on('end', () => {
      attempt.halfClosed = true;
      touch();
    });
    call.on('cancelled', () => {
      // grpc-js also emits 'cancelled' once it has sent the handler's status: only one before that is the client's.
      if (attempt.endedAt !== undefined) return;
      attempt.cancelled = true;
      touch();
    });
    call.on('error', () => {});
    let ended = false;
    const reply: Reply = {
      headers(entries) {
        call.sendMetadata(metadataOf(entries));
      },
      send(text) {
        if (!ended) call.write(Buffer.from(text));
      },
      finish(code, details, trailers) {
        if (ended) return;
        ended = true;
        attempt.endedAt = Date.now();
        // grpc-js ends a server stream with the status of an emitted error-shaped object (OK too, so that an OK
        // status can carry details), after the messages written before it.
        call.emit('error', { code, details, metadata: metadataOf(trailers) });
        touch();
      },
    };
    notify();
    void Promise.resolve(handler(attempt, reply)).catch((error: unknown) => {
      reply.finish(grpc.status.INTERNAL, `test handler threw: ${String(error)}`);
    });
  };
  const server = new grpc.Server();
  server.addService(SERVER_SIDE as never, { Method: serve, Stream: serve });
  const port = await bindLocal(server);
  return {
    address: `127.0.0.1:${port}`,
    attempts,
    waitFor(done, ms = 5000) {
      if (done()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(watch);
          reject(new Error(`waitFor: condition not met within ${ms} ms`));
        }, ms);
        const watch = () => {
          if (!done()) return;
          clearTimeout(timer);
          watchers.delete(watch);
          resolve();
        };
        watchers.add(watch);
      });
    },
    stop() {
      return new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 200).unref();
      });
    },
  };
}

type UnaryCallback = (error: grpc.ServiceError | null, response?: Buffer) => void;
export interface CoreClient extends grpc.Client {
  Method(
    request: Buffer,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: UnaryCallback,
  ): grpc.ClientUnaryCall;
  Stream(metadata: grpc.Metadata, options: grpc.CallOptions): grpc.ClientDuplexStream<Buffer, Buffer>;
}

const ClientCtor = bufferClientConstructor<CoreClient>({
  Method: bufferMethod(SERVICE, 'method', false, false),
  Stream: bufferMethod(SERVICE, 'stream', true, true),
});

export interface ClientSetup {
  client: CoreClient;
  events: RetryEvent[];
}

/**
 * A client of `address` with the retry interceptor made from `config` (and `options`) first, then `below`
 * (interceptors that see each attempt, as C-core's filters below the retry filter do). grpc-js's own retries are
 * off, as in the package's other end-to-end tests.
 */
export function coreClient(
  address: string,
  config: object,
  options: RetryInterceptorOptions = {},
  below: grpc.Interceptor[] = [],
): ClientSetup {
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(config, { ...options, onEvent: (e) => events.push(e) });
  const client = new ClientCtor(address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor, ...below],
    'grpc.enable_retries': 0,
  });
  return { client, events };
}

/** What the application saw of one call. */
export interface Outcome {
  code: number;
  details: string;
  /** Response messages delivered to the application, in order, as text. */
  messages: string[];
  headers: grpc.Metadata | undefined;
  trailers: grpc.Metadata | undefined;
  /** How many 'status' events the call emitted (exactly one is right). */
  statuses: number;
  /** When the status came (Date.now()). */
  endedAt: number;
}

function outcome(): Outcome {
  return {
    code: -1,
    details: '',
    messages: [],
    headers: undefined,
    trailers: undefined,
    statuses: 0,
    endedAt: 0,
  };
}

type AnyCall = grpc.ClientUnaryCall | grpc.ClientDuplexStream<Buffer, Buffer>;

function watch(call: AnyCall, out: Outcome, done: (out: Outcome) => void): void {
  call.on('metadata', (md: grpc.Metadata) => {
    out.headers = md;
  });
  call.on('status', (s: grpc.StatusObject) => {
    out.statuses += 1;
    if (out.statuses > 1) return;
    out.code = s.code;
    out.details = s.details;
    out.trailers = s.metadata;
    out.endedAt = Date.now();
    // Let a second status (a bug) show up before the outcome is read.
    setTimeout(() => done(out), 20);
  });
}

export interface CallStart {
  metadata?: grpc.Metadata;
  deadlineMs?: number;
  options?: grpc.CallOptions;
}

function optionsOf(start: CallStart): grpc.CallOptions {
  const options = { ...(start.options ?? {}) };
  if (start.deadlineMs !== undefined) options.deadline = Date.now() + start.deadlineMs;
  return options;
}

/** A unary call: the request, then the outcome; `onCall` gets the call as soon as it is made. */
export function unaryCall(
  client: CoreClient,
  request: string,
  start: CallStart = {},
  onCall?: (call: grpc.ClientUnaryCall) => void,
): Promise<Outcome> {
  const out = outcome();
  return new Promise((resolve) => {
    const call = client.Method(
      Buffer.from(request),
      start.metadata ?? new grpc.Metadata(),
      optionsOf(start),
      (_error, response) => {
        if (response) out.messages.push(response.toString());
      },
    );
    watch(call, out, resolve);
    onCall?.(call);
  });
}

/** A bidi call the test drives: write and end it, or cancel it, and await its outcome. */
export interface StreamCall {
  call: grpc.ClientDuplexStream<Buffer, Buffer>;
  write(text: string | Buffer): void;
  end(): void;
  result: Promise<Outcome>;
  /** The outcome so far (messages received). */
  seen: Outcome;
}

export function streamCall(client: CoreClient, start: CallStart = {}): StreamCall {
  const out = outcome();
  const call = client.Stream(start.metadata ?? new grpc.Metadata(), optionsOf(start));
  const result = new Promise<Outcome>((resolve) => watch(call, out, resolve));
  call.on('data', (m: Buffer) => out.messages.push(m.toString()));
  call.on('error', () => {});
  return {
    call,
    write: (text) => call.write(typeof text === 'string' ? Buffer.from(text) : text),
    end: () => call.end(),
    result,
    seen: out,
  };
}

/**
 * An interceptor for below the retry interceptor (so it sees each attempt) that ends the attempts `fails` picks
 * with `status` before anything reaches the wire, as C-core's failing test filters do; it counts the attempts.
 */
export function failingAttempts(
  fails: (attemptIndex: number) => boolean,
  status: { code: grpc.status; details: string },
): { interceptor: grpc.Interceptor; seen: () => number } {
  let count = 0;
  const interceptor: grpc.Interceptor = (options, nextCall) => {
    const index = count++;
    if (!fails(index)) return new grpc.InterceptingCall(nextCall(options));
    let ended = false;
    let listener: Partial<grpc.InterceptingListener> | undefined;
    const end = (code: grpc.status, details: string) => {
      if (ended || !listener) return;
      ended = true;
      const target = listener;
      setImmediate(() => target.onReceiveStatus?.({ code, details, metadata: new grpc.Metadata() }));
    };
    // An attempt that never reaches grpc-js (no stream is made): its operations stop here, and it ends with
    // `status` as soon as it starts, or with CANCELLED if the retry interceptor cancels it first.
    const detached = {
      start(_metadata: grpc.Metadata, l?: Partial<grpc.InterceptingListener>) {
        listener = l;
        end(status.code, status.details);
      },
      sendMessageWithContext() {},
      sendMessage() {},
      startRead() {},
      halfClose() {},
      cancelWithStatus(code: grpc.status, details: string) {
        end(code, details);
      },
      getPeer: () => 'failing-filter',
      getAuthContext: () => null,
    };
    return new grpc.InterceptingCall(detached as never);
  };
  return { interceptor, seen: () => count };
}
