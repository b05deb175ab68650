/**
 * Proto3 JSON `google.protobuf.Duration` parsing.
 */

import { describeValue, ServiceConfigError } from './service-config-error.js';

/** Largest magnitude of the seconds part of a proto3 Duration (about 10,000 years). */
export const MAX_DURATION_SECONDS = 315_576_000_000;

/**
 * Sign, whole seconds, up to nine fractional digits, then `s`. The whole seconds are required, as grpc-js and
 * C-core require them: a fraction without them (".5s") is refused with a hint ("0.5s"), so that a config this
 * package accepts is one grpc-js's own parser accepts too. A dot without digits after it ("1.s") is refused.
 */
const DURATION_PATTERN = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;

const EXPECTATION =
  'must be a duration string such as "0.1s" or "2s" (seconds, up to 9 decimals, ending in "s")';

/**
 * Parses a proto3 JSON Duration ("0.1s", "1.000000001s", "-2s") into milliseconds, keeping fractional
 * milliseconds (so "1.000000001s" is 1000.000001). The sign is not checked here: callers decide whether zero or
 * negative values are allowed.
 *
 * @param value The JSON value; anything but a well-formed string is rejected.
 * @param path JSON path of the value, for the error.
 * @returns The duration in milliseconds (never `-0`).
 * @throws ServiceConfigError when the value is not a valid Duration or is out of the Duration range.
 */
export function parseDuration(value: unknown, path: string): number {
  const result = readDuration(value);
  if (typeof result === 'string') {
    throw new ServiceConfigError(path, result);
  }
  return result;
}

/**
 * {@link parseDuration} without the throw: the duration in milliseconds, or what is wrong with the value (a
 * string such as `must be a duration string ..., got 5`).
 */
export function readDuration(value: unknown): number | string {
  if (typeof value !== 'string') {
    return `${EXPECTATION}, got ${describeValue(value)}${durationHint(value)}`;
  }
  const match = DURATION_PATTERN.exec(value);
  if (match === null) {
    return `${EXPECTATION}, got ${describeValue(value)}${durationHint(value)}`;
  }
  const whole = match[2] ?? '0';
  const fraction = match[3] ?? '';
  const seconds = Number(whole);
  if (seconds > MAX_DURATION_SECONDS) {
    return `duration ${describeValue(value)} is out of range (at most ${MAX_DURATION_SECONDS}s either way)`;
  }
  // Whole milliseconds and the nanoseconds below them are added separately, so that "0.3s" is exactly 300 and
  // "1.500s" exactly 1500 (no 0.3 × 1000 rounding).
  const nanos = fraction === '' ? 0 : Number(fraction.padEnd(9, '0'));
  const ms = seconds * 1000 + Math.floor(nanos / 1_000_000) + (nanos % 1_000_000) / 1_000_000;
  return match[1] === '-' && ms !== 0 ? -ms : ms;
}

/** Seconds per unit of the durations people write instead of proto3's ("100ms", "2 min", "1.5 seconds"). */
const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
};

/** A number with an optional unit after it, spaces allowed around and between. */
const LOOSE_DURATION = /^\s*(-?(?:\d+\.?\d*|\.\d+))\s*([a-zµ]*)\s*$/i;

/** `seconds` as a proto3 Duration string: at most nine decimals, no trailing zeros (0.1 → "0.1s"). */
function formatSeconds(seconds: number): string {
  return `${seconds.toFixed(9).replace(/\.?0+$/, '')}s`;
}

/**
 * The proto3 spelling of a duration written another way, as an error's ending (`; did you mean "0.1s"?`), or ''
 * when the value does not read as one: "100ms" → "0.1s", "0.1" → "0.1s", " 2s " → "2s", "1m" → "60s". A bare
 * number has no unit, so both readings are offered when it could be milliseconds.
 */
export function durationHint(value: unknown): string {
  if (typeof value === 'number' && Math.abs(value) <= MAX_DURATION_SECONDS) {
    const asSeconds = `"${formatSeconds(value)}" for ${value} seconds`;
    return Number.isInteger(value) && Math.abs(value) >= 10
      ? `; write it as a string: ${asSeconds}, or "${formatSeconds(value / 1000)}" for ${value} milliseconds`
      : `; write it as a string: ${asSeconds}`;
  }
  if (typeof value !== 'string') {
    return '';
  }
  const match = LOOSE_DURATION.exec(value);
  if (match === null) {
    return '';
  }
  const unit = match[2]?.toLowerCase() ?? '';
  const perUnit = unit === '' ? 1 : UNIT_SECONDS[unit];
  if (perUnit === undefined) {
    return '';
  }
  const seconds = Number(match[1]) * perUnit;
  if (Math.abs(seconds) > MAX_DURATION_SECONDS) {
    return '';
  }
  const text = formatSeconds(seconds);
  // Below a nanosecond, a proto3 Duration cannot say it: no hint rather than a wrong one.
  if (seconds !== 0 && Number(text.slice(0, -1)) === 0) {
    return '';
  }
  return text === value ? '' : `; did you mean "${text}"?`;
}
