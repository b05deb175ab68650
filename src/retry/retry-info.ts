/**
 * `google.rpc.RetryInfo`: the retry hint of Google's rich error model, carried in the `grpc-status-details-bin`
 * trailer as a serialized `google.rpc.Status` whose `details` hold `google.protobuf.Any` values. This module only
 * decodes and encodes it; the call engine decides what to do with the hint.
 *
 * Decoding uses protobufjs reflection (the four message types are declared below as JSON descriptors), never a
 * hand-written wire decoder, and never throws on malformed bytes.
 */
import type { Metadata } from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';
/** Trailer holding the serialized `google.rpc.Status` of a failed call (a binary metadata key). */
import { STATUS_DETAILS_METADATA_KEY } from '../shared/headers.js';
import { checkOptions, describeValue, isOptionsObject } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';

export { STATUS_DETAILS_METADATA_KEY };
/** Type URL of a `google.rpc.RetryInfo` packed in a `google.protobuf.Any`. */
export const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';
/** Fully qualified name of the message, as it ends every type URL that names it. */
const RETRY_INFO_TYPE_NAME = 'google.rpc.RetryInfo';

/**
 * Default cap on a RetryInfo delay: 60 s, the default longest retry delay of Google's generated client libraries
 * (google-gax retry params, `max_retry_delay_millis: 60000`), the clients RetryInfo was made for. A server asking
 * for longer is saying "not soon": the call ends with its status instead of holding the caller (and a replay
 * buffer) for minutes.
 */
export const DEFAULT_RETRY_INFO_MAX_DELAY_MS = 60_000;
/** Largest accepted `retryInfo.maxDelayMs`: Node's timers fire at once for delays of 2^31 ms or more. */
export const MAX_RETRY_INFO_DELAY_LIMIT_MS = 2 ** 31 - 1;
/** proto3 `google.protobuf.Duration` range: ±10,000 years in seconds. */
const MAX_DURATION_SECONDS = 315_576_000_000n;
const NANOS_PER_SECOND = 1_000_000_000;
const NANOS_PER_MS = 1_000_000;

/**
 * What a failed attempt's trailers say through `google.rpc.RetryInfo`.
 * - `absent`: no `grpc-status-details-bin`, or a Status without a RetryInfo detail.
 * - `retry-after`: wait `delayMs` (whole ms, nanos rounded up: RetryInfo means "at least this long") and `delay`
 *   holds the exact Duration.
 * - `malformed`: details that cannot be decoded, a RetryInfo without a delay, a negative or out-of-range delay,
 *   several RetryInfo details with different delays, or several `grpc-status-details-bin` values. `reason` says
 *   which. The engine treats it like `absent` (see docs/configuration.md, "Server retry hints"): RetryInfo is advisory, and the status code has
 *   already decided whether the call may be retried.
 */
export type RetryInfo =
  | { readonly kind: 'absent' }
  | {
      readonly kind: 'retry-after';
      readonly delayMs: number;
      readonly delay: { readonly seconds: number; readonly nanos: number };
    }
  | { readonly kind: 'malformed'; readonly reason: string };

const ABSENT: RetryInfo = Object.freeze({ kind: 'absent' });

/** The four message types involved, as protobufjs JSON descriptors (field numbers from googleapis). */
const root = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: {
              fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } },
            },
            Duration: {
              fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } },
            },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            RetryInfo: {
              fields: { retry_delay: { type: 'google.protobuf.Duration', id: 1 } },
            },
          },
        },
      },
    },
  },
});
const StatusType = root.lookupType('google.rpc.Status');
const RetryInfoType = root.lookupType('google.rpc.RetryInfo');

/** Decoded forms, read back with `toObject({ longs: String })` so int64 never depends on the `long` package. */
interface AnyObject {
  type_url?: string;
  value?: Uint8Array;
}
interface StatusObject {
  code?: number;
  message?: string;
  details?: AnyObject[];
}
interface DurationObject {
  seconds?: string;
  nanos?: number;
}
interface RetryInfoObject {
  retry_delay?: DurationObject;
}

const TO_OBJECT = { longs: String, bytes: Array } as const;

/**
 * Reads `google.rpc.RetryInfo` from a failed attempt's trailers (`status.metadata` in grpc-js, where
 * `grpc-status-details-bin` is a Buffer). Never throws.
 */
export function parseRetryInfo(trailers: Metadata | null | undefined): RetryInfo {
  if (!trailers) {
    return ABSENT;
  }
  let values: unknown[];
  try {
    values = trailers.get(STATUS_DETAILS_METADATA_KEY);
  } catch {
    return { kind: 'malformed', reason: `cannot read ${STATUS_DETAILS_METADATA_KEY}` };
  }
  if (values.length === 0) {
    return ABSENT;
  }
  if (values.length > 1) {
    return {
      kind: 'malformed',
      reason: `${values.length} ${STATUS_DETAILS_METADATA_KEY} values (a status has one)`,
    };
  }
  const value = values[0];
  if (!(value instanceof Uint8Array)) {
    return { kind: 'malformed', reason: `${STATUS_DETAILS_METADATA_KEY} is not binary` };
  }
  return parseRetryInfoFromStatusDetails(value);
}

/**
 * Reads `google.rpc.RetryInfo` from the bytes of a serialized `google.rpc.Status` (the value of
 * `grpc-status-details-bin`). Never throws.
 */
export function parseRetryInfoFromStatusDetails(bytes: Uint8Array): RetryInfo {
  let status: StatusObject;
  try {
    status = StatusType.toObject(StatusType.decode(bytes), TO_OBJECT) as StatusObject;
  } catch (error) {
    return { kind: 'malformed', reason: `undecodable google.rpc.Status (${describeError(error)})` };
  }
  let found: RetryInfo | undefined;
  for (const [index, detail] of (status.details ?? []).entries()) {
    if (!isRetryInfoTypeUrl(detail.type_url ?? '')) {
      continue;
    }
    const info = decodeRetryInfo(Uint8Array.from(detail.value ?? []), index);
    if (info.kind === 'malformed') {
      return info;
    }
    if (found === undefined) {
      found = info;
    } else if (found.kind === 'retry-after' && info.kind === 'retry-after') {
      if (found.delay.seconds !== info.delay.seconds || found.delay.nanos !== info.delay.nanos) {
        return {
          kind: 'malformed',
          reason: `several RetryInfo details with different delays (${describeDelay(found.delay)} and ${describeDelay(info.delay)})`,
        };
      }
    }
  }
  return found ?? ABSENT;
}

/** A type URL names RetryInfo when its last path segment is the full message name (any host, as Any allows). */
function isRetryInfoTypeUrl(typeUrl: string): boolean {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1) === RETRY_INFO_TYPE_NAME;
}

function decodeRetryInfo(bytes: Uint8Array, index: number): RetryInfo {
  let info: RetryInfoObject;
  try {
    info = RetryInfoType.toObject(RetryInfoType.decode(bytes), TO_OBJECT) as RetryInfoObject;
  } catch (error) {
    return {
      kind: 'malformed',
      reason: `undecodable google.rpc.RetryInfo in details[${index}] (${describeError(error)})`,
    };
  }
  const delay = info.retry_delay;
  if (delay === undefined) {
    return { kind: 'malformed', reason: `RetryInfo in details[${index}] has no retry_delay` };
  }
  return durationToRetryAfter(delay.seconds ?? '0', delay.nanos ?? 0, `details[${index}]`);
}

function durationToRetryAfter(secondsText: string, nanos: number, where: string): RetryInfo {
  let seconds: bigint;
  try {
    seconds = BigInt(secondsText);
  } catch {
    return { kind: 'malformed', reason: `RetryInfo in ${where}: seconds ${secondsText} is not an integer` };
  }
  if (seconds < 0n || nanos < 0) {
    return {
      kind: 'malformed',
      reason: `RetryInfo in ${where}: negative retry_delay (${secondsText}s, ${nanos}ns)`,
    };
  }
  if (seconds > MAX_DURATION_SECONDS || nanos >= NANOS_PER_SECOND) {
    return {
      kind: 'malformed',
      reason: `RetryInfo in ${where}: retry_delay out of the Duration range (${secondsText}s, ${nanos}ns)`,
    };
  }
  const wholeSeconds = Number(seconds);
  return {
    kind: 'retry-after',
    delayMs: wholeSeconds * 1000 + Math.ceil(nanos / NANOS_PER_MS),
    delay: { seconds: wholeSeconds, nanos },
  };
}

function describeDelay(delay: { seconds: number; nanos: number }): string {
  return `${delay.seconds}s+${delay.nanos}ns`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding, for servers and tests

/** Where errors of {@link encodeRetryInfoStatus} point: `encodeRetryInfoStatus: init.retryDelay must be ...`. */
const STATUS_WHERE = 'encodeRetryInfoStatus: init';
const STATUS_INIT_KEYS = ['code', 'message', 'retryDelay', 'details'] as const;
const DURATION_KEYS = ['seconds', 'nanos'] as const;
/** An int64 written as text, as protobufjs takes it. */
const INT64_TEXT = /^-?\d+$/;
/** The range of a proto `int64` (a Duration's `seconds`): protobufjs wraps a value beyond it without a word. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A `google.protobuf.Any` to add to an encoded Status next to the RetryInfo. */
export interface StatusDetail {
  readonly typeUrl: string;
  readonly value: Uint8Array;
}

/** What {@link encodeRetryInfoStatus} encodes. */
export interface RetryInfoStatusInit {
  /** The status code (must equal the gRPC status the server sends). */
  readonly code: number;
  /** Developer-facing message; default empty. */
  readonly message?: string | undefined;
  /**
   * The delay: whole milliseconds, or an exact Duration (`seconds` may be a bigint or decimal string for int64
   * values; negative values are encoded as given, so that tests can send malformed hints). Omit for a Status
   * without a RetryInfo detail.
   */
  readonly retryDelay?:
    | number
    | { readonly seconds: number | bigint | string; readonly nanos?: number }
    | undefined;
  /** Further details, encoded in order after the RetryInfo. */
  readonly details?: readonly StatusDetail[] | undefined;
}

/**
 * Serializes a `google.rpc.Status` holding a `google.rpc.RetryInfo` detail: the value a server puts in the
 * `grpc-status-details-bin` trailer to ask clients to retry after a delay.
 *
 * ```ts
 * const trailers = new grpc.Metadata();
 * trailers.set(STATUS_DETAILS_METADATA_KEY, encodeRetryInfoStatus({ code: 8, retryDelay: 1500 }));
 * callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'quota', metadata: trailers });
 * ```
 * @throws TypeError when `init` is not an object, has a key other than `code`, `message`, `retryDelay` and
 *   `details` (a misspelt `retryDelay` would otherwise encode a Status without a RetryInfo), or a field has the
 *   wrong type; RangeError when `retryDelay` in ms is not a finite integer >= 0, its `seconds` is beyond int64 or
 *   its `nanos` beyond int32, or `code` is not an int32. The errors name `init.retryDelay`.
 */
export function encodeRetryInfoStatus(init: RetryInfoStatusInit): Buffer {
  if (init === undefined) {
    throw new TypeError(`${STATUS_WHERE} must be an object ({ code, retryDelay, ... }), got nothing`);
  }
  checkOptions(STATUS_WHERE, init, STATUS_INIT_KEYS);
  const code: unknown = init.code;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < -(2 ** 31) || code >= 2 ** 31) {
    const message = `${STATUS_WHERE}.code must be an int32 status code, got ${describeValue(code)}${wrongTypeHint(code, 'number')}`;
    throw typeof code === 'number' && !Number.isNaN(code) ? new RangeError(message) : new TypeError(message);
  }
  if (init.message !== undefined && typeof init.message !== 'string') {
    throw new TypeError(`${STATUS_WHERE}.message must be a string, got ${describeValue(init.message)}`);
  }
  if (init.details !== undefined) {
    checkStatusDetails(init.details);
  }
  const details: { type_url: string; value: Uint8Array }[] = [];
  if (init.retryDelay !== undefined) {
    details.push({
      type_url: RETRY_INFO_TYPE_URL,
      value: encodeRetryInfoAt(`${STATUS_WHERE}.retryDelay`, init.retryDelay),
    });
  }
  for (const detail of init.details ?? []) {
    details.push({ type_url: detail.typeUrl, value: detail.value });
  }
  const message = StatusType.fromObject({ code: init.code, message: init.message ?? '', details });
  return Buffer.from(StatusType.encode(message).finish());
}

/**
 * Serializes a bare `google.rpc.RetryInfo` (the `value` of its Any).
 * @throws TypeError when `retryDelay` is neither a number nor a `{ seconds, nanos? }` object; RangeError when a
 *   delay in ms is not an integer >= 0, `seconds` is not an integer in the int64 range or `nanos` not an int32.
 */
export function encodeRetryInfo(
  retryDelay: number | { readonly seconds: number | bigint | string; readonly nanos?: number },
): Uint8Array {
  return encodeRetryInfoAt('encodeRetryInfo: retryDelay', retryDelay);
}

/** {@link encodeRetryInfo}, its errors naming the delay as `where` (the function and argument the caller gave). */
function encodeRetryInfoAt(
  where: string,
  retryDelay: number | { readonly seconds: number | bigint | string; readonly nanos?: number },
): Uint8Array {
  let seconds: string;
  let nanos: number;
  if (typeof retryDelay === 'number') {
    if (!Number.isSafeInteger(retryDelay) || retryDelay < 0) {
      throw new RangeError(`${where} in ms must be an integer >= 0, got ${String(retryDelay)}`);
    }
    seconds = String(Math.floor(retryDelay / 1000));
    nanos = (retryDelay % 1000) * NANOS_PER_MS;
  } else {
    checkDuration(where, retryDelay);
    seconds = String(retryDelay.seconds);
    nanos = retryDelay.nanos ?? 0;
  }
  const message = RetryInfoType.fromObject({ retry_delay: { seconds, nanos } });
  return RetryInfoType.encode(message).finish();
}

/** Every detail must be `{ typeUrl: string, value: Uint8Array }`. */
function checkStatusDetails(details: unknown): void {
  if (!Array.isArray(details)) {
    throw new TypeError(
      `${STATUS_WHERE}.details must be an array of { typeUrl, value } details, got ${describeValue(details)}`,
    );
  }
  for (const [index, detail] of details.entries()) {
    const where = `${STATUS_WHERE}.details[${index}]`;
    if (!isOptionsObject(detail)) {
      throw new TypeError(`${where} must be a { typeUrl, value } detail, got ${describeValue(detail)}`);
    }
    const { typeUrl, value } = checkOptions(where, detail, ['typeUrl', 'value']);
    if (typeof typeUrl !== 'string') {
      throw new TypeError(`${where}.typeUrl must be a string, got ${describeValue(typeUrl)}`);
    }
    if (!(value instanceof Uint8Array)) {
      throw new TypeError(
        `${where}.value must be a Uint8Array (a Buffer will do), got ${describeValue(value)}`,
      );
    }
  }
}

/** A `{ seconds, nanos? }` delay: seconds an int64 (number, bigint or decimal string), nanos an int32. */
function checkDuration(where: string, retryDelay: unknown): void {
  if (!isOptionsObject(retryDelay)) {
    throw new TypeError(
      `${where} must be a number of ms or a { seconds, nanos } Duration, got ${describeValue(retryDelay)}${wrongTypeHint(retryDelay, 'number')}`,
    );
  }
  const { seconds, nanos } = checkOptions(where, retryDelay, DURATION_KEYS);
  const secondsOk =
    typeof seconds === 'bigint' ||
    (typeof seconds === 'number' && Number.isInteger(seconds) && INT64_TEXT.test(String(seconds))) ||
    (typeof seconds === 'string' && INT64_TEXT.test(seconds));
  if (!secondsOk) {
    const message = `${where}.seconds must be an integer (a number, a bigint or a decimal string), got ${describeValue(seconds)}`;
    throw typeof seconds === 'number' && !Number.isNaN(seconds)
      ? new RangeError(message)
      : new TypeError(message);
  }
  const exact = BigInt(seconds as bigint | number | string);
  if (exact < INT64_MIN || exact > INT64_MAX) {
    throw new RangeError(
      `${where}.seconds must be within the int64 range (${INT64_MIN} to ${INT64_MAX}), got ${String(seconds)}`,
    );
  }
  if (
    nanos !== undefined &&
    !(typeof nanos === 'number' && Number.isInteger(nanos) && nanos >= -(2 ** 31) && nanos < 2 ** 31)
  ) {
    const message = `${where}.nanos must be an int32, got ${describeValue(nanos)}`;
    throw typeof nanos === 'number' && !Number.isNaN(nanos)
      ? new RangeError(message)
      : new TypeError(message);
  }
}
