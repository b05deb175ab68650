/**
 * Playing one attempt's script on the flaky server: the scripted delay, the final status with its trailers, and
 * ending the call exactly once, whatever the client does meanwhile.
 */

import * as grpc from '@grpc/grpc-js';
import { encodeRetryInfoStatus } from '../retry/retry-info.js';
import { PUSHBACK_METADATA_KEY, STATUS_DETAILS_METADATA_KEY } from '../shared/headers.js';
import { errorMessage } from '../util/error-message.js';
import type { MutableAttempt } from './attempt-recording.js';
import type { AttemptScript } from './flaky-script.js';
import type { FlakyTestResponse } from './flaky-test-client.js';
import { realClearTimeout, realSetTimeout } from './real-timers.js';

/** A response as the server writes it (proto-loader fills in the fields left out). */
export type OutgoingResponse = Pick<FlakyTestResponse, 'payload' | 'attempt'> & Partial<FlakyTestResponse>;

/** The status an attempt ends with. */
export interface FinalStatus {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

/** Ends an attempt: `response` is only used for OK unary / client-streaming attempts. */
export type Ender = (status: FinalStatus, response?: unknown) => void;

/**
 * The writing side of a server-streaming or bidi call: a Node Writable in object mode, whose `write` says false
 * once its buffer is full (grpc-js hands a message on as the client's flow-control window takes it), and which
 * emits 'drain' when it can take more.
 */
export interface ResponseStream {
  write(message: unknown): boolean;
  end(metadata?: grpc.Metadata): unknown;
  emit(event: 'error', status: Partial<grpc.StatusObject>): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed?: boolean;
}

/**
 * The code a script's status is sent as: OK when absent; UNKNOWN when outside 0..16 or not an integer, which the
 * script checks refuse (a guard for a script that reached here unchecked).
 */
export function normalizeStatus(code: number | undefined): grpc.status {
  if (code === undefined) {
    return grpc.status.OK;
  }
  return Number.isInteger(code) && code >= 0 && code <= 16 ? (code as grpc.status) : grpc.status.UNKNOWN;
}

/** Ends a unary or client-streaming call. */
export function unaryEnder(callback: grpc.sendUnaryData<unknown>): Ender {
  return (status, response) => {
    if (status.code === grpc.status.OK) {
      callback(null, response ?? {}, status.metadata);
    } else {
      callback(status);
    }
  };
}

/** Ends a server-streaming or bidi call after the messages already written. */
export function streamEnder(call: ResponseStream): Ender {
  return (status) => {
    if (status.code === grpc.status.OK) {
      call.end(status.metadata);
    } else {
      // grpc-js turns an 'error' event on a server stream into the call's status once pending writes are flushed.
      call.emit('error', status);
    }
  };
}

/** A response the attempt serialized already, so that grpc-js sends those bytes (see {@link passSerialized}). */
export class SerializedResponse {
  constructor(readonly bytes: unknown) {}
}

/**
 * The serializer a service is added to the server with: a {@link SerializedResponse}'s bytes as they are, anything
 * else through the method's own. Each response is serialized once, before the attempt's outcome is recorded.
 */
export function passSerialized(serialize: (value: unknown) => Buffer): (value: unknown) => Buffer {
  return (value) => (value instanceof SerializedResponse ? (value.bytes as Buffer) : serialize(value));
}

/**
 * A response that cannot be sent, for a reason stated in full (the method's serializer refused it, the `respond`
 * hook returned no message): its message is the status details as they are.
 */
export class ResponseNotSendable extends Error {}

function buildFailure(err: unknown): FinalStatus {
  return {
    code: grpc.status.INTERNAL,
    details:
      err instanceof ResponseNotSendable
        ? err.message
        : `flaky server: cannot build the response: ${errorMessage(err)}`,
    metadata: new grpc.Metadata(),
  };
}

/** The state of one attempt while the server plays its script. */
export class AttemptRun {
  readonly record: MutableAttempt;
  script: AttemptScript = {};
  /**
   * Set when the attempt must fail whatever its script says (bad script metadata, a failing hook, a response that
   * could not be built).
   */
  failure: { code: grpc.status; details: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  /** The stream's buffer was full after the last response written: the next one waits for 'drain'. */
  private full = false;
  /** What goes on writing once the stream drains (or the attempt is over), while a response waits. */
  private resumeWrites: (() => void) | undefined;

  /**
   * @param serialize The method's response serializer: each response is run through it before it is sent, so that
   *   one the server cannot serialize ends the attempt with INTERNAL, recorded as such (grpc-js would otherwise
   *   end the call with its own INTERNAL after the attempt was recorded OK).
   */
  constructor(
    record: MutableAttempt,
    private readonly onSettled: (run: AttemptRun) => void,
    private readonly serialize?: (message: unknown) => unknown,
  ) {
    this.record = record;
  }

  /**
   * The response, serialized (wrapped for {@link passSerialized}), or as it is when the method has no serializer.
   * Throws, naming the method and the serializer's error, when it cannot be serialized.
   */
  private serialized(message: unknown): unknown {
    if (this.serialize === undefined) {
      return message;
    }
    try {
      return new SerializedResponse(this.serialize(message));
    } catch (err) {
      throw new ResponseNotSendable(
        `flaky server: cannot serialize the response of ${this.record.method}: ${errorMessage(err)}`,
      );
    }
  }

  /** True once the attempt ended with a status or was cancelled: nothing more may be sent. */
  get done(): boolean {
    return this.finished || this.record.cancelled;
  }

  /** Whether the script ends the attempt OK. */
  get succeeds(): boolean {
    return normalizeStatus(this.script.status) === grpc.status.OK;
  }

  cancel(): void {
    if (this.done) {
      return;
    }
    this.record.cancelled = true;
    this.clearTimer();
    this.settle();
    // A response waiting for the stream to drain would wait forever (grpc-js sends nothing more once the call is
    // cancelled): the writer goes on, finds the attempt over, and stops.
    this.resumeWrites?.();
  }

  /** The server's stop cuts the attempt off: it is recorded cancelled, by the stop (no-op once it is over). */
  cutOff(): void {
    if (this.done) {
      return;
    }
    this.record.cutOffByStop = true;
    this.cancel();
  }

  clearTimer(): void {
    if (this.timer !== undefined) {
      realClearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Runs `next` after the scripted delay (synchronously when there is none), unless cancelled meanwhile. */
  afterDelay(next: () => void): void {
    const delay = this.script.delayMs ?? 0;
    if (!(delay > 0)) {
      next();
      return;
    }
    this.timer = realSetTimeout(() => {
      this.timer = undefined;
      if (!this.done) {
        next();
      }
    }, delay);
  }

  /** The status the script asks for (or the pre-script failure), with its trailers. */
  finalStatus(): FinalStatus {
    const metadata = new grpc.Metadata();
    if (this.failure) {
      return { ...this.failure, metadata };
    }
    const code = normalizeStatus(this.script.status);
    // The details the client gets as grpc-message: the google.rpc.Status below carries the same text.
    const details =
      code === grpc.status.OK
        ? 'OK'
        : (this.script.details ?? `scripted failure (attempt ${this.record.attempt})`);
    try {
      for (const [key, value] of Object.entries(this.script.trailers ?? {})) {
        metadata.add(key, key.endsWith('-bin') ? Buffer.from(value, 'utf8') : value);
      }
      if (this.script.pushback !== undefined) {
        metadata.set(PUSHBACK_METADATA_KEY, this.script.pushback);
      }
      if (this.script.retryInfoMs !== undefined && code !== grpc.status.OK) {
        const status = encodeRetryInfoStatus({
          code,
          message: details,
          retryDelay: this.script.retryInfoMs,
        });
        metadata.set(STATUS_DETAILS_METADATA_KEY, status);
      }
    } catch (err) {
      return {
        code: grpc.status.INTERNAL,
        details: `flaky server: cannot send scripted trailers: ${errorMessage(err)}`,
        metadata: new grpc.Metadata(),
      };
    }
    return { code, details, metadata };
  }

  /**
   * Ends the attempt with its final status through `end` (at most once). `response` builds the message of an OK
   * unary or client-streaming attempt; if it throws or its message cannot be serialized, the attempt ends with
   * INTERNAL naming the error.
   */
  finish(end: Ender, response?: () => unknown): void {
    if (this.done) {
      return;
    }
    let status = this.finalStatus();
    let message: unknown;
    if (status.code === grpc.status.OK && response) {
      try {
        message = this.serialized(response() ?? {});
      } catch (err) {
        status = buildFailure(err);
      }
    }
    this.finished = true;
    this.clearTimer();
    if (status.code === grpc.status.OK && response) {
      // The one message of an OK unary or client-streaming attempt goes with its status.
      this.record.responsesSent++;
    }
    this.record.endedWith = status.code;
    this.record.endedDetails = status.details;
    this.settle();
    try {
      end(status, message);
    } catch {
      // The call went away underneath us; nothing more to do.
    }
  }

  /**
   * Whether the next response may be written now (see {@link write}): true unless the stream's buffer was full
   * after the last one. Else false, and `resume` runs once, when the stream emits 'drain', the attempt is over
   * (cancelled by its client or its deadline, cut off by the server's stop, or ended by grpc-js, which cancels
   * it) or the stream closes; the writer then asks again. True when the attempt is over or the stream destroyed:
   * `write` queues nothing then. While one wait is pending, false without another `resume`.
   */
  canWrite(call: ResponseStream, resume: () => void): boolean {
    if (this.resumeWrites !== undefined) {
      return false;
    }
    if (!this.full || this.done || this.failure || call.destroyed === true) {
      return true;
    }
    const wake = (): void => {
      if (this.resumeWrites !== wake) {
        return;
      }
      this.resumeWrites = undefined;
      this.full = false;
      call.removeListener('drain', wake);
      call.removeListener('close', wake);
      resume();
    };
    this.resumeWrites = wake;
    call.once('drain', wake);
    call.once('close', wake);
    return false;
  }

  /**
   * Writes one response message, built by `message`, unless the attempt is over. If building or serializing it
   * throws, nothing more is written and the attempt ends with INTERNAL naming the error. The writer asks
   * {@link canWrite} before each message: one is built and handed to grpc-js only once the stream has taken the
   * ones before it (grpc-js's backpressure), so a client that stops reading holds the server's writes, not its
   * memory. `responsesSent` counts the messages handed to grpc-js, not those the client received.
   */
  write(call: ResponseStream, message: () => unknown): void {
    if (this.done || this.failure) {
      return;
    }
    let built: unknown;
    try {
      built = this.serialized(message());
    } catch (err) {
      const { code, details } = buildFailure(err);
      this.failure = { code, details };
      return;
    }
    this.record.responsesSent++;
    try {
      this.full = call.write(built) === false;
    } catch {
      // ignore: the call was torn down
    }
  }

  private settle(): void {
    this.record.endedAt = Date.now();
    this.onSettled(this);
  }
}
