/**
 * Formatting helpers for the command-line reports.
 */

import { statusLabel } from '../config/status-codes.js';
import type { MethodName } from '../config/types.js';

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;

/**
 * A duration for people: "0 ms", "0.5 ms", "100 ms", "1.5 s", "2.5 min", "3 h" (at most 3 decimals).
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) {
    return String(ms);
  }
  const magnitude = Math.abs(ms);
  if (magnitude === 0) {
    return '0 ms';
  }
  if (magnitude < 1) {
    return `${Number(ms.toPrecision(3))} ms`;
  }
  // Each unit while the value, rounded as shown, stays under the next one: 59999.9 ms is 1 min, not 60 s.
  if (shownBelow(ms, 1, MS_PER_SECOND)) {
    return `${formatNumber(ms)} ms`;
  }
  if (shownBelow(ms, MS_PER_SECOND, 60)) {
    return `${formatNumber(ms / MS_PER_SECOND)} s`;
  }
  if (shownBelow(ms, MS_PER_MINUTE, 60)) {
    return `${formatNumber(ms / MS_PER_MINUTE)} min`;
  }
  return `${formatNumber(ms / MS_PER_HOUR)} h`;
}

/** Whether `ms` in units of `unitMs`, rounded as {@link formatNumber} shows it, is below `limit`. */
function shownBelow(ms: number, unitMs: number, limit: number): boolean {
  return Math.abs(Number(formatNumber(ms / unitMs))) < limit;
}

/** A number with at most 3 decimals and no trailing zeros: 0.1, 2, 1.333. */
export function formatNumber(value: number): string {
  return String(Number(value.toFixed(3)));
}

/** A methodConfig name as `pkg.Service/Method`, `pkg.Service/*`, or `*` for the default `{}`. */
export function formatMethodName(name: MethodName): string {
  if (name.service === undefined) {
    return '*';
  }
  return `${name.service}/${name.method ?? '*'}`;
}

/** Status codes as `UNAVAILABLE (14), RESOURCE_EXHAUSTED (8)`; `none` for an empty list. */
export function formatStatusCodes(codes: readonly number[]): string {
  if (codes.length === 0) {
    return 'none';
  }
  return codes.map((code) => `${statusLabel(code)} (${code})`).join(', ');
}

/** A sum of durations such as `100 ms + 200 ms + 400 ms`, elided in the middle when there are many terms. */
export function formatDurationSum(terms: readonly number[], maxTerms = 6): string {
  const shown =
    terms.length <= maxTerms
      ? terms.map(formatDuration)
      : [
          ...terms.slice(0, maxTerms - 2).map(formatDuration),
          '...',
          formatDuration(terms[terms.length - 1] ?? 0),
        ];
  return shown.join(' + ');
}

/** Lines indented by `depth` × 2 spaces, each ending in a newline. */
export function indentLines(lines: readonly string[], depth: number): string {
  const pad = '  '.repeat(depth);
  return lines.map((line) => `${pad}${line}\n`).join('');
}

/** `count` followed by the singular or plural noun: `1 attempt`, `3 attempts`. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/**
 * Control characters (C0, DEL, C1), the line and paragraph separators (U+2028, U+2029) and the bidirectional
 * formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
};

/**
 * `text` (taken from the input: a config's names and keys, a file name, a script's text) made safe to print on one
 * line of a terminal or CI log: each control, separator or bidirectional formatting character is written as a JSON
 * escape (`\n`, `\u001b`, `\u202e`), so that the input cannot start a line of its own (a forged `::error` CI
 * annotation), send terminal escape sequences or reorder what is shown. Every other character is left as it is.
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
