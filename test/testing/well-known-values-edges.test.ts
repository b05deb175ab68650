/**
 * The edges of the proto3 JSON forms of the well-known types in a scripted response: the exact limits of each
 * range (years, months, days, times of day, UTC offsets, 32-bit integers, nanos), strings that only begin or end
 * like one of the forms, each wrapper's values and the exact words of each refusal.
 */
import { describe, expect, it } from 'vitest';
import {
  acceptedForms,
  parseDuration,
  parseTimestamp,
  type WellKnownType,
  wellKnownValueProblem,
  wireValueOf,
} from '../../src/testing/well-known-values.js';

const T = 'google.protobuf.Timestamp';
const D = 'google.protobuf.Duration';
const DOUBLE = 'google.protobuf.DoubleValue';
const FLOAT = 'google.protobuf.FloatValue';
const INT64 = 'google.protobuf.Int64Value';
const UINT64 = 'google.protobuf.UInt64Value';
const INT32 = 'google.protobuf.Int32Value';
const UINT32 = 'google.protobuf.UInt32Value';
const BOOL = 'google.protobuf.BoolValue';
const STRING = 'google.protobuf.StringValue';
const BYTES = 'google.protobuf.BytesValue';

/** Expects each value, bare and as `{value}`, to be taken for `type`. */
function expectTaken(type: WellKnownType, values: readonly unknown[]): void {
  for (const value of values) {
    expect(wellKnownValueProblem(type, value), `${type} ${String(value)}`).toBeUndefined();
    expect(wellKnownValueProblem(type, { value }), `${type} {value: ${String(value)}}`).toBeUndefined();
  }
}

/** Expects each value to be refused for `type`, bare (`got ...`) and as `{value}` (`"value" must be ...`). */
function expectRefused(
  type: WellKnownType,
  cases: readonly (readonly [unknown, string])[],
  mustBe: string,
): void {
  for (const [value, described] of cases) {
    expect(wellKnownValueProblem(type, value), `${type} ${String(value)}`).toBe(`got ${described}`);
    expect(wellKnownValueProblem(type, { value }), `${type} {value: ${String(value)}}`).toBe(
      `"value" must be ${mustBe}, got ${described}`,
    );
  }
}

describe('parseTimestamp at the edges of each part', () => {
  it('says which part is wrong, in its own words', () => {
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toEqual({
      problem: 'year 0000 is before 0001, the first a Timestamp holds',
    });
    expect(parseTimestamp('2024-00-10T00:00:00Z')).toEqual({ problem: 'month 00 does not exist' });
    expect(parseTimestamp('2024-13-01T00:00:00Z')).toEqual({ problem: 'month 13 does not exist' });
    expect(parseTimestamp('2024-01-00T00:00:00Z')).toEqual({ problem: 'day 00 does not exist in 2024-01' });
    expect(parseTimestamp('2024-04-31T00:00:00Z')).toEqual({ problem: 'day 31 does not exist in 2024-04' });
    expect(parseTimestamp('2024-01-32T00:00:00Z')).toEqual({ problem: 'day 32 does not exist in 2024-01' });
    expect(parseTimestamp('2024-01-01T24:00:00Z')).toEqual({
      problem: '24:00:00 is not a time of day (a Timestamp has no leap seconds)',
    });
    expect(parseTimestamp('2024-01-01T00:60:00Z')).toEqual({
      problem: '00:60:00 is not a time of day (a Timestamp has no leap seconds)',
    });
    expect(parseTimestamp('2024-01-01T00:00:60Z')).toEqual({
      problem: '00:00:60 is not a time of day (a Timestamp has no leap seconds)',
    });
    expect(parseTimestamp('2024-01-01T00:00:00+24:00')).toEqual({ problem: '+24:00 is not a UTC offset' });
    expect(parseTimestamp('2024-01-01T00:00:00-00:60')).toEqual({ problem: '-00:60 is not a UTC offset' });
    expect(parseTimestamp('0001-01-01T00:00:00+00:01')).toEqual({
      problem: 'in UTC it is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z, the range of a Timestamp',
    });
  });

  it('takes the last hour, minute and second of a day, and offsets up to ±23:59', () => {
    expect(parseTimestamp('1970-01-01T23:59:59Z')).toEqual({ seconds: 86_399, nanos: 0 });
    expect(parseTimestamp('1970-01-02T23:00:00+23:00')).toEqual({ seconds: 86_400, nanos: 0 });
    expect(parseTimestamp('1970-01-01T00:59:00+00:59')).toEqual({ seconds: 0, nanos: 0 });
    expect(parseTimestamp('1970-01-01T00:00:00-23:59')).toEqual({ seconds: 86_340, nanos: 0 });
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toEqual({ seconds: 1_709_164_800, nanos: 0 });
    expect(parseTimestamp('2024-12-31T00:00:00Z')).toEqual({ seconds: 1_735_603_200, nanos: 0 });
  });

  it('refuses a string that only begins like one', () => {
    for (const text of [
      '2024-01-01T00:00:00Zjunk',
      '2024-01-01T00:00:00+01:00:00',
      '2024-01-01T00:00:00Z\n',
      'x2024-01-01T00:00:00Z',
    ]) {
      expect(parseTimestamp(text), text).toEqual({
        problem:
          'it is not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss, optional fraction of up to 9 digits, then Z or ±hh:mm)',
      });
    }
  });
});

describe('parseDuration at its edges', () => {
  it('refuses a string that only begins or ends like one, with the forms it takes', () => {
    for (const text of ['1sx', '1.5ss', '1s ', 'x1s', '-1.5s!']) {
      expect(parseDuration(text), text).toEqual({
        problem: 'it is not a number of seconds followed by "s" (such as "1.5s" or "-0.25s")',
      });
    }
    expect(parseDuration('315576000001s')).toEqual({
      problem: 'it is beyond ±315576000000 seconds, the range of a Duration',
    });
  });

  it('pads the fraction to nanoseconds', () => {
    expect(parseDuration('2.000001s')).toEqual({ seconds: 2, nanos: 1000 });
    expect(parseDuration('-0.000000001s')).toEqual({ seconds: 0, nanos: -1 });
  });
});

describe('acceptedForms', () => {
  it('names the bare value of each wrapper, and the same without its parenthesis in the object', () => {
    expect(acceptedForms(DOUBLE)).toBe(
      'a number (a number or a string of one, "NaN", "Infinity" or "-Infinity"), or an object {"value": a number}',
    );
    expect(acceptedForms(FLOAT)).toBe(
      'a 32-bit float (a number or a string of one, "NaN", "Infinity" or "-Infinity"), or an object {"value": a 32-bit float}',
    );
    expect(acceptedForms(INT64)).toBe(
      'an integer (a number, or a string of digits), or an object {"value": an integer}',
    );
    expect(acceptedForms(UINT64)).toBe(
      'a non-negative integer (a number, or a string of digits), or an object {"value": a non-negative integer}',
    );
    expect(acceptedForms(INT32)).toBe(
      'a 32-bit integer (a number, or a string of one), or an object {"value": a 32-bit integer}',
    );
    expect(acceptedForms(UINT32)).toBe(
      'a 32-bit non-negative integer (a number, or a string of one), or an object {"value": a 32-bit non-negative integer}',
    );
    expect(acceptedForms(BOOL)).toBe('true or false, or an object {"value": true or false}');
    expect(acceptedForms(STRING)).toBe('a string, or an object {"value": a string}');
    expect(acceptedForms(BYTES)).toBe('a base64 string, or an object {"value": a base64 string}');
  });

  it('names the string form and the object of a Timestamp and a Duration', () => {
    expect(acceptedForms(T)).toBe(
      'an RFC 3339 string ("2024-01-01T00:00:00Z", "2024-01-01T12:00:00.5+02:00": fraction of up to 9 digits, years 0001 to 9999) or an object {"seconds": <integer>, "nanos": <integer>}',
    );
    expect(acceptedForms(D)).toBe(
      'a string of seconds ending in "s" ("1.5s", "-0.25s", within ±315576000000s) or an object {"seconds": <integer>, "nanos": <integer>}',
    );
  });
});

describe('the values of each wrapper', () => {
  it('DoubleValue and FloatValue: any number but NaN, a string of one, and "NaN", "Infinity", "-Infinity"', () => {
    for (const [type, mustBe] of [
      [DOUBLE, 'a number (a number or a string of one, "NaN", "Infinity" or "-Infinity")'],
      [FLOAT, 'a 32-bit float (a number or a string of one, "NaN", "Infinity" or "-Infinity")'],
    ] as const) {
      expectTaken(type, [
        0,
        1.5,
        -2,
        Number.POSITIVE_INFINITY,
        'NaN',
        'Infinity',
        '-Infinity',
        '1.5',
        '-2',
        '1e3',
      ]);
      expectRefused(
        type,
        [
          ['abc', 'string "abc"'],
          ['', 'string ""'],
          ['infinity', 'string "infinity"'],
          [' 1', 'string " 1"'],
          ['+1', 'string "+1"'],
          ['0x10', 'string "0x10"'],
          ['1.', 'string "1."'],
          [true, 'boolean true'],
          [Number.NaN, 'number NaN (proto3 JSON gives a NaN as the string "NaN")'],
        ],
        mustBe,
      );
    }
  });

  it('Int64Value: a safe integer, a string of digits with an optional minus, or a Long', () => {
    expectTaken(INT64, [0, -5, Number.MAX_SAFE_INTEGER, '-12', '0', '123456789012345678']);
    // a Long as the bare value would be read as the {value} object: in the object only
    expect(wellKnownValueProblem(INT64, { value: { low: 1, high: 0 } })).toBeUndefined();
    expectRefused(
      INT64,
      [
        [1.5, 'number 1.5'],
        [2 ** 53, 'number 9007199254740992'],
        ['12abc', 'string "12abc"'],
        ['abc12', 'string "abc12"'],
        ['1.5', 'string "1.5"'],
        ['', 'string ""'],
        ['+1', 'string "+1"'],
        [true, 'boolean true'],
      ],
      'an integer (a number, or a string of digits)',
    );
    for (const [long, described] of [
      [{ low: 1 }, '{"low":1}'],
      [{ high: 0 }, '{"high":0}'],
      [{ low: '1', high: 0 }, '{"low":"1","high":0}'],
      [{ low: 1, high: '0' }, '{"low":1,"high":"0"}'],
    ] as const) {
      expect(wellKnownValueProblem(INT64, { value: long })).toBe(
        `"value" must be an integer (a number, or a string of digits), got ${described}`,
      );
    }
  });

  it('takes only objects as Longs: a function with low and high is refused', () => {
    const fn = Object.assign(() => 0, { low: 1, high: 0 });
    expect(wellKnownValueProblem(INT64, fn)).toBe('got a function');
    expect(wellKnownValueProblem(UINT64, fn)).toBe('got a function');
    expect(wellKnownValueProblem(T, { seconds: fn })).toBe(
      '"seconds" must be an integer (a number, a string of digits or a Long), got a function, in {}',
    );
  });

  it('UInt64Value: a non-negative safe integer, a string of digits, or a Long', () => {
    expectTaken(UINT64, [0, 5, Number.MAX_SAFE_INTEGER, '0', '18446744073709551615']);
    expect(wellKnownValueProblem(UINT64, { value: { low: 0, high: 1, unsigned: true } })).toBeUndefined();
    expectRefused(
      UINT64,
      [
        [-1, 'number -1'],
        [1.5, 'number 1.5'],
        [2 ** 53, 'number 9007199254740992'],
        ['-1', 'string "-1"'],
        ['5x', 'string "5x"'],
        ['x5', 'string "x5"'],
        ['', 'string ""'],
        [true, 'boolean true'],
      ],
      'a non-negative integer (a number, or a string of digits)',
    );
  });

  it('Int32Value: an integer from -2^31 to 2^31 - 1', () => {
    expectTaken(INT32, [0, 5, -(2 ** 31), 2 ** 31 - 1]);
    expectRefused(
      INT32,
      [
        [-(2 ** 31) - 1, 'number -2147483649'],
        [2 ** 31, 'number 2147483648'],
        [1.5, 'number 1.5'],
        ['5x', 'string "5x"'],
        ['1.5', 'string "1.5"'],
        ['', 'string ""'],
        [true, 'boolean true'],
      ],
      'a 32-bit integer (a number, or a string of one)',
    );
  });

  it('UInt32Value: an integer from 0 to 2^32 - 1', () => {
    expectTaken(UINT32, [0, 1, 2 ** 32 - 1]);
    expectRefused(
      UINT32,
      [
        [-1, 'number -1'],
        [2 ** 32, 'number 4294967296'],
        [1.5, 'number 1.5'],
        ['5x', 'string "5x"'],
        ['', 'string ""'],
        [true, 'boolean true'],
      ],
      'a 32-bit non-negative integer (a number, or a string of one)',
    );
  });

  it('BoolValue, StringValue and BytesValue: a boolean, any string, standard or URL-safe base64 or bytes', () => {
    expectTaken(BOOL, [true, false]);
    expectRefused(BOOL, [[0, 'number 0']], 'true or false');
    expectTaken(STRING, ['', 'not base64!', 'a b']);
    expectRefused(
      STRING,
      [
        [5, 'number 5'],
        [new Uint8Array([1]), 'an instance of Uint8Array'],
      ],
      'a string',
    );
    expectTaken(BYTES, ['', 'AQID', 'AQ==', 'ab-_', '_w', '_w==', new Uint8Array([1, 2])]);
    expectRefused(
      BYTES,
      [
        [5, 'number 5'],
        [true, 'boolean true'],
        ['a b', 'string "a b"'],
        [
          'ab+_',
          'string "ab+_" (it mixes the standard base64 alphabet, with + and /, and the URL-safe one, with - and _)',
        ],
      ],
      'a base64 string',
    );
  });

  it('takes an unset value in the object, and refuses any other key', () => {
    expect(wellKnownValueProblem(INT32, { value: null })).toBeUndefined();
    expect(wellKnownValueProblem(INT32, { value: undefined })).toBeUndefined();
    expect(wellKnownValueProblem(STRING, { value: null })).toBeUndefined();
    expect(wellKnownValueProblem(INT64, { low: 1, high: 0 })).toBe(
      '"low" is not its one field, value (the serializer would drop it), in {"low":1,"high":0}',
    );
  });

  it('takes an object without a prototype as the {value} object, and leaves it as it is', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { value: 'x' });
    expect(wellKnownValueProblem(STRING, bare)).toBeUndefined();
    expect(wireValueOf(STRING, bare)).toBe(bare);
  });
});

describe('the {seconds, nanos} object of a Timestamp or Duration', () => {
  it('takes integer seconds in any form, unset fields, and nanos up to ±999999999', () => {
    for (const value of [
      { seconds: '17' },
      { seconds: '-17' },
      { seconds: undefined },
      { seconds: null },
      { nanos: undefined },
      { nanos: null },
      { nanos: 999_999_999 },
      { nanos: -999_999_999 },
      { seconds: { low: 5, high: 0 }, nanos: 0 },
    ]) {
      expect(wellKnownValueProblem(D, value), JSON.stringify(value)).toBeUndefined();
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { seconds: 1 });
    expect(wellKnownValueProblem(T, bare)).toBeUndefined();
  });

  it('refuses other seconds and nanos, in exact words', () => {
    const seconds = '"seconds" must be an integer (a number, a string of digits or a Long), got';
    expect(wellKnownValueProblem(T, { seconds: true })).toBe(`${seconds} boolean true, in {"seconds":true}`);
    expect(wellKnownValueProblem(T, { seconds: 'x5' })).toBe(`${seconds} string "x5", in {"seconds":"x5"}`);
    expect(wellKnownValueProblem(T, { seconds: '5x' })).toBe(`${seconds} string "5x", in {"seconds":"5x"}`);
    expect(wellKnownValueProblem(T, { seconds: { low: 1 } })).toBe(
      `${seconds} {"low":1}, in {"seconds":{"low":1}}`,
    );
    const nanos = '"nanos" must be an integer between -999999999 and 999999999, got';
    expect(wellKnownValueProblem(D, { nanos: 1.5 })).toBe(`${nanos} number 1.5, in {"nanos":1.5}`);
    expect(wellKnownValueProblem(D, { nanos: '5' })).toBe(`${nanos} string "5", in {"nanos":"5"}`);
    expect(wellKnownValueProblem(D, { nanos: 1_000_000_000 })).toBe(
      `${nanos} number 1000000000, in {"nanos":1000000000}`,
    );
    expect(wellKnownValueProblem(D, { nanos: -1_000_000_000 })).toBe(
      `${nanos} number -1000000000, in {"nanos":-1000000000}`,
    );
  });
});

describe('describing a refused value', () => {
  it('names the class of an instance, or says it has none', () => {
    class Stamp {
      seconds = 1;
    }
    expect(wellKnownValueProblem(T, new Stamp())).toBe('got an instance of Stamp');
    expect(wellKnownValueProblem(STRING, new Stamp())).toBe('got an instance of Stamp');
    const orphan: unknown = Object.create(Object.create(null) as object);
    expect(wellKnownValueProblem(T, orphan)).toBe('got an instance of a class');
    expect(wellKnownValueProblem(STRING, { value: new Map() })).toBe(
      '"value" must be a string, got an instance of Map',
    );
  });

  it('names a function, and gives the Date hint for a Timestamp only', () => {
    expect(wellKnownValueProblem(STRING, () => 'x')).toBe('got a function');
    expect(wellKnownValueProblem(D, () => '1s')).toBe('got a function');
    expect(wellKnownValueProblem(D, new Date(0))).toBe('got a Date');
    expect(wellKnownValueProblem(T, new Date(0))).toBe(
      'got a Date (the serializer would send a Date as 1970-01-01T00:00:00Z: give date.toISOString())',
    );
    expect(wellKnownValueProblem(STRING, new Date(0))).toBe('got a Date');
  });
});

describe('an unset value', () => {
  it('is no problem, and is passed on as it is', () => {
    for (const type of [T, D, STRING, INT64, BYTES] as const) {
      expect(wellKnownValueProblem(type, undefined)).toBeUndefined();
      expect(wellKnownValueProblem(type, null)).toBeUndefined();
      expect(wireValueOf(type, undefined)).toBeUndefined();
      expect(wireValueOf(type, null)).toBeNull();
    }
  });
});

describe('wireValueOf at its edges', () => {
  it('wraps any bare value of a wrapper, even one the check refuses', () => {
    expect(wireValueOf(INT32, 5)).toEqual({ value: 5 });
    expect(wireValueOf(BOOL, false)).toEqual({ value: false });
    const bytes = new Uint8Array([1]);
    expect(wireValueOf(BYTES, bytes)).toEqual({ value: bytes });
    expect(wireValueOf(STRING, ['x'])).toEqual({ value: ['x'] });
  });

  it('parses only strings: a value that reads as one when made a string is left as it is', () => {
    const array = ['1s'];
    expect(wireValueOf(D, array)).toBe(array);
    const stamp = ['1970-01-01T00:00:00Z'];
    expect(wireValueOf(T, stamp)).toBe(stamp);
    const text = { toString: () => '2s' };
    expect(wireValueOf(D, text)).toBe(text);
    expect(wireValueOf(D, 5)).toBe(5);
  });

  it('gives seconds and nanos of a parsed string, and the string itself when it does not parse', () => {
    expect(wireValueOf(D, '-1.5s')).toEqual({ seconds: -1, nanos: -500_000_000 });
    expect(wireValueOf(T, '1970-01-01T01:00:00+01:00')).toEqual({ seconds: 0, nanos: 0 });
    expect(wireValueOf(D, '1sx')).toBe('1sx');
    expect(wireValueOf(T, '2024-01-01T00:00:00+24:00')).toBe('2024-01-01T00:00:00+24:00');
  });
});

describe('64-bit integers beyond their range', () => {
  const INT64_MUST = 'an integer (a number, or a string of digits)';
  const UINT64_MUST = 'a non-negative integer (a number, or a string of digits)';

  it('takes an Int64Value and a UInt64Value at the ends of their ranges', () => {
    expectTaken(INT64, ['9223372036854775807', '-9223372036854775808']);
    expectTaken(UINT64, ['18446744073709551615', '0']);
  });

  it('refuses a string beyond them rather than sending it wrapped around', () => {
    const int64 = ' (outside -9223372036854775808..9223372036854775807, the range of an int64)';
    expectRefused(
      INT64,
      [
        ['9223372036854775808', `string "9223372036854775808"${int64}`],
        ['-9223372036854775809', `string "-9223372036854775809"${int64}`],
        ['99999999999999999999', `string "99999999999999999999"${int64}`],
      ],
      INT64_MUST,
    );
    expectRefused(
      UINT64,
      [
        [
          '18446744073709551616',
          'string "18446744073709551616" (outside 0..18446744073709551615, the range of a uint64)',
        ],
      ],
      UINT64_MUST,
    );
  });

  it('refuses the seconds of a Timestamp or Duration beyond its range, naming it', () => {
    expect(wellKnownValueProblem(T, { seconds: '99999999999999999999' })).toBe(
      '"seconds" must be between -62135596800 and 253402300799 (0001-01-01T00:00:00Z..9999-12-31T23:59:59Z, the range of a Timestamp), got string "99999999999999999999", in {"seconds":"99999999999999999999"}',
    );
    expect(wellKnownValueProblem(D, { seconds: '99999999999999999999' })).toBe(
      '"seconds" must be between -315576000000 and 315576000000 (±10000 years, the range of a Duration), got string "99999999999999999999", in {"seconds":"99999999999999999999"}',
    );
    expect(wellKnownValueProblem(T, { seconds: -62_135_596_801 })).toMatch(/^"seconds" must be between/);
    expect(wellKnownValueProblem(T, { seconds: 253_402_300_800 })).toMatch(/^"seconds" must be between/);
    expect(wellKnownValueProblem(D, { seconds: '-315576000001' })).toMatch(/^"seconds" must be between/);
    // a Long of 2^32 seconds is in range; one of -1 (all bits set, signed) too; unsigned, it is 2^64 - 1
    expect(wellKnownValueProblem(D, { seconds: { low: 0, high: 1 } })).toBeUndefined();
    expect(wellKnownValueProblem(D, { seconds: { low: -1, high: -1 } })).toBeUndefined();
    expect(wellKnownValueProblem(D, { seconds: { low: -1, high: -1, unsigned: true } })).toMatch(
      /^"seconds" must be between .* got \{"low":-1,"high":-1,"unsigned":true\}/,
    );
  });

  it('takes the seconds at the ends of each range', () => {
    for (const [type, seconds] of [
      [T, '-62135596800'],
      [T, 253_402_300_799],
      [D, '-315576000000'],
      [D, 315_576_000_000],
    ] as const) {
      expect(wellKnownValueProblem(type, { seconds }), `${type} ${seconds}`).toBeUndefined();
    }
  });
});

describe('base64 that encodes no whole number of bytes', () => {
  it('refuses a length one more than a multiple of 4, which the serializer cannot decode', () => {
    expectRefused(
      BYTES,
      [
        ['A', 'string "A" (1 base64 digits, one more than a multiple of 4, encode no whole number of bytes)'],
        [
          'AQIDB',
          'string "AQIDB" (5 base64 digits, one more than a multiple of 4, encode no whole number of bytes)',
        ],
        [
          'A==',
          'string "A==" (1 base64 digits, one more than a multiple of 4, encode no whole number of bytes)',
        ],
        ['AQID=', 'string "AQID=" (padded with "=" to a length that is not a multiple of 4)'],
        ['AQ=', 'string "AQ=" (padded with "=" to a length that is not a multiple of 4)'],
      ],
      'a base64 string',
    );
  });

  it('takes base64 with or without its padding', () => {
    expectTaken(BYTES, ['AQ', 'AQI', 'AQ==', 'AQI=', 'AQIDBA']);
  });
});

describe('numbers in strings, as proto3 JSON gives them', () => {
  it('takes an Int32Value and a UInt32Value as a string of one, in range', () => {
    expectTaken(INT32, ['5', '-5', '-2147483648', '2147483647', '1e2', '0']);
    expectTaken(UINT32, ['7', '4294967295', '0']);
  });

  it('refuses such a string beyond the range, naming it', () => {
    expectRefused(
      INT32,
      [
        ['2147483648', 'string "2147483648" (outside -2147483648..2147483647, the range of an int32)'],
        ['-2147483649', 'string "-2147483649" (outside -2147483648..2147483647, the range of an int32)'],
      ],
      'a 32-bit integer (a number, or a string of one)',
    );
    expectRefused(
      UINT32,
      [
        ['-1', 'string "-1" (outside 0..4294967295, the range of a uint32)'],
        ['4294967296', 'string "4294967296" (outside 0..4294967295, the range of a uint32)'],
      ],
      'a 32-bit non-negative integer (a number, or a string of one)',
    );
  });

  it('sends the number such a string holds, bare or in the object', () => {
    expect(wireValueOf(INT32, '5')).toEqual({ value: 5 });
    expect(wireValueOf(INT32, '-0')).toEqual({ value: 0 });
    expect(Object.is((wireValueOf(INT32, '-0') as { value: number }).value, 0)).toBe(true);
    expect(wireValueOf(UINT32, { value: '7' })).toEqual({ value: 7 });
    expect(wireValueOf(DOUBLE, '1.5')).toEqual({ value: 1.5 });
    expect(wireValueOf(FLOAT, { value: '-2.5' })).toEqual({ value: -2.5 });
    expect(wireValueOf(DOUBLE, 'NaN')).toEqual({ value: Number.NaN });
    expect(wireValueOf(DOUBLE, { value: 'Infinity' })).toEqual({ value: Number.POSITIVE_INFINITY });
    expect(wireValueOf(FLOAT, '-Infinity')).toEqual({ value: Number.NEGATIVE_INFINITY });
    // 64-bit integers stay strings (a number would lose digits); other strings are left to the check
    expect(wireValueOf(INT64, '123456789012345678')).toEqual({ value: '123456789012345678' });
    expect(wireValueOf(INT32, '5x')).toEqual({ value: '5x' });
    const object = { value: 5 };
    expect(wireValueOf(INT32, object)).toBe(object);
  });
});

describe('values beyond a float, and nanos of the wrong sign', () => {
  it('refuses a FloatValue beyond ±3.4028234663852886e+38, which would be sent as Infinity', () => {
    const beyond =
      ' (beyond ±3.4028234663852886e+38, the range of a 32-bit float: it would be sent as Infinity)';
    expectRefused(
      FLOAT,
      [
        [1e39, `number 1e+39${beyond}`],
        [-1e39, `number -1e+39${beyond}`],
        ['1e39', `string "1e39"${beyond}`],
      ],
      'a 32-bit float (a number or a string of one, "NaN", "Infinity" or "-Infinity")',
    );
    expectTaken(FLOAT, [3.4028234663852886e38, '3.4028235e38', -3.4028234663852886e38, 'Infinity']);
    expectTaken(DOUBLE, [1e39, '1e39']);
  });

  it('refuses negative nanos in a Timestamp', () => {
    expect(wellKnownValueProblem(T, { nanos: -5 })).toBe(
      '"nanos" must be an integer between 0 and 999999999, got number -5, in {"nanos":-5}',
    );
    expect(wellKnownValueProblem(T, { seconds: -1, nanos: -1 })).toMatch(
      /^"nanos" must be an integer between 0/,
    );
    expect(wellKnownValueProblem(T, { seconds: -1, nanos: 999_999_999 })).toBeUndefined();
  });

  it('refuses a Duration whose seconds and nanos differ in sign', () => {
    expect(wellKnownValueProblem(D, { seconds: 1, nanos: -5 })).toBe(
      '"seconds" and "nanos" of a Duration must have the same sign, got 1 and -5, in {"seconds":1,"nanos":-5}',
    );
    expect(wellKnownValueProblem(D, { seconds: '-1', nanos: 5 })).toBe(
      '"seconds" and "nanos" of a Duration must have the same sign, got -1 and 5, in {"seconds":"-1","nanos":5}',
    );
    for (const value of [
      { seconds: 1, nanos: 5 },
      { seconds: -1, nanos: -5 },
      { seconds: 0, nanos: -5 },
      { seconds: 0, nanos: 5 },
      { seconds: -1, nanos: 0 },
    ]) {
      expect(wellKnownValueProblem(D, value), JSON.stringify(value)).toBeUndefined();
    }
  });

  it('names a NaN and an Infinity rather than writing them as JSON null', () => {
    expect(wellKnownValueProblem(DOUBLE, Number.NaN)).toBe(
      'got number NaN (proto3 JSON gives a NaN as the string "NaN")',
    );
    expect(wellKnownValueProblem(INT32, Number.POSITIVE_INFINITY)).toBe('got number Infinity');
    expect(wellKnownValueProblem(D, { nanos: Number.NaN })).toBe(
      '"nanos" must be an integer between -999999999 and 999999999, got number NaN, in {"nanos":null}',
    );
  });
});
