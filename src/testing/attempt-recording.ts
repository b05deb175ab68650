/**
 * What the flaky server records about each attempt: the per-call-id attempt counter, the {@link RecordedAttempt}
 * built from the request metadata, and what each received message adds to it.
 */

import type * as grpc from '@grpc/grpc-js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';
import { CallIdCounters } from './call-id-counters.js';
import type { RecordedAttempt } from './flaky-script.js';
import { camelCaseField, snakeCaseField } from './response-fields.js';

/** A {@link RecordedAttempt} the server may update while the attempt runs. */
export type MutableAttempt = {
  -readonly [K in keyof RecordedAttempt]: RecordedAttempt[K];
};

type MetadataRecord = Record<string, string | Buffer | Array<string | Buffer>>;

/** Where request ids are read from; `undefined` turns a source off. */
export interface RequestIdSources {
  /** Lowercase request header, e.g. `x-request-id`. */
  readonly header: string | undefined;
  /**
   * Name of the request field, as the user gave it (`request_id` or `requestId`): a message is read under that
   * key, then under its other spelling, so that it matches requests loaded with camelCase names or `keepCase`.
   */
  readonly field: string | undefined;
}

/** The first string value of `key` in `metadata`, if any. */
export function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  for (const value of metadata.get(key)) {
    if (typeof value === 'string') {
      return value;
    }
  }
  return undefined;
}

/** Bytes of the request headers: keys and values. */
function metadataBytes(metadata: MetadataRecord): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(metadata)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      bytes += key.length + (typeof one === 'string' ? Buffer.byteLength(one) : one.byteLength);
    }
  }
  return bytes;
}

/** Wire size of each request message the server decoded (see {@link measureRequests}). */
const wireSizes = new WeakMap<object, number>();

/**
 * Wraps a method's request deserializer so that the wire size of each decoded message is known, for
 * {@link FlakyServerOptions.maxRecordedBytes}.
 */
export function measureRequests(deserialize: (bytes: Buffer) => unknown): (bytes: Buffer) => unknown {
  return (bytes) => {
    const message = deserialize(bytes);
    if (typeof message === 'object' && message !== null) {
      wireSizes.set(message, bytes.length);
    }
    return message;
  };
}

/** The bytes a request message counts for: its wire size, else its payload and blob. */
function messageBytes(message: unknown): number {
  if (typeof message === 'object' && message !== null) {
    const size = wireSizes.get(message);
    if (size !== undefined) {
      return size;
    }
  }
  const { payload, blobBytes } = readMessage(message);
  return Buffer.byteLength(payload) + blobBytes;
}

function metadataToRecord(metadata: grpc.Metadata): MetadataRecord {
  const out: MetadataRecord = {};
  for (const [key, values] of Object.entries(metadata.toJSON())) {
    if (values.length === 1) {
      out[key] = values[0]!;
    } else if (values.length > 1) {
      out[key] = [...values];
    }
  }
  return out;
}

function parsePreviousAttempts(metadata: grpc.Metadata): number | undefined {
  const raw = firstString(metadata, PREVIOUS_RPC_ATTEMPTS_METADATA_KEY);
  if (raw === undefined) {
    return undefined;
  }
  return /^\s*\d+\s*$/.test(raw) ? Number.parseInt(raw, 10) : Number.NaN;
}

/** The payload and blob size of a request message (anything not an object counts as empty). */
export function readMessage(message: unknown): { payload: string; blobBytes: number } {
  if (typeof message !== 'object' || message === null) {
    return { payload: '', blobBytes: 0 };
  }
  const { payload, blob } = message as { payload?: unknown; blob?: unknown };
  let blobBytes = 0;
  if (blob instanceof Uint8Array) {
    blobBytes = blob.byteLength;
  } else if (typeof blob === 'string') {
    blobBytes = Buffer.byteLength(blob, 'base64');
  }
  return { payload: typeof payload === 'string' ? payload : '', blobBytes };
}

/** Adds a received request message to the attempt's record: its payload, blob size and request id field. */
export function recordMessage(record: MutableAttempt, message: unknown, sources: RequestIdSources): void {
  const { payload, blobBytes } = readMessage(message);
  record.messages.push(payload);
  record.requests.push(message);
  record.blobBytes += blobBytes;
  if (sources.field !== undefined && record.requestIdSource !== 'field') {
    const value = requestIdOf(message, sources.field);
    if (value !== undefined) {
      record.requestId = value;
      record.requestIdSource = 'field';
    }
  }
}

/** The non-empty string under `field` in `message`, else under its other spelling (`request_id` / `requestId`). */
function requestIdOf(message: unknown, field: string): string | undefined {
  if (typeof message !== 'object' || message === null) {
    return undefined;
  }
  const fields = message as Record<string, unknown>;
  for (const key of new Set([field, camelCaseField(field), snakeCaseField(field)])) {
    const value = fields[key];
    if (typeof value === 'string' && value !== '') {
      return value;
    }
  }
  return undefined;
}

/** The bounds of an {@link AttemptLog}. */
export interface AttemptLogLimits {
  /** The most request bytes (messages' wire size and headers) the kept attempts hold. */
  readonly maxBytes?: number;
  /** The most call ids whose attempt counter is kept (see {@link CallIdCounters}). */
  readonly maxCallIds?: number;
  /** Told each call id whose counter was forgotten because of `maxCallIds`. */
  readonly onForgetCallId?: (callId: string) => void;
}

/**
 * Every attempt the server has seen, in arrival order, and the attempt counter of each call id. Bounded three ways:
 * the most attempts kept (the oldest beyond it are forgotten), the most request bytes they hold (the oldest settled
 * are forgotten first; the newest attempt is always kept) and the most call ids counted.
 */
export class AttemptLog {
  private readonly counters: CallIdCounters;
  /** The kept attempts in arrival order, oldest first, with the request bytes each holds. */
  private readonly records = new Map<MutableAttempt, number>();
  private newest: MutableAttempt | undefined;
  private bytes = 0;
  private readonly maxBytes: number;

  /** @param limit The most attempts kept: the oldest beyond it are forgotten (0 keeps none). */
  constructor(
    private readonly requestIds: RequestIdSources,
    private readonly limit: number = Number.POSITIVE_INFINITY,
    limits: AttemptLogLimits = {},
  ) {
    this.maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
    this.counters = new CallIdCounters(limits.maxCallIds, limits.onForgetCallId);
  }

  /**
   * Records an arriving attempt of `callId` on `method` (a full path) and returns its live record. Its number counts
   * within the call id; without a call id (`""`) it is the attempt's `grpc-previous-rpc-attempts` plus one.
   * `pinned`: the call id has a script the test registered, so its counter is never forgotten on its own.
   */
  begin(
    callId: string,
    method: string,
    metadata: grpc.Metadata,
    now: number,
    pinned = false,
  ): MutableAttempt {
    const previousRpcAttempts = parsePreviousAttempts(metadata);
    let attempt: number;
    if (callId === '') {
      attempt =
        previousRpcAttempts !== undefined && Number.isFinite(previousRpcAttempts)
          ? previousRpcAttempts + 1
          : 1;
    } else {
      attempt = this.counters.next(callId, pinned);
    }
    const headers = metadataToRecord(metadata);
    const record: MutableAttempt = {
      callId,
      attempt,
      method,
      arrivedAt: now,
      previousRpcAttempts,
      metadata: headers,
      messages: [],
      requests: [],
      blobBytes: 0,
      halfClosed: false,
      cancelled: false,
      endedWith: undefined,
      responsesSent: 0,
    };
    const header = this.requestIds.header;
    const headerId = header === undefined ? undefined : firstString(metadata, header);
    if (headerId !== undefined && headerId !== '') {
      record.requestId = headerId;
      record.requestIdSource = 'header';
    }
    this.keep(record);
    return record;
  }

  private keep(record: MutableAttempt): void {
    if (this.limit === 0) {
      return;
    }
    const bytes = metadataBytes(record.metadata);
    this.records.set(record, bytes);
    this.bytes += bytes;
    this.newest = record;
    while (this.records.size > this.limit) {
      const oldest = this.records.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.drop(oldest);
    }
    this.trimBytes();
  }

  private drop(record: MutableAttempt): void {
    this.bytes -= this.records.get(record) ?? 0;
    this.records.delete(record);
    if (record === this.newest) {
      this.newest = undefined;
    }
  }

  /** Beyond `maxBytes`, forgets the oldest settled attempts (never the newest) until the rest fit. */
  private trimBytes(): void {
    if (this.bytes <= this.maxBytes) {
      return;
    }
    for (const record of this.records.keys()) {
      if (this.bytes <= this.maxBytes) {
        return;
      }
      if (record !== this.newest && record.endedAt !== undefined) {
        this.drop(record);
      }
    }
  }

  /** The kept attempts, oldest first. */
  private kept(): MutableAttempt[] {
    return [...this.records.keys()];
  }

  /** Adds a received request message to `record` (see {@link recordMessage}). */
  receive(record: MutableAttempt, message: unknown): void {
    recordMessage(record, message, this.requestIds);
    const held = this.records.get(record);
    if (held !== undefined) {
      const bytes = messageBytes(message);
      this.records.set(record, held + bytes);
      this.bytes += bytes;
      this.trimBytes();
    }
  }

  /**
   * `record`'s attempt has ended (its status sent, or cancelled; call once per attempt): its call id's counter may
   * be forgotten, and the record itself once it is among the oldest.
   */
  settle(record: MutableAttempt): void {
    if (record.callId !== '') {
      this.counters.settle(record.callId);
    }
    this.trimBytes();
  }

  /** Number of call ids whose attempt counter is kept. */
  get trackedCallIds(): number {
    return this.counters.size;
  }

  /** Request bytes the kept attempts hold (messages' wire size and headers). */
  get recordedBytes(): number {
    return this.bytes;
  }

  /** Recorded attempts of `callId` in arrival order. */
  attempts(callId: string): MutableAttempt[] {
    return this.kept().filter((r) => r.callId === callId);
  }

  /** Recorded attempts of `method` (a full path) in arrival order. */
  attemptsOf(method: string): MutableAttempt[] {
    return this.kept().filter((r) => r.method === method);
  }

  /** Every recorded attempt in arrival order (a copy of the list). */
  all(): MutableAttempt[] {
    return this.kept();
  }

  /** Forgets the attempts and the counter of `callId`. */
  forget(callId: string): void {
    this.counters.forget(callId);
    for (const record of this.records.keys()) {
      if (record.callId === callId) {
        this.drop(record);
      }
    }
  }

  /** Forgets every attempt and counter. */
  clear(): void {
    this.counters.clear();
    this.records.clear();
    this.newest = undefined;
    this.bytes = 0;
  }
}
