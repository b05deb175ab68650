import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_INFO_MAX_DELAY_MS,
  encodeRetryInfo,
  encodeRetryInfoStatus,
  parseRetryInfo,
  parseRetryInfoFromStatusDetails,
  RETRY_INFO_TYPE_URL,
  STATUS_DETAILS_METADATA_KEY,
} from '../../src/retry/retry-info.js';
import {
  readRetryInfoDelayMs,
  resolveRetryInfoOptions,
  retryInfoPolicy,
} from '../../src/retry/retry-info-option.js';
import { readServerHint } from '../../src/retry/server-hint.js';
import { PUSHBACK_METADATA_KEY } from '../../src/shared/headers.js';
import { seededRandom } from '../../src/testing/seeded-random.js';
import { bindLocal } from '../helpers/bind-local.js';

function trailersWith(...values: Array<Buffer | string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const value of values) md.add(STATUS_DETAILS_METADATA_KEY, value as Buffer);
  return md;
}

function parseDelay(retryDelay: Parameters<typeof encodeRetryInfo>[0]) {
  return parseRetryInfo(trailersWith(encodeRetryInfoStatus({ code: 14, retryDelay })));
}

/** A google.rpc.ErrorInfo-like detail: any bytes under another type URL. */
const errorInfo = {
  typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo',
  value: Uint8Array.from([0x0a, 0x03, 0x61, 0x62, 0x63]),
};

describe('parseRetryInfo: seconds and nanos', () => {
  it('reads whole seconds and nanos into ms and keeps the exact Duration', () => {
    expect(parseDelay({ seconds: 2, nanos: 500_000_000 })).toEqual({
      kind: 'retry-after',
      delayMs: 2500,
      delay: { seconds: 2, nanos: 500_000_000 },
    });
    expect(parseDelay(1500)).toEqual({
      kind: 'retry-after',
      delayMs: 1500,
      delay: { seconds: 1, nanos: 500_000_000 },
    });
    expect(parseDelay({ seconds: 0 })).toMatchObject({ kind: 'retry-after', delayMs: 0 });
    expect(parseDelay({ seconds: '315576000000' })).toMatchObject({
      kind: 'retry-after',
      delayMs: 315_576_000_000_000,
    });
  });

  it('rounds nanos up to the next whole ms (RetryInfo means "at least")', () => {
    expect(parseDelay({ seconds: 0, nanos: 1 })).toMatchObject({ delayMs: 1 });
    expect(parseDelay({ seconds: 0, nanos: 1_000_000 })).toMatchObject({ delayMs: 1 });
    expect(parseDelay({ seconds: 0, nanos: 1_000_001 })).toMatchObject({ delayMs: 2 });
    expect(parseDelay({ seconds: 3, nanos: 999_999_999 })).toMatchObject({ delayMs: 4000 });
  });
});

describe('parseRetryInfo: absent', () => {
  it('no trailers, no details trailer, or a Status without a RetryInfo detail', () => {
    expect(parseRetryInfo(undefined)).toEqual({ kind: 'absent' });
    expect(parseRetryInfo(new grpc.Metadata())).toEqual({ kind: 'absent' });
    expect(parseRetryInfo(trailersWith(encodeRetryInfoStatus({ code: 14 })))).toEqual({ kind: 'absent' });
    expect(parseRetryInfo(trailersWith(encodeRetryInfoStatus({ code: 14, details: [errorInfo] })))).toEqual({
      kind: 'absent',
    });
    expect(parseRetryInfoFromStatusDetails(new Uint8Array(0))).toEqual({ kind: 'absent' });
  });
});

describe('parseRetryInfo: malformed input never throws', () => {
  it('rejects negative and out-of-range delays', () => {
    expect(parseDelay({ seconds: -1 })).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/negative/),
    });
    expect(parseDelay({ seconds: 1, nanos: -5 })).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/negative/),
    });
    expect(parseDelay({ seconds: 0, nanos: 1_000_000_000 })).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/out of the Duration range/),
    });
    expect(parseDelay({ seconds: '315576000001' })).toMatchObject({ kind: 'malformed' });
    expect(parseDelay({ seconds: 9_223_372_036_854_775_807n })).toMatchObject({ kind: 'malformed' });
  });

  it('rejects a RetryInfo without retry_delay', () => {
    const status = encodeRetryInfoStatus({
      code: 14,
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: new Uint8Array(0) }],
    });
    expect(parseRetryInfo(trailersWith(status))).toMatchObject({
      kind: 'malformed',
      reason: 'RetryInfo in details[0] has no retry_delay',
    });
  });

  it('rejects bytes that are not a Status, or a RetryInfo value that does not decode', () => {
    expect(parseRetryInfoFromStatusDetails(Uint8Array.from([0x1a, 0x10, 0x01]))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/undecodable google.rpc.Status/),
    });
    expect(parseRetryInfoFromStatusDetails(Uint8Array.from([0x0f]))).toMatchObject({ kind: 'malformed' });
    const badValue = encodeRetryInfoStatus({
      code: 14,
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: Uint8Array.from([0x0a, 0x05, 0x08]) }],
    });
    expect(parseRetryInfo(trailersWith(badValue))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/undecodable google.rpc.RetryInfo in details\[0\]/),
    });
  });

  it('rejects a text value and several details trailers', () => {
    // grpc-js's Metadata refuses text under a -bin key; a hand-made trailers object can still hold one.
    const odd = { get: () => ['text'] } as unknown as grpc.Metadata;
    expect(parseRetryInfo(odd)).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/not binary/),
    });
    const status = encodeRetryInfoStatus({ code: 14, retryDelay: 10 });
    expect(parseRetryInfo(trailersWith(status, status))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/2 grpc-status-details-bin values/),
    });
    const throwing = {
      get: () => {
        throw new Error('boom');
      },
    } as unknown as grpc.Metadata;
    expect(parseRetryInfo(throwing)).toMatchObject({ kind: 'malformed' });
  });

  it('survives 3,000 random and mutated inputs', () => {
    const random = seededRandom(11);
    const valid = encodeRetryInfoStatus({
      code: 8,
      message: 'quota',
      retryDelay: 1234,
      details: [errorInfo],
    });
    const kinds = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      let bytes: Uint8Array;
      if (i % 2 === 0) {
        bytes = Uint8Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 256));
      } else {
        bytes = Uint8Array.from(valid);
        const flips = 1 + Math.floor(random() * 3);
        for (let f = 0; f < flips; f++)
          bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        if (random() < 0.3) bytes = bytes.subarray(0, Math.floor(random() * bytes.length));
      }
      const result = parseRetryInfoFromStatusDetails(bytes);
      kinds.add(result.kind);
      if (result.kind === 'retry-after') {
        expect(Number.isSafeInteger(result.delayMs) && result.delayMs >= 0).toBe(true);
      }
    }
    expect(kinds).toEqual(new Set(['absent', 'retry-after', 'malformed']));
  });
});

describe('parseRetryInfo: several details', () => {
  it('finds the RetryInfo among other details, whatever the type URL host', () => {
    const status = encodeRetryInfoStatus({
      code: 8,
      details: [errorInfo, { typeUrl: 'example.com/x/google.rpc.RetryInfo', value: encodeRetryInfo(250) }],
    });
    expect(parseRetryInfo(trailersWith(status))).toMatchObject({ kind: 'retry-after', delayMs: 250 });
    const lookalike = encodeRetryInfoStatus({
      code: 8,
      details: [{ typeUrl: 'type.googleapis.com/google.rpc.RetryInfoX', value: encodeRetryInfo(250) }],
    });
    expect(parseRetryInfo(trailersWith(lookalike))).toEqual({ kind: 'absent' });
  });

  it('accepts repeated equal RetryInfo details and rejects different ones', () => {
    const same = encodeRetryInfoStatus({
      code: 8,
      retryDelay: 300,
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: encodeRetryInfo(300) }],
    });
    expect(parseRetryInfo(trailersWith(same))).toMatchObject({ kind: 'retry-after', delayMs: 300 });
    const different = encodeRetryInfoStatus({
      code: 8,
      retryDelay: 300,
      details: [errorInfo, { typeUrl: RETRY_INFO_TYPE_URL, value: encodeRetryInfo(400) }],
    });
    expect(parseRetryInfo(trailersWith(different))).toMatchObject({
      kind: 'malformed',
      reason: expect.stringMatching(/different delays \(0s\+300000000ns and 0s\+400000000ns\)/),
    });
  });

  it('a RetryInfo detail that does not decode, beside a good one, makes the hint malformed, not the good delay', () => {
    const broken = encodeRetryInfoStatus({
      code: 8,
      retryDelay: 300,
      details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: Uint8Array.from([0x0f]) }],
    });
    expect(parseRetryInfo(trailersWith(broken))).toMatchObject({ kind: 'malformed' });
  });
});

describe('encodeRetryInfoStatus', () => {
  it('refuses an invalid code or delay', () => {
    expect(() => encodeRetryInfoStatus({ code: 1.5 })).toThrow(RangeError);
    expect(() => encodeRetryInfoStatus({ code: 14, retryDelay: -1 })).toThrow(/retryDelay/);
    expect(() => encodeRetryInfoStatus({ code: 14, retryDelay: 0.5 })).toThrow(RangeError);
  });
});

describe('retry-info through a real grpc-js server', () => {
  it('the trailer a server sends reaches the client status as a Buffer that parses', async () => {
    const server = new grpc.Server();
    const service = {
      Fail: {
        path: '/t.T/Fail',
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: Buffer) => v,
        requestDeserialize: (v: Buffer) => v,
        responseSerialize: (v: Buffer) => v,
        responseDeserialize: (v: Buffer) => v,
      },
    };
    server.addService(service, {
      Fail: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => {
        const metadata = new grpc.Metadata();
        metadata.set(
          STATUS_DETAILS_METADATA_KEY,
          encodeRetryInfoStatus({
            code: grpc.status.RESOURCE_EXHAUSTED,
            retryDelay: { seconds: 1, nanos: 5 },
          }),
        );
        callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'quota', metadata });
      },
    });
    const port = await bindLocal(server);
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const status = await new Promise<grpc.StatusObject>((resolve) => {
        const call = client.makeUnaryRequest(
          '/t.T/Fail',
          (v: Buffer) => v,
          (v: Buffer) => v,
          Buffer.alloc(0),
          () => {},
        );
        call.on('status', resolve);
      });
      expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(parseRetryInfo(status.metadata)).toEqual({
        kind: 'retry-after',
        delayMs: 1001,
        delay: { seconds: 1, nanos: 5 },
      });
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});

describe('resolveRetryInfoOptions and retryInfoPolicy', () => {
  it('defaults to enabled with a 60 s cap', () => {
    expect(resolveRetryInfoOptions(undefined)).toEqual({
      enabled: true,
      maxDelayMs: DEFAULT_RETRY_INFO_MAX_DELAY_MS,
    });
    expect(DEFAULT_RETRY_INFO_MAX_DELAY_MS).toBe(60_000);
    expect(resolveRetryInfoOptions(false)).toEqual({ enabled: false, maxDelayMs: 60_000 });
    expect(resolveRetryInfoOptions(true)).toEqual({ enabled: true, maxDelayMs: 60_000 });
    expect(resolveRetryInfoOptions({ maxDelayMs: 0 })).toEqual({ enabled: true, maxDelayMs: 0 });
  });

  it('names the bad option', () => {
    expect(() => resolveRetryInfoOptions(5)).toThrow(TypeError);
    expect(() => resolveRetryInfoOptions({ maxDelay: 5 })).toThrow(
      'createRetryInterceptor: options.retryInfo.maxDelay is not an option; did you mean "maxDelayMs"? (known: maxDelayMs)',
    );
    expect(() => resolveRetryInfoOptions({ enabled: false })).toThrow(
      'options.retryInfo.enabled was removed: write retryInfo: false to turn RetryInfo off',
    );
    expect(() => resolveRetryInfoOptions('yes')).toThrow(
      'options.retryInfo must be true, false or an object { maxDelayMs? }, got "yes"',
    );
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '100']) {
      expect(() => resolveRetryInfoOptions({ maxDelayMs: bad })).toThrow(
        /options\.retryInfo\.maxDelayMs must be/,
      );
    }
    expect(() => resolveRetryInfoOptions({ maxDelayMs: -1 })).toThrow(RangeError);
  });

  it('retryInfoPolicy: undefined when switched off, else the reader and the cap', () => {
    expect(retryInfoPolicy(false)).toBeUndefined();
    expect(retryInfoPolicy(undefined)).toEqual({ read: readRetryInfoDelayMs, maxDelayMs: 60_000 });
    expect(() => retryInfoPolicy({ maxDelayMs: -5 })).toThrow(RangeError);
    const at = (ms: number) => trailersWith(encodeRetryInfoStatus({ code: 14, retryDelay: ms }));
    expect(readRetryInfoDelayMs(at(1234))).toBe(1234);
    expect(readRetryInfoDelayMs(new grpc.Metadata())).toBeUndefined();
    expect(readRetryInfoDelayMs(trailersWith(Buffer.from([0xff])))).toBeUndefined();
  });
});

describe("with the engine's readServerHint: precedence and cap", () => {
  const policy = retryInfoPolicy({ maxDelayMs: 1000 });
  const trailers = (retryDelayMs: number | undefined, pushback?: string) => {
    const md =
      retryDelayMs === undefined
        ? new grpc.Metadata()
        : trailersWith(encodeRetryInfoStatus({ code: 14, retryDelay: retryDelayMs }));
    if (pushback !== undefined) md.set(PUSHBACK_METADATA_KEY, pushback);
    return md;
  };

  it("A6's trailer wins over RetryInfo, whatever it says", () => {
    expect(readServerHint(trailers(500, '20'), policy)).toEqual({
      kind: 'retry-after',
      delayMs: 20,
      source: 'pushback',
    });
    expect(readServerHint(trailers(500, '-1'), policy)).toMatchObject({
      kind: 'do-not-retry',
      source: 'pushback',
    });
    expect(readServerHint(trailers(5000, '0'), policy)).toMatchObject({ kind: 'retry-after', delayMs: 0 });
  });

  it('RetryInfo decides when there is no pushback; above the cap it ends the call; off means ignored', () => {
    expect(readServerHint(trailers(1000), policy)).toEqual({
      kind: 'retry-after',
      delayMs: 1000,
      source: 'retry-info',
    });
    expect(readServerHint(trailers(1001), policy)).toMatchObject({
      kind: 'do-not-retry',
      source: 'retry-info',
    });
    expect(readServerHint(trailers(undefined), policy)).toEqual({ kind: 'none' });
    expect(readServerHint(trailers(500), retryInfoPolicy(false))).toEqual({ kind: 'none' });
  });
});
