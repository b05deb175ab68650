/**
 * The values a scripted response may give a field of a well-known type whose proto3 JSON form is not its fields:
 * - `google.protobuf.Timestamp` and `Duration`: the proto3 JSON string (`"2024-01-01T00:00:00Z"`, `"1.5s"`), which
 *   the flaky server turns into the `{seconds, nanos}` object protobufjs serializes, or that object itself;
 * - the wrappers (`google.protobuf.StringValue`, `Int64Value`, ...): the bare value (`"text"`, `5`), which becomes
 *   `{value}`, or that object itself.
 * protobufjs takes only the object: a string fails every attempt with `object expected`, and an object without
 * those fields (a `Date`, `{"valu": 1}`) is sent as the zero value. Pure: parsing, checking and converting one
 * value. (Struct, Value, ListValue, FieldMask and Any are not here: see docs/testing.md.)
 */

/** The wrapper types, by full name (no leading dot), with the JavaScript values their `value` takes. */
const WRAPPERS = {
  'google.protobuf.DoubleValue': 'number',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'boolean',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
} as const;

type WrapperType = keyof typeof WRAPPERS;

/** The well-known types whose proto3 JSON form a scripted response may use, by full name (no leading dot). */
export type WellKnownType = 'google.protobuf.Timestamp' | 'google.protobuf.Duration' | WrapperType;

function isWrapper(type: string): type is WrapperType {
  return Object.hasOwn(WRAPPERS, type);
}

/** A Timestamp's or Duration's fields, as protobufjs takes them. */
export interface SecondsAndNanos {
  readonly seconds: number;
  readonly nanos: number;
}

/** Why a value is not of the type, in a few words (`month 13 does not exist`). */
export interface ValueProblem {
  readonly problem: string;
}

/** The well-known type a message type's full name (`.google.protobuf.Timestamp` or without the dot) names. */
export function wellKnownTypeOf(fullName: string): WellKnownType | undefined {
  const name = fullName.replace(/^\./, '');
  return name === 'google.protobuf.Timestamp' || name === 'google.protobuf.Duration' || isWrapper(name)
    ? name
    : undefined;
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range of a Timestamp, in seconds from the epoch. */
const MIN_TIMESTAMP_SECONDS = -62_135_596_800;
const MAX_TIMESTAMP_SECONDS = 253_402_300_799;
/** ±10,000 years, the range of a Duration. */
const MAX_DURATION_SECONDS = 315_576_000_000;

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

/** `"5"` → 500,000,000: a fraction of a second, up to 9 digits, in nanoseconds. */
function nanosOf(fraction: string | undefined): number {
  return fraction === undefined ? 0 : Number(fraction.padEnd(9, '0'));
}

/** An RFC 3339 timestamp (`Z` or an offset, up to 9 fractional digits, years 0001 to 9999) as seconds and nanos. */
export function parseTimestamp(text: string): SecondsAndNanos | ValueProblem {
  const m = RFC3339.exec(text);
  if (m === null) {
    return {
      problem:
        'it is not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss, optional fraction of up to 9 digits, then Z or ±hh:mm)',
    };
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1) {
    return { problem: 'year 0000 is before 0001, the first a Timestamp holds' };
  }
  if (month < 1 || month > 12) {
    return { problem: `month ${m[2]} does not exist` };
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (day < 1 || date.getUTCMonth() !== month - 1) {
    return { problem: `day ${m[3]} does not exist in ${m[1]}-${m[2]}` };
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return { problem: `${m[4]}:${m[5]}:${m[6]} is not a time of day (a Timestamp has no leap seconds)` };
  }
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (offsetHours > 23 || offsetMinutes > 59) {
    return { problem: `${m[9]}${m[10]}:${m[11]} is not a UTC offset` };
  }
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  const seconds = date.getTime() / 1000 + hour * 3600 + minute * 60 + second - offset;
  if (seconds < MIN_TIMESTAMP_SECONDS || seconds > MAX_TIMESTAMP_SECONDS) {
    return {
      problem: 'in UTC it is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z, the range of a Timestamp',
    };
  }
  return { seconds, nanos: nanosOf(m[7]) };
}

/** A proto3 JSON duration (`"1.5s"`, `"-0.25s"`, up to 9 fractional digits, within ±315,576,000,000 s). */
export function parseDuration(text: string): SecondsAndNanos | ValueProblem {
  const m = DURATION.exec(text);
  if (m === null) {
    return { problem: 'it is not a number of seconds followed by "s" (such as "1.5s" or "-0.25s")' };
  }
  const whole = Number(m[2]);
  if (whole > MAX_DURATION_SECONDS) {
    return { problem: `it is beyond ±${MAX_DURATION_SECONDS} seconds, the range of a Duration` };
  }
  const sign = m[1] === '-' ? -1 : 1;
  // seconds and nanos share the sign; `0 * -1` would be -0
  return { seconds: whole === 0 ? 0 : sign * whole, nanos: nanosOf(m[3]) === 0 ? 0 : sign * nanosOf(m[3]) };
}

const TIME_EXAMPLES = {
  'google.protobuf.Timestamp':
    'an RFC 3339 string ("2024-01-01T00:00:00Z", "2024-01-01T12:00:00.5+02:00": fraction of up to 9 digits, years 0001 to 9999)',
  'google.protobuf.Duration': 'a string of seconds ending in "s" ("1.5s", "-0.25s", within ±315576000000s)',
} as const;

type WrappedKind = (typeof WRAPPERS)[WrapperType];

const WRAPPED_VALUES: Readonly<Record<WrappedKind, string>> = {
  number: 'a number (a number or a string of one, "NaN", "Infinity" or "-Infinity")',
  float: 'a 32-bit float (a number or a string of one, "NaN", "Infinity" or "-Infinity")',
  int64: 'an integer (a number, or a string of digits)',
  uint64: 'a non-negative integer (a number, or a string of digits)',
  int32: 'a 32-bit integer (a number, or a string of one)',
  uint32: 'a 32-bit non-negative integer (a number, or a string of one)',
  boolean: 'true or false',
  string: 'a string',
  bytes: 'a base64 string',
};

/** The forms a value of `type` may take, for an error message. */
export function acceptedForms(type: WellKnownType): string {
  if (isWrapper(type)) {
    const value = WRAPPED_VALUES[WRAPPERS[type]];
    return `${value}, or an object {"value": ${value.replace(/ \(.*\)$/, '')}}`;
  }
  return `${TIME_EXAMPLES[type]} or an object {"seconds": <integer>, "nanos": <integer>}`;
}

/** The ranges of the 64-bit integers, as proto3 JSON gives them in strings of digits. */
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const INT32_RANGE = '-2147483648..2147483647';
const UINT32_RANGE = '0..4294967295';
/** A JSON number, as proto3 JSON takes one in a string for a float, double, int32 or uint32 (no `+`, no spaces). */
const JSON_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);
/** The largest finite float32. */
const FLOAT_MAX = 3.4028234663852886e38;

/**
 * Why `value` is not what a wrapper of `kind` holds: undefined when it is; `''` when it is not of the kind at all;
 * otherwise a note on what is wrong with it (`beyond ...`), for the message to give after the value.
 */
function wrappedValueNote(kind: WrappedKind, value: unknown): string | undefined {
  switch (kind) {
    case 'number':
    case 'float':
      return floatNote(kind, value);
    case 'int64':
    case 'uint64':
      return int64Note(kind, value);
    case 'int32':
    case 'uint32':
      return int32Note(kind, value);
    case 'boolean':
      return typeof value === 'boolean' ? undefined : '';
    case 'string':
      return typeof value === 'string' ? undefined : '';
    case 'bytes':
      return bytesNote(value);
  }
}

/** The number a float or double is given as (a number, or a string of one); undefined when it is neither. */
function floatOf(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return value;
  }
  return typeof value === 'string' && (JSON_NUMBER.test(value) || NON_FINITE.has(value))
    ? Number(value)
    : undefined;
}

function floatNote(kind: 'number' | 'float', value: unknown): string | undefined {
  const number = floatOf(value);
  if (number === undefined) {
    return '';
  }
  if (typeof value === 'number' && Number.isNaN(number)) {
    return ' (proto3 JSON gives a NaN as the string "NaN")';
  }
  if (typeof value === 'string' && !NON_FINITE.has(value) && !Number.isFinite(number)) {
    // a numeral beyond a double: Number() makes it ±Infinity, which only "Infinity" and "-Infinity" ask for
    return kind === 'float'
      ? ` (beyond ±${FLOAT_MAX}, the range of a 32-bit float: it would be sent as Infinity)`
      : ` (beyond ±${Number.MAX_VALUE}, the range of a double: it would be sent as Infinity)`;
  }
  if (kind === 'float' && Number.isFinite(number) && !Number.isFinite(Math.fround(number))) {
    return ` (beyond ±${FLOAT_MAX}, the range of a 32-bit float: it would be sent as Infinity)`;
  }
  return undefined;
}

/** The integer an int32 or uint32 is given as (a number, or a string of one); undefined when it is neither. */
function int32Of(value: unknown): number | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && JSON_NUMBER.test(value)
        ? Number(value)
        : NaN;
  return Number.isInteger(number) ? number : undefined;
}

function int32Note(kind: 'int32' | 'uint32', value: unknown): string | undefined {
  const number = int32Of(value);
  if (number === undefined) {
    return '';
  }
  const [min, max, range] =
    kind === 'int32' ? [-(2 ** 31), 2 ** 31 - 1, INT32_RANGE] : [0, 2 ** 32 - 1, UINT32_RANGE];
  if (number < min || number > max) {
    // a number out of range says so by itself; a string is named with the range it is outside
    return typeof value === 'number'
      ? ''
      : ` (outside ${range}, the range of ${kind === 'int32' ? 'an' : 'a'} ${kind})`;
  }
  return undefined;
}

function int64Note(kind: 'int64' | 'uint64', value: unknown): string | undefined {
  if (isLongLike(value)) {
    return undefined;
  }
  const digits = kind === 'int64' ? /^-?\d+$/ : /^\d+$/;
  if (typeof value === 'string' && digits.test(value)) {
    const [min, max] = kind === 'int64' ? [INT64_MIN, INT64_MAX] : [0n, UINT64_MAX];
    const integer = BigInt(value);
    return integer < min || integer > max
      ? ` (outside ${min}..${max}, the range of ${kind === 'int64' ? 'an' : 'a'} ${kind})`
      : undefined;
  }
  const ok = typeof value === 'number' && Number.isSafeInteger(value) && (kind === 'int64' || value >= 0);
  return ok ? undefined : '';
}

/**
 * Base64 in either alphabet proto3 JSON takes: the standard one (`+`, `/`) or the URL-safe one (`-`, `_`), padded
 * with `=` or not; one alphabet per value.
 */
const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE_BASE64 = /^[A-Za-z0-9_-]*={0,2}$/;

function bytesNote(value: unknown): string | undefined {
  if (value instanceof Uint8Array) {
    return undefined;
  }
  if (typeof value !== 'string') {
    return '';
  }
  if (!STANDARD_BASE64.test(value) && !URL_SAFE_BASE64.test(value)) {
    return /^[A-Za-z0-9+/_-]*={0,2}$/.test(value)
      ? ' (it mixes the standard base64 alphabet, with + and /, and the URL-safe one, with - and _)'
      : '';
  }
  const data = value.replace(/=+$/, '').length;
  if (data % 4 === 1) {
    return ` (${data} base64 digits, one more than a multiple of 4, encode no whole number of bytes)`;
  }
  if (data < value.length && value.length % 4 !== 0) {
    return ' (padded with "=" to a length that is not a multiple of 4)';
  }
  return undefined;
}

function wrapperProblem(type: WrapperType, value: unknown): string | undefined {
  const kind = WRAPPERS[type];
  if (!isPlainObject(value)) {
    const note = wrappedValueNote(kind, value);
    return note === undefined ? undefined : `got ${describe(value)}${note}`;
  }
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'value') {
      return `"${key}" is not its one field, value (the serializer would drop it), in ${describe(value)}`;
    }
    const note = field === undefined || field === null ? undefined : wrappedValueNote(kind, field);
    if (note !== undefined) {
      return `"value" must be ${WRAPPED_VALUES[kind]}, got ${describe(field)}${note}`;
    }
  }
  return undefined;
}

/**
 * The wrapped value as the serializer takes it: the number a float, double, int32 or uint32 given as a string
 * holds (`"1.5"` → 1.5, `"NaN"` → NaN), URL-safe base64 in the standard alphabet (`"aGV-bG8_"` → `"aGV+bG8/"`);
 * any other value as it is.
 */
function wireWrappedValue(kind: WrappedKind, value: unknown): unknown {
  if (typeof value !== 'string' || wrappedValueNote(kind, value) !== undefined) {
    return value;
  }
  switch (kind) {
    case 'number':
    case 'float':
      return Number(value);
    case 'int32':
    case 'uint32':
      return Number(value) + 0; // `+ 0` makes "-0" 0
    case 'bytes':
      // protobufjs decodes the standard alphabet only: the same bytes in it
      return value.replace(/-/g, '+').replace(/_/g, '/');
    default:
      return value;
  }
}

function isLongLike(value: unknown): boolean {
  const long = value as { low?: unknown; high?: unknown } | null;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof long?.low === 'number' &&
    typeof long.high === 'number'
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value instanceof Date) {
    return 'a Date';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'object' && value !== null && !isPlainObject(value)) {
    return `an instance of ${value.constructor?.name ?? 'a class'}`;
  }
  if (typeof value === 'bigint') {
    return `the bigint ${value}n`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return `number ${value}`; // JSON writes NaN and ±Infinity as null
  }
  if (typeof value === 'symbol' || typeof value === 'function') {
    return `a ${typeof value}`;
  }
  try {
    return typeof value === 'object' ? JSON.stringify(value) : `${typeof value} ${JSON.stringify(value)}`;
  } catch {
    return 'an object JSON cannot write (it holds a bigint or refers to itself)';
  }
}

/** A Long's value, signed unless it says it is unsigned. */
function longValue(long: { low: number; high: number; unsigned?: unknown }): bigint {
  const bits = (BigInt(long.high >>> 0) << 32n) | BigInt(long.low >>> 0);
  return long.unsigned === true ? bits : BigInt.asIntN(64, bits);
}

/** The integer the `seconds` of a Timestamp or Duration is given as; undefined when it is not one. */
function secondsOf(field: unknown): bigint | undefined {
  if (typeof field === 'number') {
    return Number.isSafeInteger(field) ? BigInt(field) : undefined;
  }
  if (typeof field === 'string') {
    return /^-?\d+$/.test(field) ? BigInt(field) : undefined;
  }
  return isLongLike(field)
    ? longValue(field as { low: number; high: number; unsigned?: unknown })
    : undefined;
}

/** The range of the seconds of a Timestamp and of a Duration, and of its nanos, with the words for each. */
const FIELD_RANGES = {
  'google.protobuf.Timestamp': {
    seconds: [BigInt(MIN_TIMESTAMP_SECONDS), BigInt(MAX_TIMESTAMP_SECONDS)],
    secondsWords: '0001-01-01T00:00:00Z..9999-12-31T23:59:59Z, the range of a Timestamp',
    nanos: [0, 999_999_999],
  },
  'google.protobuf.Duration': {
    seconds: [-BigInt(MAX_DURATION_SECONDS), BigInt(MAX_DURATION_SECONDS)],
    secondsWords: '±10000 years, the range of a Duration',
    nanos: [-999_999_999, 999_999_999],
  },
} as const;

/** What is wrong with the `{seconds, nanos}` object `value` of a `type`; undefined when nothing is. */
function objectProblem(
  type: 'google.protobuf.Timestamp' | 'google.protobuf.Duration',
  value: Record<string, unknown>,
): string | undefined {
  const ranges = FIELD_RANGES[type];
  let seconds = 0n;
  let nanos = 0;
  for (const [key, field] of Object.entries(value)) {
    if (key === 'seconds') {
      if (field === undefined || field === null) {
        continue;
      }
      const integer = secondsOf(field);
      if (integer === undefined) {
        return `"seconds" must be an integer (a number, a string of digits or a Long), got ${describe(field)}`;
      }
      const [min, max] = ranges.seconds;
      if (integer < min || integer > max) {
        return `"seconds" must be between ${min} and ${max} (${ranges.secondsWords}), got ${describe(field)}`;
      }
      seconds = integer;
    } else if (key === 'nanos') {
      if (field === undefined || field === null) {
        continue;
      }
      const [min, max] = ranges.nanos;
      if (typeof field !== 'number' || !Number.isInteger(field) || field < min || field > max) {
        return `"nanos" must be an integer between ${min} and ${max}, got ${describe(field)}`;
      }
      nanos = field;
    } else {
      return `"${key}" is not one of its fields, seconds and nanos (the serializer would drop it)`;
    }
  }
  if (type === 'google.protobuf.Duration' && ((seconds > 0n && nanos < 0) || (seconds < 0n && nanos > 0))) {
    return `"seconds" and "nanos" of a Duration must have the same sign, got ${seconds} and ${nanos}`;
  }
  return undefined;
}

/**
 * What is wrong with `value` as a `type` field's value in a scripted response, in a few words; undefined when it
 * is a string of the type's proto3 JSON form, an object of its fields, or null (the field unset).
 */
export function wellKnownValueProblem(type: WellKnownType, value: unknown): string | undefined {
  if (value === null || value === undefined) {
    return undefined;
  }
  if (isWrapper(type)) {
    return wrapperProblem(type, value);
  }
  if (typeof value === 'string') {
    const parsed = type === 'google.protobuf.Timestamp' ? parseTimestamp(value) : parseDuration(value);
    return 'problem' in parsed ? `${JSON.stringify(value)}: ${parsed.problem}` : undefined;
  }
  if (!isPlainObject(value)) {
    const hint =
      value instanceof Date && type === 'google.protobuf.Timestamp'
        ? ' (the serializer would send a Date as 1970-01-01T00:00:00Z: give date.toISOString())'
        : '';
    return `got ${describe(value)}${hint}`;
  }
  const problem = objectProblem(type, value);
  return problem === undefined ? undefined : `${problem}, in ${describe(value)}`;
}

/**
 * `value` as protobufjs serializes a `type` field: a string of a Timestamp's or Duration's proto3 JSON form
 * becomes its `{seconds, nanos}`, a wrapper's bare value its `{value}`, and a float, double, int32 or uint32 given
 * as a string (bare or in `{value}`) the number it holds; anything else is returned as it is (checked beforehand by
 * {@link wellKnownValueProblem}).
 */
export function wireValueOf(type: WellKnownType, value: unknown): unknown {
  if (isWrapper(type)) {
    const kind = WRAPPERS[type];
    if (value === null || value === undefined) {
      return value;
    }
    if (!isPlainObject(value)) {
      return { value: wireWrappedValue(kind, value) };
    }
    const wrapped = wireWrappedValue(kind, value.value);
    return wrapped === value.value ? value : { ...value, value: wrapped };
  }
  if (typeof value !== 'string') {
    return value;
  }
  const parsed = type === 'google.protobuf.Timestamp' ? parseTimestamp(value) : parseDuration(value);
  return 'problem' in parsed ? value : { seconds: parsed.seconds, nanos: parsed.nanos };
}
