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
  'google.protobuf.FloatValue': 'number',
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

const WRAPPED_VALUES: Readonly<Record<(typeof WRAPPERS)[WrapperType], string>> = {
  number: 'a number',
  int64: 'an integer (a number, or a string of digits)',
  uint64: 'a non-negative integer (a number, or a string of digits)',
  int32: 'a 32-bit integer',
  uint32: 'a 32-bit non-negative integer',
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

/** Whether `value` is what a wrapper of `kind` holds. */
function isWrappedValue(kind: (typeof WRAPPERS)[WrapperType], value: unknown): boolean {
  switch (kind) {
    case 'number':
      return (
        (typeof value === 'number' && !Number.isNaN(value)) ||
        value === 'NaN' ||
        value === 'Infinity' ||
        value === '-Infinity'
      );
    case 'int64':
      return (
        (typeof value === 'number' && Number.isSafeInteger(value)) ||
        (typeof value === 'string' && /^-?\d+$/.test(value)) ||
        isLongLike(value)
      );
    case 'uint64':
      return (
        (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
        (typeof value === 'string' && /^\d+$/.test(value)) ||
        isLongLike(value)
      );
    case 'int32':
      return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31;
    case 'uint32':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 2 ** 32;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'bytes':
      return (
        (typeof value === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value)) || value instanceof Uint8Array
      );
  }
}

function wrapperProblem(type: WrapperType, value: unknown): string | undefined {
  const kind = WRAPPERS[type];
  if (!isPlainObject(value)) {
    return isWrappedValue(kind, value) ? undefined : `got ${describe(value)}`;
  }
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'value') {
      return `"${key}" is not its one field, value (the serializer would drop it), in ${describe(value)}`;
    }
    if (field !== undefined && field !== null && !isWrappedValue(kind, field)) {
      return `"value" must be ${WRAPPED_VALUES[kind]}, got ${describe(field)}`;
    }
  }
  return undefined;
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
  if (typeof value === 'symbol' || typeof value === 'function') {
    return `a ${typeof value}`;
  }
  try {
    return typeof value === 'object' ? JSON.stringify(value) : `${typeof value} ${JSON.stringify(value)}`;
  } catch {
    return 'an object JSON cannot write (it holds a bigint or refers to itself)';
  }
}

/** What is wrong with the `{seconds, nanos}` object `value`; undefined when nothing is. */
function objectProblem(value: Record<string, unknown>): string | undefined {
  for (const [key, field] of Object.entries(value)) {
    if (key === 'seconds') {
      const ok =
        (typeof field === 'number' && Number.isSafeInteger(field)) ||
        (typeof field === 'string' && /^-?\d+$/.test(field)) ||
        isLongLike(field) ||
        field === undefined ||
        field === null;
      if (!ok) {
        return `"seconds" must be an integer (a number, a string of digits or a Long), got ${describe(field)}`;
      }
    } else if (key === 'nanos') {
      const ok =
        (typeof field === 'number' && Number.isInteger(field) && Math.abs(field) <= 999_999_999) ||
        field === undefined ||
        field === null;
      if (!ok) {
        return `"nanos" must be an integer between -999999999 and 999999999, got ${describe(field)}`;
      }
    } else {
      return `"${key}" is not one of its fields, seconds and nanos (the serializer would drop it)`;
    }
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
  const problem = objectProblem(value);
  return problem === undefined ? undefined : `${problem}, in ${describe(value)}`;
}

/**
 * `value` as protobufjs serializes a `type` field: a string of a Timestamp's or Duration's proto3 JSON form
 * becomes its `{seconds, nanos}`, a wrapper's bare value its `{value}`; anything else is returned as it is (checked
 * beforehand by {@link wellKnownValueProblem}).
 */
export function wireValueOf(type: WellKnownType, value: unknown): unknown {
  if (isWrapper(type)) {
    return value === null || value === undefined || isPlainObject(value) ? value : { value };
  }
  if (typeof value !== 'string') {
    return value;
  }
  const parsed = type === 'google.protobuf.Timestamp' ? parseTimestamp(value) : parseDuration(value);
  return 'problem' in parsed ? value : { seconds: parsed.seconds, nanos: parsed.nanos };
}
