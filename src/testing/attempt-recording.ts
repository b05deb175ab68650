/**
 * What the flaky server records about each attempt: the per-call-id attempt counter, the {@link RecordedAttempt}
 * built from the request metadata, and what each received message adds to it.
 */

import type * as grpc from '@grpc/grpc-js';
import { PREVIOUS_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';
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
  const raw = firstString(metadata, PREVIOUS_ATTEMPTS_METADATA_KEY);
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

/**
 * Every attempt the server has seen, in arrival order, and the attempt counter of each call id.
 */
export class AttemptLog {
  private readonly counters = new Map<string, number>();
  /** The kept attempts in arrival order, oldest first (those before `first` are forgotten, see `keep`). */
  private records: (MutableAttempt | undefined)[] = [];
  private first = 0;

  /** @param limit The most attempts kept: the oldest beyond it are forgotten (0 keeps none). */
  constructor(
    private readonly requestIds: RequestIdSources,
    private readonly limit: number = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Records an arriving attempt of `callId` on `method` (a full path) and returns its live record. Its number counts
   * within the call id; without a call id (`""`) it is the attempt's `grpc-previous-rpc-attempts` plus one.
   */
  begin(callId: string, method: string, metadata: grpc.Metadata, now: number): MutableAttempt {
    const previousRpcAttempts = parsePreviousAttempts(metadata);
    let attempt: number;
    if (callId === '') {
      attempt =
        previousRpcAttempts !== undefined && Number.isFinite(previousRpcAttempts)
          ? previousRpcAttempts + 1
          : 1;
    } else {
      attempt = (this.counters.get(callId) ?? 0) + 1;
      this.counters.set(callId, attempt);
    }
    const record: MutableAttempt = {
      callId,
      attempt,
      method,
      arrivedAt: now,
      previousRpcAttempts,
      metadata: metadataToRecord(metadata),
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
    this.records.push(record);
    if (this.records.length - this.first > this.limit) {
      this.records[this.first] = undefined; // let it go now; compacted below once many have gone
      this.first += 1;
      if (this.first >= 1024 && this.first >= this.records.length / 2) {
        this.records = this.records.slice(this.first);
        this.first = 0;
      }
    }
  }

  /** The kept attempts, oldest first. */
  private kept(): MutableAttempt[] {
    return (this.first === 0 ? this.records : this.records.slice(this.first)) as MutableAttempt[];
  }

  /** Adds a received request message to `record` (see {@link recordMessage}). */
  receive(record: MutableAttempt, message: unknown): void {
    recordMessage(record, message, this.requestIds);
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
    return [...this.kept()];
  }

  /** Forgets the attempts and the counter of `callId`. */
  forget(callId: string): void {
    this.counters.delete(callId);
    this.records = this.kept().filter((r) => r.callId !== callId);
    this.first = 0;
  }

  /** Forgets every attempt and counter. */
  clear(): void {
    this.counters.clear();
    this.records = [];
    this.first = 0;
  }
}
