import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { bindLocal } from '../helpers/bind-local.js';
import { type CallType, RUN_ID_HEADER, responseStreams, SCRIPT_SERVICE } from './script-service.js';
import { Signal } from './signal.js';

/** A message's bytes, from its size and a fill byte (so that order and content are both checked). */
export function messageBytes(size: number, fill: number): Buffer {
  return Buffer.alloc(size, fill & 0xff);
}

/** What the property tests compare of a message: its length and a hash of its bytes. */
export function digest(message: Buffer): string {
  return `${message.length}:${createHash('sha1').update(message).digest('hex').slice(0, 8)}`;
}

/** Metadata as a plain sorted record (binary values in base64), leaving out `omit`. */
export function metadataRecord(
  metadata: grpc.Metadata | undefined,
  omit: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!metadata) {
    return out;
  }
  const map = metadata.getMap();
  for (const key of Object.keys(map).sort()) {
    if (omit.includes(key)) {
      continue;
    }
    const value = map[key];
    out[key] = Buffer.isBuffer(value) ? `base64:${value.toString('base64')}` : String(value);
  }
  return out;
}

/** How the server ends an attempt: a status, its trailers, and for a unary-response method's OK the response. */
export interface ServerStatus {
  readonly code: grpc.status;
  readonly details: string;
  readonly trailers: grpc.Metadata;
  readonly response?: Buffer;
}

/** What the server saw of one attempt. */
export interface AttemptRecord {
  /** Request metadata, without the run id. */
  readonly metadata: Record<string, string>;
  /** Digests of the request messages, in order. */
  readonly received: string[];
  readonly halfClosed: boolean;
  /** The client cancelled (or its deadline passed) before the server ended the attempt. */
  readonly cancelled: boolean;
  /** The server sent a status. */
  readonly ended: boolean;
}

type AnyServerCall =
  | grpc.ServerUnaryCall<Buffer, Buffer>
  | grpc.ServerReadableStream<Buffer, Buffer>
  | grpc.ServerWritableStream<Buffer, Buffer>
  | grpc.ServerDuplexStream<Buffer, Buffer>;

/** One attempt as the server handles it: the tests drive it (headers, messages, status) and read what it saw. */
export class ServerAttempt {
  readonly received: Buffer[] = [];
  /** When the request stream ended (performance.now()); for unary requests, on arrival. */
  halfClosedAt: number | undefined;
  cancelled = false;
  ended = false;
  private headersSent = false;

  constructor(
    readonly number: number,
    readonly type: CallType,
    private readonly call: AnyServerCall,
    private readonly callback: grpc.sendUnaryData<Buffer> | undefined,
    readonly signal: Signal,
  ) {}

  get halfClosed(): boolean {
    return this.halfClosedAt !== undefined;
  }

  /** Whether the attempt is over on the server's side (it sent a status, or the client went away). */
  get closed(): boolean {
    return this.ended || this.cancelled;
  }

  /**
   * What the server saw. `cancelledAt` is when the client cancelled the call (or its deadline passed), if it did:
   * Node's HTTP/2 client may end a stream's writable side as it resets it, so that the server sees an 'end' right
   * before the cancellation; an end that arrived after the cancel was made is not a half-close the client made.
   */
  record(cancelledAt = Number.POSITIVE_INFINITY): AttemptRecord {
    return {
      metadata: metadataRecord(this.call.metadata, [RUN_ID_HEADER]),
      received: this.received.map(digest),
      halfClosed: this.halfClosedAt !== undefined && (!this.cancelled || this.halfClosedAt < cancelledAt),
      cancelled: this.cancelled,
      ended: this.ended,
    };
  }

  sendHeaders(headers: grpc.Metadata): void {
    if (this.closed || this.headersSent) {
      return;
    }
    this.headersSent = true;
    this.call.sendMetadata(headers);
  }

  send(message: Buffer): void {
    if (this.closed) {
      return;
    }
    this.headersSent = true;
    (this.call as grpc.ServerWritableStream<Buffer, Buffer>).write(message);
  }

  finish(status: ServerStatus): void {
    if (this.closed) {
      return;
    }
    this.ended = true;
    if (responseStreams(this.type)) {
      const stream = this.call as grpc.ServerWritableStream<Buffer, Buffer>;
      if (status.code === grpc.status.OK) {
        stream.end(status.trailers);
      } else {
        stream.emit('error', { code: status.code, details: status.details, metadata: status.trailers });
      }
    } else if (status.code === grpc.status.OK) {
      this.callback?.(null, status.response ?? Buffer.alloc(0), status.trailers);
    } else {
      this.callback?.({ code: status.code, details: status.details, metadata: status.trailers });
    }
    this.signal.notify();
  }

  /** Called by the handler: starts recording what arrives. */
  listen(): void {
    (this.call as grpc.ServerUnaryCall<Buffer, Buffer>).on('cancelled', () => {
      if (!this.ended) {
        this.cancelled = true;
      }
      this.signal.notify();
    });
    if (this.call.cancelled) {
      this.cancelled = true;
    }
    if ('request' in this.call && this.call.request !== undefined) {
      this.received.push(this.call.request);
      this.halfClosedAt = performance.now();
    } else {
      const readable = this.call as grpc.ServerReadableStream<Buffer, Buffer>;
      readable.on('data', (message: Buffer) => {
        this.received.push(message);
        this.signal.notify();
      });
      readable.on('end', () => {
        this.halfClosedAt = performance.now();
        this.signal.notify();
      });
      readable.on('error', () => {});
    }
  }
}

/** The attempts of one run (one script executed once against one client). */
export class ServerRun {
  readonly attempts: ServerAttempt[] = [];

  constructor(
    readonly signal: Signal,
    /** Called when an attempt arrives; property 2 drives the attempt from here. */
    readonly onAttempt: ((attempt: ServerAttempt) => void) | undefined,
  ) {}

  /** Resolves with attempt `n` (1-based) once it has arrived, or undefined if `stop()` holds first. */
  async attempt(n: number, stop: () => boolean): Promise<ServerAttempt | undefined> {
    await this.signal.until(() => this.attempts.length >= n || stop());
    return this.attempts[n - 1];
  }

  /** Every attempt is over on the server's side. */
  get allClosed(): boolean {
    return this.attempts.every((a) => a.closed);
  }
}

/** The scriptable server on 127.0.0.1 port 0; each call finds its run by the run-id request header. */
export class ScriptServer {
  private readonly runs = new Map<string, ServerRun>();
  private nextRun = 0;
  /** Calls whose run id was unknown (a test bug, or a call that outlived its run). */
  strays = 0;
  /**
   * Unknown-run calls that are hedges (they carry `grpc-previous-rpc-attempts`): a hedge cancelled as its stream
   * opened may still reach the server, after its run is over. Counted apart from `strays`.
   */
  lateHedges = 0;

  private constructor(
    private readonly server: grpc.Server,
    readonly address: string,
  ) {}

  static async start(): Promise<ScriptServer> {
    const server = new grpc.Server();
    let self: ScriptServer | undefined;
    const arrive = (type: CallType, call: AnyServerCall, callback?: grpc.sendUnaryData<Buffer>): void => {
      self?.arrive(type, call, callback);
    };
    server.addService(SCRIPT_SERVICE, {
      unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        arrive('unary', call, cb),
      clientStream: (call: grpc.ServerReadableStream<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        arrive('clientStream', call, cb),
      serverStream: (call: grpc.ServerWritableStream<Buffer, Buffer>) => arrive('serverStream', call),
      bidi: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => arrive('bidi', call),
    });
    const port = await bindLocal(server);
    self = new ScriptServer(server, `127.0.0.1:${port}`);
    return self;
  }

  /** A new run with its own id (to put in the request header). */
  open(onAttempt?: (attempt: ServerAttempt) => void): { id: string; run: ServerRun } {
    const id = `run-${++this.nextRun}`;
    const run = new ServerRun(new Signal(), onAttempt);
    this.runs.set(id, run);
    return { id, run };
  }

  close(id: string): void {
    this.runs.delete(id);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private arrive(
    type: CallType,
    call: AnyServerCall,
    callback: grpc.sendUnaryData<Buffer> | undefined,
  ): void {
    const id = call.metadata.get(RUN_ID_HEADER)[0];
    const run = typeof id === 'string' ? this.runs.get(id) : undefined;
    if (!run) {
      if (call.metadata.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length > 0) {
        this.lateHedges++;
      } else {
        this.strays++;
      }
      const status = { code: grpc.status.NOT_FOUND, details: `no run ${String(id)}` };
      if (callback) {
        callback(status);
      } else {
        call.emit('error', status);
      }
      return;
    }
    const attempt = new ServerAttempt(run.attempts.length + 1, type, call, callback, run.signal);
    run.attempts.push(attempt);
    attempt.listen();
    run.onAttempt?.(attempt);
    run.signal.notify();
  }
}
