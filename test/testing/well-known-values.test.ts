import { describe, expect, it } from 'vitest';
import { withWellKnownValues } from '../../src/testing/response-conversion.js';
import type { MessageFields } from '../../src/testing/response-fields.js';
import {
  parseDuration,
  parseTimestamp,
  wellKnownValueProblem,
  wireValueOf,
} from '../../src/testing/well-known-values.js';
import { responseFieldsFrom, responseProblems } from '../helpers/response-fields.js';

const PROTO = 'test/testing/fixtures/schedule.proto';
const METHOD = '/fixture.schedule.v1.ScheduleService/GetSchedule';

function fieldsOf(options: { keepCase?: boolean; noFiles?: boolean } = {}): MessageFields {
  return responseFieldsFrom(PROTO, 'fixture.schedule.v1.ScheduleService', 'GetSchedule', options);
}

function problemsOf(response: Record<string, unknown>, fields = fieldsOf()): string[] {
  return responseProblems(response, fields, METHOD);
}

describe('parseTimestamp', () => {
  it('parses RFC 3339 with Z or an offset and up to 9 fractional digits', () => {
    expect(parseTimestamp('2024-01-01T00:00:00Z')).toEqual({ seconds: 1_704_067_200, nanos: 0 });
    expect(parseTimestamp('1970-01-01T00:00:00.5z')).toEqual({ seconds: 0, nanos: 500_000_000 });
    expect(parseTimestamp('1970-01-01T02:00:01.123456789+02:00')).toEqual({ seconds: 1, nanos: 123_456_789 });
    expect(parseTimestamp('1969-12-31T23:00:00-01:30')).toEqual({ seconds: 1800, nanos: 0 });
    expect(parseTimestamp('1969-12-31T23:59:59.000000001Z')).toEqual({ seconds: -1, nanos: 1 });
    expect(parseTimestamp('2024-02-29T12:00:00Z')).toMatchObject({ seconds: 1_709_208_000 });
  });

  it('takes the whole range 0001-01-01 to 9999-12-31 and nothing outside it', () => {
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toEqual({ seconds: -62_135_596_800, nanos: 0 });
    expect(parseTimestamp('0099-06-01T00:00:00Z')).toMatchObject({ seconds: -59_029_948_800 });
    expect(parseTimestamp('9999-12-31T23:59:59.999999999Z')).toEqual({
      seconds: 253_402_300_799,
      nanos: 999_999_999,
    });
    expect(parseTimestamp('0001-01-01T00:00:00+00:01')).toMatchObject({
      problem: expect.stringMatching(/range/),
    });
    expect(parseTimestamp('9999-12-31T23:59:59-00:01')).toMatchObject({
      problem: expect.stringMatching(/range/),
    });
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toMatchObject({ problem: expect.stringMatching(/0001/) });
  });

  it('names what is wrong with a string that is not one', () => {
    expect(parseTimestamp('2023-02-29T00:00:00Z')).toEqual({ problem: 'day 29 does not exist in 2023-02' });
    expect(parseTimestamp('2024-13-01T00:00:00Z')).toEqual({ problem: 'month 13 does not exist' });
    expect(parseTimestamp('2024-01-01T24:00:00Z')).toMatchObject({
      problem: expect.stringMatching(/time of day/),
    });
    expect(parseTimestamp('2024-01-01T23:59:60Z')).toMatchObject({ problem: expect.stringMatching(/leap/) });
    expect(parseTimestamp('2024-01-01T00:00:00+24:00')).toMatchObject({
      problem: expect.stringMatching(/UTC offset/),
    });
    for (const text of [
      '2024-01-01',
      '2024-01-01T00:00:00',
      '2024-01-01 00:00:00Z',
      '2024-01-01T00:00:00.1234567890Z',
      '2024-01-01T00:00:00.Z',
      ' 2024-01-01T00:00:00Z',
      '1704067200',
    ]) {
      expect(parseTimestamp(text)).toMatchObject({ problem: expect.stringMatching(/RFC 3339/) });
    }
  });
});

describe('parseDuration', () => {
  it('parses seconds with up to 9 fractional digits, the sign on both fields', () => {
    expect(parseDuration('1.5s')).toEqual({ seconds: 1, nanos: 500_000_000 });
    expect(parseDuration('0s')).toEqual({ seconds: 0, nanos: 0 });
    expect(parseDuration('-0.25s')).toEqual({ seconds: 0, nanos: -250_000_000 });
    expect(parseDuration('-3.000000001s')).toEqual({ seconds: -3, nanos: -1 });
    expect(parseDuration('315576000000s')).toEqual({ seconds: 315_576_000_000, nanos: 0 });
    expect(parseDuration('-315576000000.999999999s')).toEqual({
      seconds: -315_576_000_000,
      nanos: -999_999_999,
    });
    expect(parseDuration('-0s')).toEqual({ seconds: 0, nanos: 0 });
  });

  it('refuses other strings and the out of range', () => {
    expect(parseDuration('315576000001s')).toMatchObject({
      problem: expect.stringMatching(/range of a Duration/),
    });
    for (const text of ['1.5', '1.5 s', '1m', 'PT1S', '+1s', '1.0000000001s', '.5s', '1e3s', '']) {
      expect(parseDuration(text)).toMatchObject({ problem: expect.stringMatching(/"s"/) });
    }
  });
});

describe('wellKnownValueProblem and wireValueOf', () => {
  const T = 'google.protobuf.Timestamp';
  const D = 'google.protobuf.Duration';

  it('takes the string forms, the {seconds, nanos} object and null', () => {
    for (const value of [
      '2024-01-01T00:00:00Z',
      { seconds: 1, nanos: 2 },
      { seconds: '-17' },
      { nanos: 5 },
      {},
      { seconds: { low: 1, high: 0, unsigned: false } },
      null,
    ]) {
      expect(wellKnownValueProblem(T, value)).toBeUndefined();
    }
    expect(wellKnownValueProblem(D, '-1.5s')).toBeUndefined();
  });

  it('refuses other values, saying what the serializer would make of them', () => {
    expect(wellKnownValueProblem(T, '2024-01-01')).toMatch(/^"2024-01-01": it is not an RFC 3339 date-time/);
    expect(wellKnownValueProblem(D, 1.5)).toBe('got number 1.5');
    expect(wellKnownValueProblem(T, new Date(0))).toMatch(/^got a Date \(.*give date\.toISOString\(\)\)$/);
    expect(wellKnownValueProblem(T, { seconds: 1, nano: 5 })).toMatch(
      /^"nano" is not one of its fields, seconds and nanos \(the serializer would drop it\), in \{"seconds":1,"nano":5\}$/,
    );
    expect(wellKnownValueProblem(T, { seconds: 1.5 })).toMatch(/^"seconds" must be an integer/);
    expect(wellKnownValueProblem(D, { seconds: '1.5s' })).toMatch(/^"seconds" must be an integer/);
    expect(wellKnownValueProblem(D, { nanos: 1e9 })).toMatch(/^"nanos" must be an integer between/);
    expect(wellKnownValueProblem(T, [1])).toBe('got an array');
  });

  it("takes a wrapper's bare value or its {value} object, of the wrapped type", () => {
    const S = 'google.protobuf.StringValue';
    const I = 'google.protobuf.Int64Value';
    for (const [type, value] of [
      [S, 'text'],
      [S, { value: 'text' }],
      [S, {}],
      [I, 5],
      [I, '-9007199254740993'],
      [I, { value: '12' }],
      ['google.protobuf.BoolValue', false],
      ['google.protobuf.BytesValue', 'AQID'],
      ['google.protobuf.BytesValue', Buffer.from([1])],
      ['google.protobuf.DoubleValue', 'NaN'],
      ['google.protobuf.UInt32Value', 4_294_967_295],
    ] as const) {
      expect(wellKnownValueProblem(type, value), `${type} ${JSON.stringify(value)}`).toBeUndefined();
    }
    expect(wellKnownValueProblem(S, 5)).toBe('got number 5');
    expect(wellKnownValueProblem(S, { valu: 'x' })).toMatch(/^"valu" is not its one field, value/);
    expect(wellKnownValueProblem(I, { value: 1.5 })).toMatch(/^"value" must be an integer/);
    expect(wellKnownValueProblem('google.protobuf.BoolValue', 'yes')).toBe('got string "yes"');
    expect(wellKnownValueProblem('google.protobuf.Int32Value', 2 ** 31)).toBe(`got number ${2 ** 31}`);
    expect(wireValueOf(S, 'text')).toEqual({ value: 'text' });
    expect(wireValueOf(I, 0)).toEqual({ value: 0 });
    const object = { value: 'x' };
    expect(wireValueOf(S, object)).toBe(object);
    expect(wireValueOf(S, null)).toBeNull();
  });

  it('turns a string form into its object and leaves anything else as it is', () => {
    expect(wireValueOf(T, '2024-01-01T00:00:00.25Z')).toEqual({ seconds: 1_704_067_200, nanos: 250_000_000 });
    expect(wireValueOf(D, '2s')).toEqual({ seconds: 2, nanos: 0 });
    const object = { seconds: 3 };
    expect(wireValueOf(T, object)).toBe(object);
    expect(wireValueOf(T, 'not a time')).toBe('not a time');
  });
});

describe('a scripted response with Timestamps and Durations', () => {
  const good = {
    created: '2024-01-01T00:00:00Z',
    timeout: { seconds: 5 },
    holidays: ['2024-12-25T00:00:00Z', { seconds: 0 }],
    firstSlot: { startsAt: '2024-01-02T09:00:00+01:00', length: '3600s' },
    slots: [{ length: '0.5s' }],
    deadlines: { a: '2024-01-03T00:00:00Z', b: null },
    slotsByRoom: { r1: { startsAt: '2024-01-04T00:00:00Z' } },
    note: 'n',
    counts: [1, { value: '2' }],
  };

  it('passes the check in either form, anywhere in the message', () => {
    expect(problemsOf(good)).toEqual([]);
  });

  it('refuses another value at its path, naming the type and the forms it takes', () => {
    expect(problemsOf({ created: '2024-01-01' })).toEqual([
      `response.created: Schedule.created is a google.protobuf.Timestamp (in the response of ${METHOD}): "2024-01-01": it is not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss, optional fraction of up to 9 digits, then Z or ±hh:mm); give an RFC 3339 string ("2024-01-01T00:00:00Z", "2024-01-01T12:00:00.5+02:00": fraction of up to 9 digits, years 0001 to 9999) or an object {"seconds": <integer>, "nanos": <integer>}`,
    ]);
    expect(
      problemsOf({
        timeout: 30,
        holidays: ['2024-12-25T00:00:00Z', 'Christmas'],
        firstSlot: { length: '1h' },
        slots: [{}, { startsAt: { sec: 1 } }],
        deadlines: { a: 'soon' },
        slotsByRoom: { r1: { length: 5, bogus: 1 } },
        note: 7,
      }),
    ).toEqual([
      expect.stringMatching(
        /^response\.timeout: Schedule\.timeout is a google\.protobuf\.Duration .*: got number 30; give a string of seconds ending in "s"/,
      ),
      expect.stringMatching(
        /^response\.holidays\[1\]: Schedule\.holidays is a google\.protobuf\.Timestamp .*"Christmas": it is not/,
      ),
      expect.stringMatching(
        /^response\.firstSlot\.length: Slot\.length is a google\.protobuf\.Duration .*"1h"/,
      ),
      expect.stringMatching(
        /^response\.slots\[1\]\.startsAt: Slot\.startsAt .*"sec" is not one of its fields/,
      ),
      expect.stringMatching(
        /^response\.deadlines\.a: Schedule\.deadlines is a google\.protobuf\.Timestamp .*"soon"/,
      ),
      expect.stringMatching(/^response\.slotsByRoom\.r1\.length: Slot\.length .*got number 5/),
      expect.stringMatching(/^response\.slotsByRoom\.r1\.bogus: "bogus" is not a field of Slot/),
      `response.note: Schedule.note is a google.protobuf.StringValue (in the response of ${METHOD}): got number 7; give a string, or an object {"value": a string}`,
    ]);
  });

  it('knows the types by name without the file descriptors, and with the proto names', () => {
    expect(problemsOf({ created: 'x', first_slot: { length: 'y' } }, fieldsOf({ keepCase: true }))).toEqual([
      expect.stringMatching(/^response\.created: .*Timestamp/),
      expect.stringMatching(/^response\.first_slot\.length: .*Duration/),
    ]);
    // without them, only the types nested in the response message are found (Slot is not)
    expect(problemsOf({ created: 'x', deadlines: { a: 'z' } }, fieldsOf({ noFiles: true }))).toEqual([
      expect.stringMatching(/^response\.created: .*Timestamp/),
      expect.stringMatching(/^response\.deadlines\.a: .*Timestamp/),
    ]);
  });

  it('is converted to the objects the serializer takes, leaving the script as it was', () => {
    const before = JSON.stringify(good);
    expect(withWellKnownValues(good, fieldsOf())).toEqual({
      created: { seconds: 1_704_067_200, nanos: 0 },
      timeout: { seconds: 5 },
      holidays: [{ seconds: 1_735_084_800, nanos: 0 }, { seconds: 0 }],
      firstSlot: { startsAt: { seconds: 1_704_182_400, nanos: 0 }, length: { seconds: 3600, nanos: 0 } },
      slots: [{ length: { seconds: 0, nanos: 500_000_000 } }],
      deadlines: { a: { seconds: 1_704_240_000, nanos: 0 }, b: null },
      slotsByRoom: { r1: { startsAt: { seconds: 1_704_326_400, nanos: 0 } } },
      note: { value: 'n' },
      counts: [{ value: 1 }, { value: '2' }],
    });
    expect(JSON.stringify(good)).toBe(before);
    const plain = { scheduleId: 's', slots: [{ length: { seconds: 1 } }] };
    expect(withWellKnownValues(plain, fieldsOf())).toBe(plain);
  });
});

describe('wellKnownValueProblem on values JSON cannot write, and base64 protobufjs cannot read', () => {
  it('names a bigint, a symbol or a function instead of throwing', () => {
    expect(wellKnownValueProblem('google.protobuf.Int64Value', 5n)).toContain('the bigint 5n');
    expect(wellKnownValueProblem('google.protobuf.Timestamp', { seconds: 5n })).toContain(
      'an object JSON cannot write',
    );
    expect(wellKnownValueProblem('google.protobuf.StringValue', Symbol('s'))).toContain('a symbol');
  });

  it('takes URL-safe base64 for a BytesValue, as proto3 JSON does, and sends it in the alphabet protobufjs reads', () => {
    expect(wellKnownValueProblem('google.protobuf.BytesValue', 'ab+/')).toBeUndefined();
    expect(wellKnownValueProblem('google.protobuf.BytesValue', 'ab-_')).toBeUndefined();
    expect(wireValueOf('google.protobuf.BytesValue', 'ab-_')).toEqual({ value: 'ab+/' });
    expect(wellKnownValueProblem('google.protobuf.BytesValue', 'a+b_')).toBeDefined();
  });
});
