import type { Metadata } from '@grpc/grpc-js';
import { PUSHBACK_METADATA_KEY } from '../shared/headers.js';

/** What a server's pushback trailer says. @internal */
export type Pushback =
  | { readonly kind: 'absent' }
  | { readonly kind: 'retry-after'; readonly delayMs: number }
  | { readonly kind: 'do-not-retry'; readonly reason: string };

const ABSENT: Pushback = Object.freeze({ kind: 'absent' });
const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);
/** A decimal signed integer without unnecessary leading zeros (A6). */
const CANONICAL_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

/**
 * Parse the values of `grpc-retry-pushback-ms` strictly, as A6 asks: a single decimal signed 32-bit integer.
 * n >= 0 means "retry after exactly n ms"; a negative value, anything unparseable (`"abc"`, `"10abc"`, `""`,
 * `"1.5"`, `"007"`, out of int32 range) or more than one value means "do not retry".
 * (grpc-js parses with parseInt and so retries at once on garbage; we do not.)
 */
export function parsePushbackValues(values: readonly unknown[]): Pushback {
  if (values.length === 0) {
    return ABSENT;
  }
  if (values.length > 1) {
    return { kind: 'do-not-retry', reason: `repeated pushback (${values.length} values)` };
  }
  const raw = values[0];
  if (typeof raw !== 'string') {
    return { kind: 'do-not-retry', reason: 'pushback value is not text' };
  }
  if (!CANONICAL_INTEGER.test(raw)) {
    return { kind: 'do-not-retry', reason: `unparseable pushback ${JSON.stringify(raw)}` };
  }
  const value = Number(raw);
  if (value > INT32_MAX || value < INT32_MIN) {
    return { kind: 'do-not-retry', reason: `pushback ${raw} is outside the signed 32-bit range` };
  }
  if (value < 0) {
    return { kind: 'do-not-retry', reason: `negative pushback ${raw}` };
  }
  return { kind: 'retry-after', delayMs: value };
}

/** Read the pushback from a status's trailers. */
export function parsePushback(trailers: Metadata | undefined | null): Pushback {
  if (!trailers) {
    return ABSENT;
  }
  return parsePushbackValues(trailers.get(PUSHBACK_METADATA_KEY));
}
