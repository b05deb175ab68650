/**
 * RetryInfo decoding and encoding, where mutation testing found them unchecked (src/retry/retry-info.ts): the exact
 * reason of each malformed hint, what other encoders (Go, protoc) leave out of the wire (a zero `seconds`, an empty
 * `value`), the bounds of the encoder's int32 fields, and what the encoded Status holds.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  encodeRetryInfo,
  encodeRetryInfoStatus,
  parseRetryInfo,
  parseRetryInfoFromStatusDetails,
  RETRY_INFO_TYPE_URL,
  STATUS_DETAILS_METADATA_KEY,
} from '../../src/retry/retry-info.js';

// The protobuf wire format, written and read by hand, so that these tests do not lean on the encoder under test.
function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}
const intField = (no: number, value: number | bigint) => [no << 3, ...varint(value)];
const bytesField = (no: number, bytes: readonly number[]) => [
  (no << 3) | 2,
  ...varint(bytes.length),
  ...bytes,
];
const text = (s: string) => [...Buffer.from(s)];
/** A Status whose one detail is a RetryInfo Any holding `retryInfo` (its bytes), or no `value` field when undefined. */
function statusWithRetryInfo(retryInfo: readonly number[] | undefined): Uint8Array {
  const any = [...bytesField(1, text(RETRY_INFO_TYPE_URL)), ...(retryInfo ? bytesField(2, retryInfo) : [])];
  return Uint8Array.from([...intField(1, 8), ...bytesField(3, any)]);
}

/** The top-level fields of a message: number and raw value (varint as bigint, length-delimited as bytes). */
function readFields(bytes: Uint8Array): { no: number; value: bigint | Uint8Array }[] {
  const fields: { no: number; value: bigint | Uint8Array }[] = [];
  let at = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
  };
  while (at < bytes.length) {
    const key = Number(readVarint());
    if ((key & 7) === 0) {
      fields.push({ no: key >> 3, value: readVarint() });
    } else {
      const length = Number(readVarint());
      fields.push({ no: key >> 3, value: bytes.subarray(at, at + length) });
      at += length;
    }
  }
  return fields;
}

function trailersWith(...values: Uint8Array[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const value of values) md.add(STATUS_DETAILS_METADATA_KEY, Buffer.from(value));
  return md;
}

describe('parseRetryInfo: the reason of each malformed hint', () => {
  it('trailers that cannot be read', () => {
    const throwing = {
      get: () => {
        throw new Error('boom');
      },
    } as unknown as grpc.Metadata;
    expect(parseRetryInfo(throwing)).toEqual({
      kind: 'malformed',
      reason: 'cannot read grpc-status-details-bin',
    });
  });

  it('several details trailers, or a text one', () => {
    const status = encodeRetryInfoStatus({ code: 14, retryDelay: 10 });
    expect(parseRetryInfo(trailersWith(status, status, status))).toEqual({
      kind: 'malformed',
      reason: '3 grpc-status-details-bin values (a status has one)',
    });
    const odd = { get: () => ['text'] } as unknown as grpc.Metadata;
    expect(parseRetryInfo(odd)).toEqual({
      kind: 'malformed',
      reason: 'grpc-status-details-bin is not binary',
    });
  });

  it("bytes that do not decode, with protobufjs's own words", () => {
    expect(parseRetryInfoFromStatusDetails(Uint8Array.from([0x1a, 0x10, 0x01]))).toEqual({
      kind: 'malformed',
      reason: 'undecodable google.rpc.Status (index out of range)',
    });
    expect(parseRetryInfoFromStatusDetails(statusWithRetryInfo([0x0a, 0x05, 0x08]))).toEqual({
      kind: 'malformed',
      reason: 'undecodable google.rpc.RetryInfo in details[0] (index out of range)',
    });
  });

  it('a negative or out-of-range delay, naming the detail and the Duration', () => {
    const status = encodeRetryInfoStatus({
      code: 14,
      details: [
        { typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo', value: new Uint8Array(0) },
        { typeUrl: RETRY_INFO_TYPE_URL, value: encodeRetryInfo({ seconds: -2, nanos: 5 }) },
      ],
    });
    expect(parseRetryInfoFromStatusDetails(status)).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[1]: negative retry_delay (-2s, 5ns)',
    });
    expect(
      parseRetryInfoFromStatusDetails(
        encodeRetryInfoStatus({ code: 14, retryDelay: { seconds: 1, nanos: 1e9 } }),
      ),
    ).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[0]: retry_delay out of the Duration range (1s, 1000000000ns)',
    });
  });

  it('two RetryInfo details with different delays, showing both', () => {
    const status = encodeRetryInfoStatus({
      code: 8,
      retryDelay: { seconds: 1, nanos: 2 },
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: encodeRetryInfo({ seconds: 1, nanos: 3 }) }],
    });
    expect(parseRetryInfoFromStatusDetails(status)).toEqual({
      kind: 'malformed',
      reason: 'several RetryInfo details with different delays (1s+2ns and 1s+3ns)',
    });
    const seconds = encodeRetryInfoStatus({
      code: 8,
      retryDelay: 1000,
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: encodeRetryInfo(2000) }],
    });
    expect(parseRetryInfoFromStatusDetails(seconds)).toEqual({
      kind: 'malformed',
      reason: 'several RetryInfo details with different delays (1s+0ns and 2s+0ns)',
    });
  });
});

describe('parseRetryInfo: what proto3 encoders leave out', () => {
  it('a Duration without seconds (a zero, which Go and protoc do not write) is read as 0 s', () => {
    const nanosOnly = (nanos: number) => statusWithRetryInfo(bytesField(1, intField(2, nanos)));
    expect(parseRetryInfoFromStatusDetails(nanosOnly(5))).toEqual({
      kind: 'retry-after',
      delayMs: 1,
      delay: { seconds: 0, nanos: 5 },
    });
    expect(parseRetryInfoFromStatusDetails(nanosOnly(-5))).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[0]: negative retry_delay (0s, -5ns)',
    });
    // retry_delay present and empty: a delay of zero.
    expect(parseRetryInfoFromStatusDetails(statusWithRetryInfo(bytesField(1, [])))).toEqual({
      kind: 'retry-after',
      delayMs: 0,
      delay: { seconds: 0, nanos: 0 },
    });
  });

  it('a RetryInfo Any without its value field (an empty RetryInfo) has no retry_delay', () => {
    expect(parseRetryInfoFromStatusDetails(statusWithRetryInfo(undefined))).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[0] has no retry_delay',
    });
  });
});

describe('encodeRetryInfoStatus: what the Status holds', () => {
  it('the code, the message and one RetryInfo detail, as a hand decoder reads them', () => {
    const fields = readFields(encodeRetryInfoStatus({ code: 14, message: 'quota', retryDelay: 1500 }));
    expect(fields.map((f) => f.no)).toEqual([1, 2, 3]);
    expect(fields[0]?.value).toBe(14n);
    expect(Buffer.from(fields[1]?.value as Uint8Array).toString()).toBe('quota');
    const any = readFields(fields[2]?.value as Uint8Array);
    expect(Buffer.from(any[0]?.value as Uint8Array).toString()).toBe(RETRY_INFO_TYPE_URL);
    const duration = readFields(readFields(any[1]?.value as Uint8Array)[0]?.value as Uint8Array);
    expect(duration.map((f) => [f.no, f.value])).toEqual([
      [1, 1n],
      [2, 500_000_000n],
    ]);
  });

  it('a left-out message is empty and no details are added', () => {
    const fields = readFields(encodeRetryInfoStatus({ code: 5 }));
    expect(fields.filter((f) => f.no === 3)).toEqual([]);
    for (const message of fields.filter((f) => f.no === 2)) {
      expect((message.value as Uint8Array).length).toBe(0);
    }
    const withDelay = readFields(encodeRetryInfoStatus({ code: 5, retryDelay: 10 }));
    expect(withDelay.filter((f) => f.no === 3)).toHaveLength(1);
  });
});

describe('encodeRetryInfo and encodeRetryInfoStatus: bounds and types', () => {
  it('a delay of 0 ms is encoded and read back as 0', () => {
    expect(parseRetryInfo(trailersWith(encodeRetryInfoStatus({ code: 14, retryDelay: 0 })))).toEqual({
      kind: 'retry-after',
      delayMs: 0,
      delay: { seconds: 0, nanos: 0 },
    });
  });

  it('code takes every int32, and no more', () => {
    const min = -(2 ** 31);
    expect(readFields(encodeRetryInfoStatus({ code: min }))[0]?.value).toBe(BigInt.asUintN(64, BigInt(min)));
    expect(() => encodeRetryInfoStatus({ code: min - 1 })).toThrow(
      new RangeError('encodeRetryInfoStatus: init.code must be an int32 status code, got -2147483649'),
    );
    expect(() => encodeRetryInfoStatus({ code: 2 ** 31 - 1 })).not.toThrow();
  });

  it('a detail whose typeUrl is not a string is named', () => {
    expect(() =>
      encodeRetryInfoStatus({ code: 14, details: [{ typeUrl: 5 as never, value: new Uint8Array(0) }] }),
    ).toThrow(new TypeError('encodeRetryInfoStatus: init.details[0].typeUrl must be a string, got 5'));
  });

  it('seconds that only print as an integer, or are one too large to print as one, are refused', () => {
    const refused =
      'encodeRetryInfo: retryDelay.seconds must be an integer (a number, a bigint or a decimal string)';
    expect(() => encodeRetryInfo({ seconds: [5] as never })).toThrow(new TypeError(`${refused}, got [5]`));
    expect(() => encodeRetryInfo({ seconds: { toString: () => '5' } as never })).toThrow(TypeError);
    expect(() => encodeRetryInfo({ seconds: 1e21 })).toThrow(new RangeError(`${refused}, got 1e+21`));
  });

  it('nanos takes every int32, and no more', () => {
    const nanosOf = (nanos: number) =>
      parseRetryInfoFromStatusDetails(encodeRetryInfoStatus({ code: 14, retryDelay: { seconds: 0, nanos } }));
    expect(nanosOf(2 ** 31 - 1)).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[0]: retry_delay out of the Duration range (0s, 2147483647ns)',
    });
    expect(nanosOf(-(2 ** 31))).toEqual({
      kind: 'malformed',
      reason: 'RetryInfo in details[0]: negative retry_delay (0s, -2147483648ns)',
    });
    for (const nanos of [2 ** 31, -(2 ** 31) - 1]) {
      expect(() => encodeRetryInfo({ seconds: 0, nanos })).toThrow(
        new RangeError(`encodeRetryInfo: retryDelay.nanos must be an int32, got ${nanos}`),
      );
    }
  });
});
