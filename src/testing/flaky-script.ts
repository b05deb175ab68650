/**
 * The scripting contract of the flaky test server.
 *
 * Scripts are looked up per call, then per method. A client may pick a call id and send it as request metadata
 * `x-flaky-call-id` on every attempt (the retry interceptor forwards application metadata unchanged, so this
 * happens by itself); the server counts the attempts it sees per call id. Without a call id, an attempt's number is
 * its `grpc-previous-rpc-attempts` header plus one (1 without the header), so the attempts of any A6 client are
 * numbered per call. Attempt 1 plays `script[0]`, attempt 2 `script[1]`, and so on; attempts beyond the end of the
 * script repeat its last entry. An attempt whose call id has no script plays its method's script
 * (`FlakyServer.scriptMethod`), else the server's `onAttempt` hook's answer, else a prompt success.
 */

import type { StatusCodeName } from '../config/service-config-json.js';

/** Metadata key carrying the client-chosen call id. */
export const CALL_ID_METADATA_KEY = 'x-flaky-call-id';
/**
 * Metadata key through which a client can ship its own script (JSON array of AttemptScript). With a call id it is
 * registered for that id (a different script shipped later under the same id is refused with INVALID_ARGUMENT);
 * without one it scripts the attempt that carries it alone, by its attempt number.
 */
export const SCRIPT_METADATA_KEY = 'x-flaky-script';
/** Response header carrying the attempt number, sent when an attempt's script has `sendHeaders`. */
export const ATTEMPT_METADATA_KEY = 'x-flaky-attempt';
/** Request message field (proto name) the server reads a request id from by default (option `requestIdField`). */
export const DEFAULT_REQUEST_ID_FIELD = 'request_id';

/** What the server does on one attempt. Every field is optional; `{}` is a prompt success. */
export interface AttemptScript {
  /**
   * Status code to end the attempt with (numeric `grpc.status`, 0..16; the server refuses others). Default 0 (OK).
   * Scripts given to the server may name the status instead, see {@link AttemptScriptInput}.
   */
  status?: number | undefined;
  /** Status details for a non-OK status. Default: `"scripted failure (attempt N)"`. */
  details?: string | undefined;
  /** Wait this long (ms) before doing anything else except `sendHeaders`. Cancelling the call ends the wait. */
  delayMs?: number | undefined;
  /**
   * Raw value of the `grpc-retry-pushback-ms` trailer (sent verbatim, so garbage such as `"abc"`, `"-1"` or `""`
   * can be tested). Sent with whatever status the attempt ends with.
   */
  pushback?: string | undefined;
  /**
   * A `google.rpc.RetryInfo` delay in whole ms, sent in the `grpc-status-details-bin` trailer (a serialized
   * `google.rpc.Status` with the attempt's status code), as Google APIs send it. Requires a non-OK status.
   */
  retryInfoMs?: number | undefined;
  /**
   * Extra trailers to send with the status (OK or not). Keys must be legal lowercase metadata keys; for keys ending
   * in `-bin` the UTF-8 bytes of the value are sent.
   */
  trailers?: Record<string, string> | undefined;
  /** Send response headers (with `x-flaky-attempt`) as soon as the attempt arrives, before the delay. */
  sendHeaders?: boolean | undefined;
  /**
   * Server streaming and bidi: number of response messages to send before ending with `status`.
   * Default: 1 for an OK server-streaming attempt, 0 for a failing one. Bidi without `echo`: sent after the
   * half-close, echoing the received payloads in order (cycling when more responses than messages); default one per
   * received message for an OK attempt, 0 for a failing one. Ignored by bidi with `echo`.
   */
  responses?: number | undefined;
  /** Client streaming and bidi: end with `status` as soon as the first client message arrives. */
  failOnFirstMessage?: boolean | undefined;
  /**
   * Client streaming and bidi: end the attempt once `delayMs` is over (at once without it), without waiting for the
   * client's half-close, as a server that fails or answers a stream it has not read to its end. Without it such an
   * attempt ends after the half-close (or, with `failOnFirstMessage`, the first message), so a client that keeps
   * its stream open, or waits for the server before it writes, would see no status. Bidi: `responses` (echoing
   * the messages received so far) or `echo`'s answers are sent first.
   */
  endBeforeHalfClose?: boolean | undefined;
  /**
   * Bidi: answer every client message as it arrives instead of after the half-close. FlakyTest answers with a
   * TestResponse echoing it; a method of yours with `response`, the server's `respond` option, else an empty
   * message (use `respond` to build an echo from the request).
   */
  echo?: boolean | undefined;
  /**
   * The response message an OK attempt sends (every message, for streaming responses), as a plain object your
   * proto loader serializes (proto-loader, ts-proto), with the field names the server loaded the proto with
   * (camelCase, or the proto's own with `keepCase`). A key that is not a field of the method's response message is
   * an error naming the field meant; a response the server cannot serialize ends the attempt with INTERNAL.
   * Default: FlakyTest's echo (`payload`, `attempt`, ...); for other services the server's `respond` option, else
   * `{}` (an empty message: every field at its default).
   */
  response?: Record<string, unknown> | undefined;
}

/**
 * An {@link AttemptScript} as the server accepts it: the status may also be a name in any case, as in a service
 * config (`"UNAVAILABLE"`, `"unavailable"`; numeric strings such as `"14"` are rejected). Validation turns it into
 * an AttemptScript with a numeric status.
 */
export type AttemptScriptInput = Omit<AttemptScript, 'status' | 'response'> & {
  status?: number | StatusCodeName | Lowercase<StatusCodeName> | undefined;
  /**
   * {@link AttemptScript.response}: any object, so that a message type of yours declared as an interface (as
   * proto-loader-gen-types and ts-proto write them, and as docs/testing.md does) is taken as it is.
   */
  response?: object | undefined;
};

/**
 * What the server recorded about one attempt. `Request` types {@link RecordedAttempt.requests}:
 * `server.attempts<HelloRequest>('c1')`.
 */
export interface RecordedAttempt<Request = unknown> {
  /** The call id the attempt belongs to (`""` when the client sent none). */
  readonly callId: string;
  /**
   * 1-based attempt number: within the call id when the client sent one, else `grpc-previous-rpc-attempts` + 1.
   */
  readonly attempt: number;
  /** Full gRPC method path, e.g. `/grpc_retry_hedging.testing.v1.FlakyTest/Unary`. */
  readonly method: string;
  /** `Date.now()` when the attempt arrived. */
  readonly arrivedAt: number;
  /**
   * Parsed `grpc-previous-rpc-attempts` header, or undefined when absent. A value that is present but not a
   * plain non-negative decimal integer is recorded as `NaN` (the raw text stays in `metadata`).
   */
  readonly previousRpcAttempts: number | undefined;
  /** Request metadata as a plain object (binary values as Buffers, repeated keys as arrays). */
  readonly metadata: Readonly<Record<string, string | Buffer | Array<string | Buffer>>>;
  /** Payloads of the client messages received (unary/server streaming: the single request). */
  readonly messages: string[];
  /**
   * The request messages received, as the server's loader decoded them (for FlakyTest and protos given by path:
   * proto-loader objects with camelCase fields, or the proto's own names with the server's `keepCase` option).
   */
  readonly requests: Request[];
  /** Total bytes of `blob` fields received. */
  blobBytes: number;
  /** Whether the client half-closed the attempt (client streaming and bidi). */
  halfClosed: boolean;
  /**
   * Whether the attempt was cancelled before the server ended it with a status: by its client (a losing hedge, a
   * cancel, its deadline passing), or by the server's own `stop(graceMs)` (past the grace) or `forceStop()`, which
   * {@link RecordedAttempt.cutOffByStop} tells apart.
   */
  cancelled: boolean;
  /**
   * true when the attempt was cancelled because the server stopped (`stop(graceMs)` past its grace, or
   * `forceStop()`) while it ran, not by its client; then `cancelled` is true too. Absent otherwise.
   */
  cutOffByStop?: boolean;
  /** The status the server ended the attempt with, or undefined while it runs or when cancelled. */
  endedWith: number | undefined;
  /**
   * How many response messages the server sent (1 for an OK unary or client-streaming attempt, 0 for a failed one).
   * Streamed messages are handed to grpc-js as the stream takes them (the server waits for a client that stops
   * reading): this counts messages handed over, a few of which (grpc-js's buffer, the HTTP/2 window) the client may
   * not have received yet.
   */
  responsesSent: number;
  /** Status details the server ended the attempt with (set together with `endedWith`). */
  endedDetails?: string;
  /** `Date.now()` when the attempt ended with a status or was seen cancelled; undefined while it runs. */
  endedAt?: number;
  /**
   * The attempt's request id (AIP-155): the request message's `request_id` field when it is set (the first
   * message that sets it, for client-streaming and bidi calls), else the `x-request-id` request header; undefined
   * when neither is present. Which field and header are read is set by the server options `requestIdField` and
   * `requestIdHeader`.
   */
  requestId?: string;
  /**
   * The deadline the attempt arrived with (ms since the epoch), from its `grpc-timeout` header; undefined when the
   * client sent none.
   */
  deadline?: number;
  /** Where {@link RecordedAttempt.requestId} came from. */
  requestIdSource?: 'field' | 'header';
}
