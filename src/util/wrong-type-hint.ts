/**
 * What a value of the wrong JSON type most likely meant, as an error's ending: a number or boolean written as text
 * (`"3"`, `"true"`, as environment variables and hand-written JSON give them), or text written as a number.
 */

/** `; did you mean 3 (a number, not a string)?` and the like; '' when `value` does not read as a `want`. */
export function wrongTypeHint(value: unknown, want: 'number' | 'boolean' | 'string'): string {
  if (want === 'number' && typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) {
    return `; did you mean ${Number(value)} (a number, not a string)?`;
  }
  if (want === 'boolean' && typeof value === 'string' && /^\s*(true|false)\s*$/i.test(value)) {
    return `; did you mean ${value.trim().toLowerCase()} (a boolean, not a string)?`;
  }
  if (want === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return `; did you mean "${String(value)}" (a string)?`;
  }
  return '';
}
