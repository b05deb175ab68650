import * as grpc from '@grpc/grpc-js';
import { digest, metadataRecord } from './script-server.js';
import type { CallType, ScriptClientInstance } from './script-service.js';
import type { Signal } from './signal.js';

/** The calls of the four types, as far as the property tests use them. */
export interface AnyClientCall {
  cancel(): void;
  write?(message: Buffer, callback?: (error?: Error | null) => void): boolean;
  end?(): void;
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/** Everything the application could observe of one call, in a form that compares with toEqual. */
export interface ClientRecord {
  /** Events in the order they came: metadata, data, error:<code>, status:<code>, callback:<code>. */
  readonly events: string[];
  readonly headers: Record<string, string> | undefined;
  /** Response messages (streamed, or the unary response), as digests, in order. */
  readonly responses: string[];
  readonly status: { code: number; details: string; trailers: Record<string, string> } | undefined;
  /** Status events plus callbacks: each call type has exactly one of the two ways (callback types have both). */
  readonly statusEvents: number;
  readonly callbacks: number;
  readonly writeCallbacks: number;
  readonly writeErrors: number;
}

/** HTTP/2's `date` header: the second it was sent. */
const VOLATILE_METADATA = ['date'];
/**
 * A deadline passes on both sides at about the same time (the server's from `grpc-timeout`, rounded down to the
 * millisecond): when the server's timer wins, the status comes as a Trailers-Only response, whose metadata holds
 * `content-type`; when the client's wins, the metadata is empty. Either may win, bare or not.
 */
const DEADLINE_VOLATILE_METADATA = [...VOLATILE_METADATA, 'content-type'];

/**
 * Details with what varies between two runs of the same script taken out: grpc-js's own deadline message is a
 * timing diagnostic ("Deadline exceeded after 0.302s,name resolution: 0.001s,metadata filters: ...,remote_addr=...")
 * whose stages depend on where the call was when the deadline passed. The interceptor's own deadline timer (which
 * may fire first, under hedging) says only "Deadline exceeded". Only those words are compared.
 */
export function comparableDetails(code: number, details: string): string {
  const local = 'Deadline exceeded';
  return code === grpc.status.DEADLINE_EXCEEDED && details.startsWith(local) ? `${local}…` : details;
}

/** Starts one call and records what it shows the application. */
export class ObservedCall {
  readonly call: AnyClientCall;
  private readonly events: string[] = [];
  private headers: grpc.Metadata | undefined;
  readonly responses: Buffer[] = [];
  private status: grpc.StatusObject | undefined;
  statusEvents = 0;
  callbacks = 0;
  metadataEvents = 0;
  writeCallbacks = 0;
  private writeErrors = 0;
  /** When the application was first told that the call ended (performance.now()). */
  endedAt: number | undefined;
  /** Runs synchronously after each event (a cancel from inside a listener). */
  afterEvent: (() => void) | undefined;

  constructor(
    client: ScriptClientInstance,
    readonly type: CallType,
    request: Buffer,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    private readonly signal: Signal,
  ) {
    const callback = (error: grpc.ServiceError | null, value?: Buffer): void => {
      this.callbacks++;
      this.events.push(`callback:${error ? error.code : 0}`);
      if (!error && value) {
        this.responses.push(value);
      }
      this.changed();
    };
    const method = (client as unknown as Record<CallType, (...args: unknown[]) => AnyClientCall>)[type].bind(
      client,
    );
    switch (type) {
      case 'unary':
        this.call = method(request, metadata, options, callback);
        break;
      case 'clientStream':
        this.call = method(metadata, options, callback);
        break;
      case 'serverStream':
        this.call = method(request, metadata, options);
        break;
      case 'bidi':
        this.call = method(metadata, options);
        break;
    }
    this.call.on('metadata', (headers: grpc.Metadata) => {
      this.metadataEvents++;
      this.headers = headers;
      this.events.push('metadata');
      this.changed();
    });
    this.call.on('status', (status: grpc.StatusObject) => {
      this.statusEvents++;
      this.status = status;
      this.events.push(`status:${status.code}`);
      this.changed();
    });
    if (type === 'serverStream' || type === 'bidi') {
      this.call.on('data', (message: Buffer) => {
        this.responses.push(message);
        this.events.push('data');
        this.changed();
      });
      this.call.on('error', (error: grpc.ServiceError) => {
        this.events.push(`error:${error.code}`);
        this.changed();
      });
    }
  }

  /** The application has been told how the call ended. */
  get ended(): boolean {
    return (
      this.statusEvents > 0 && (this.type === 'serverStream' || this.type === 'bidi' || this.callbacks > 0)
    );
  }

  /** Writes `message`, with a callback that it records or with none; answers whether the callback has come. */
  write(message: Buffer, withCallback = true): () => boolean {
    let done = false;
    if (!withCallback) {
      this.call.write?.(message);
      return () => false;
    }
    this.call.write?.(message, (error) => {
      done = true;
      this.writeCallbacks++;
      if (error) {
        this.writeErrors++;
      }
      this.signal.notify();
    });
    return () => done;
  }

  record(): ClientRecord {
    const status = this.status;
    return {
      events: [...this.events],
      headers: this.headers ? metadataRecord(this.headers, VOLATILE_METADATA) : undefined,
      responses: this.responses.map(digest),
      status: status && {
        code: status.code,
        details: comparableDetails(status.code, status.details),
        trailers: metadataRecord(
          status.metadata,
          status.code === grpc.status.DEADLINE_EXCEEDED ? DEADLINE_VOLATILE_METADATA : VOLATILE_METADATA,
        ),
      },
      statusEvents: this.statusEvents,
      callbacks: this.callbacks,
      writeCallbacks: this.writeCallbacks,
      writeErrors: this.writeErrors,
    };
  }

  private changed(): void {
    if (this.endedAt === undefined && (this.statusEvents > 0 || this.callbacks > 0)) {
      this.endedAt = performance.now();
    }
    this.afterEvent?.();
    this.signal.notify();
  }
}
