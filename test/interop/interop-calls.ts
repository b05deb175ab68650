/**
 * Promise wrappers that observe everything an application sees of a call: the status event (how many times it
 * came), the error, the headers and the responses in order. Used by the interop cases.
 */
import type * as grpc from '@grpc/grpc-js';

/** What the application observed of one call once it ended. */
export interface Observed<Res> {
  status: grpc.StatusObject;
  /** The error handed to the callback or emitted as `error`; undefined for OK. */
  error: grpc.ServiceError | undefined;
  /** Response headers, when they came. */
  headers: grpc.Metadata | undefined;
  responses: Res[];
  /** How many `status` events the call emitted (a call ends exactly once). */
  statusEvents: number;
}

type ObservableCall = Pick<grpc.ClientUnaryCall, 'on'>;

/**
 * Collects what `call` emits and resolves once both the status and the application's end (callback, `end` or
 * `error`) have come, one macrotask later so that a second status would be counted too.
 */
class CallObserver<Res> {
  readonly observed: Partial<Observed<Res>> & { responses: Res[]; statusEvents: number } = {
    responses: [],
    statusEvents: 0,
    error: undefined,
    headers: undefined,
  };
  private ended = false;
  private resolve!: (value: Observed<Res>) => void;
  readonly done: Promise<Observed<Res>> = new Promise((resolve) => {
    this.resolve = resolve;
  });

  constructor(call: ObservableCall) {
    call.on('metadata', (headers: grpc.Metadata) => {
      this.observed.headers = headers;
    });
    call.on('status', (status: grpc.StatusObject) => {
      this.observed.statusEvents += 1;
      this.observed.status ??= status;
      this.maybeDone();
    });
  }

  /** The application's side of the end: the callback ran, or the stream ended or failed. */
  end(error: grpc.ServiceError | null | undefined): void {
    if (error) {
      this.observed.error = error;
    }
    this.ended = true;
    this.maybeDone();
  }

  private maybeDone(): void {
    if (this.ended && this.observed.status) {
      setImmediate(() => this.resolve(this.observed as Observed<Res>));
    }
  }
}

/** Runs a unary call and resolves with what the application observed. */
export function unary<Req, Res>(
  start: (
    request: Req,
    callback: (error: grpc.ServiceError | null, response?: Res) => void,
  ) => grpc.ClientUnaryCall,
  request: Req,
): Promise<Observed<Res>> {
  let observer: CallObserver<Res> | undefined;
  let early: { error: grpc.ServiceError | null; response?: Res | undefined } | undefined;
  const call = start(request, (error, response) => {
    if (!observer) {
      early = { error, response };
      return;
    }
    if (response !== undefined && !error) observer.observed.responses.push(response);
    observer.end(error);
  });
  observer = new CallObserver<Res>(call);
  if (early) {
    if (early.response !== undefined && !early.error) observer.observed.responses.push(early.response);
    observer.end(early.error);
  }
  return observer.done;
}

/** Observes a server-streaming call until it ends. */
export function readAll<Res>(call: grpc.ClientReadableStream<Res>): Promise<Observed<Res>> {
  const observer = new CallObserver<Res>(call);
  call.on('data', (message: Res) => observer.observed.responses.push(message));
  call.on('end', () => observer.end(undefined));
  call.on('error', (error: grpc.ServiceError) => observer.end(error));
  return observer.done;
}

/** A client-streaming call: its stream and a promise of what the application observed. */
export function clientStream<Req, Res>(
  start: (
    callback: (error: grpc.ServiceError | null, response?: Res) => void,
  ) => grpc.ClientWritableStream<Req>,
): { call: grpc.ClientWritableStream<Req>; done: Promise<Observed<Res>> } {
  let observer: CallObserver<Res> | undefined;
  const call = start((error, response) => {
    if (response !== undefined && !error) observer?.observed.responses.push(response);
    observer?.end(error);
  });
  observer = new CallObserver<Res>(call);
  // A cancelled call also emits `error`; the callback carries the same error.
  call.on('error', () => {});
  return { call, done: observer.done };
}

/** Writes one message and resolves once grpc-js has taken it (its write callback ran). */
export function write<Req>(call: grpc.ClientWritableStream<Req>, message: Req): Promise<void> {
  return new Promise((resolve) => call.write(message, () => resolve()));
}

/** A bidi call driven step by step: `next()` resolves with the next response, in order. */
export class Duplex<Req, Res> {
  readonly done: Promise<Observed<Res>>;
  private readonly observer: CallObserver<Res>;
  private readonly waiting: Array<{ resolve: (message: Res) => void; reject: (error: Error) => void }> = [];
  private readonly unread: Res[] = [];
  private finished: Error | undefined;

  constructor(readonly call: grpc.ClientDuplexStream<Req, Res>) {
    this.observer = new CallObserver<Res>(call);
    this.done = this.observer.done;
    call.on('data', (message: Res) => {
      this.observer.observed.responses.push(message);
      const waiter = this.waiting.shift();
      if (waiter) {
        waiter.resolve(message);
      } else {
        this.unread.push(message);
      }
    });
    const finish = (error: grpc.ServiceError | undefined) => {
      this.observer.end(error);
      this.finished = new Error(
        `the stream ended (${error ? `${error.code} ${error.details}` : 'OK'}) before a response`,
      );
      for (const waiter of this.waiting.splice(0)) {
        waiter.reject(this.finished);
      }
    };
    call.on('end', () => finish(undefined));
    call.on('error', (error: grpc.ServiceError) => finish(error));
  }

  /** The next response not yet read; rejects when the stream ends first. */
  next(): Promise<Res> {
    const message = this.unread.shift();
    if (message !== undefined) {
      return Promise.resolve(message);
    }
    if (this.finished) {
      return Promise.reject(this.finished);
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }
}
