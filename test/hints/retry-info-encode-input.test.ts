/**
 * encodeRetryInfoStatus and encodeRetryInfo from plain JS: a misspelt field, a null or a value of the wrong type is
 * an error naming it, never a crash inside the encoder or a Status that silently has no RetryInfo.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  encodeRetryInfo,
  encodeRetryInfoStatus,
  parseRetryInfo,
  STATUS_DETAILS_METADATA_KEY,
} from '../../src/retry/retry-info.js';

const W = 'encodeRetryInfoStatus: init';
const status = (init: unknown) => () => encodeRetryInfoStatus(init as never);
const info = (delay: unknown) => () => encodeRetryInfo(delay as never);

describe('encodeRetryInfoStatus(init) checks init', () => {
  it('names a misspelt retryDelay instead of leaving the RetryInfo out', () => {
    expect(status({ code: 14, retryDelayMs: 1500 })).toThrow(
      new TypeError(
        `${W}.retryDelayMs is not an option; did you mean "retryDelay"? (known: code, message, retryDelay, details)`,
      ),
    );
    expect(status({ code: 14, detail: [] })).toThrow(
      /init\.detail is not an option; did you mean "details"\?/,
    );
  });

  it.each([
    [null, 'null'],
    ['14', '"14"'],
    [[14], '[14]'],
  ])('rejects %j as init', (init, described) => {
    expect(status(init)).toThrow(new TypeError(`${W} must be an object, got ${described}`));
  });

  it('rejects a left-out init', () => {
    expect(status(undefined)).toThrow(
      new TypeError(`${W} must be an object ({ code, retryDelay, ... }), got nothing`),
    );
  });

  it('names a code of the wrong type or out of range', () => {
    expect(status({ retryDelay: 10 })).toThrow(
      new TypeError(`${W}.code must be an int32 status code, got nothing`),
    );
    expect(status({ code: '14' })).toThrow(
      new TypeError(
        `${W}.code must be an int32 status code, got "14"; did you mean 14 (a number, not a string)?`,
      ),
    );
    expect(status({ code: 2 ** 31 })).toThrow(
      new RangeError(`${W}.code must be an int32 status code, got 2147483648`),
    );
  });

  it('names a message or details of the wrong type', () => {
    expect(status({ code: 14, message: 5 })).toThrow(new TypeError(`${W}.message must be a string, got 5`));
    expect(status({ code: 14, details: {} })).toThrow(
      new TypeError(`${W}.details must be an array of { typeUrl, value } details, got {}`),
    );
    expect(status({ code: 14, details: [null] })).toThrow(
      new TypeError(`${W}.details[0] must be a { typeUrl, value } detail, got null`),
    );
    expect(status({ code: 14, details: [{ typeUrl: 'x', value: 'abc' }] })).toThrow(
      new TypeError(`${W}.details[0].value must be a Uint8Array (a Buffer will do), got "abc"`),
    );
    expect(status({ code: 14, details: [{ type_url: 'x', value: Buffer.alloc(0) }] })).toThrow(
      /details\[0\]\.type_url is not an option; did you mean "typeUrl"\?/,
    );
  });

  it('names init.retryDelay, not another function, when the delay is wrong', () => {
    expect(status({ code: 8, retryDelay: -5 })).toThrow(
      new RangeError(`${W}.retryDelay in ms must be an integer >= 0, got -5`),
    );
    expect(status({ code: 8, retryDelay: 'abc' })).toThrow(
      new TypeError(`${W}.retryDelay must be a number of ms or a { seconds, nanos } Duration, got "abc"`),
    );
    expect(status({ code: 8, retryDelay: { seconds: 1, nanos: 0.5 } })).toThrow(
      new RangeError(`${W}.retryDelay.nanos must be an int32, got 0.5`),
    );
  });

  it('still encodes a valid init, with the RetryInfo', () => {
    const md = new grpc.Metadata();
    md.set(STATUS_DETAILS_METADATA_KEY, encodeRetryInfoStatus({ code: 14, message: 'm', retryDelay: 1500 }));
    expect(parseRetryInfo(md)).toMatchObject({ kind: 'retry-after', delayMs: 1500 });
  });
});

describe('encodeRetryInfo(retryDelay) checks the delay', () => {
  it.each([
    [null, 'null'],
    [undefined, 'nothing'],
    [true, 'true'],
  ])('rejects %j', (delay, described) => {
    expect(info(delay)).toThrow(
      new TypeError(
        `encodeRetryInfo: retryDelay must be a number of ms or a { seconds, nanos } Duration, got ${described}`,
      ),
    );
  });

  it('hints at a number written as a string', () => {
    expect(info('1500')).toThrow(/got "1500"; did you mean 1500 \(a number, not a string\)\?/);
  });

  it('names a bad Duration field', () => {
    expect(info({ second: 1 })).toThrow(
      /^encodeRetryInfo: retryDelay\.second is not an option; did you mean "seconds"\?/,
    );
    expect(info({ nanos: 5 })).toThrow(
      new TypeError(
        'encodeRetryInfo: retryDelay.seconds must be an integer (a number, a bigint or a decimal string), got nothing',
      ),
    );
    expect(info({ seconds: 1.5 })).toThrow(RangeError);
    expect(info({ seconds: '1.5' })).toThrow(/retryDelay\.seconds must be an integer/);
    expect(info({ seconds: 1, nanos: '5' })).toThrow(
      new TypeError('encodeRetryInfo: retryDelay.nanos must be an int32, got "5"'),
    );
    expect(info({ seconds: 1, nanos: 0.5 })).toThrow(RangeError);
  });

  it('refuses seconds beyond int64, which protobufjs would wrap (2^70 s sent as 0 s)', () => {
    const range = '(-9223372036854775808 to 9223372036854775807)';
    expect(info({ seconds: 2n ** 70n })).toThrow(
      new RangeError(
        `encodeRetryInfo: retryDelay.seconds must be within the int64 range ${range}, got 1180591620717411303424`,
      ),
    );
    expect(info({ seconds: '-9223372036854775809' })).toThrow(RangeError);
    expect(info({ seconds: 1e20 })).toThrow(RangeError);
    expect(status({ code: 8, retryDelay: { seconds: '99999999999999999999999' } })).toThrow(
      new RangeError(
        `${W}.retryDelay.seconds must be within the int64 range ${range}, got 99999999999999999999999`,
      ),
    );
  });

  it('still encodes the Durations tests use, negative and int64 ones included', () => {
    for (const delay of [
      { seconds: 1 },
      { seconds: -1, nanos: -5 },
      { seconds: 10n ** 12n },
      { seconds: '42' },
      { seconds: 2n ** 63n - 1n },
      { seconds: '-9223372036854775808' },
    ]) {
      expect(info(delay)).not.toThrow();
    }
  });
});
