/**
 * gRPC status codes as they appear in service configs: an integer or a case-insensitive name.
 */

import { status } from '@grpc/grpc-js';
import { closestName } from '../util/closest-name.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { describeValue, ServiceConfigError } from './service-config-error.js';

/** Highest canonical gRPC status code (UNAUTHENTICATED). */
const MAX_STATUS_CODE = 16;

const CODE_BY_NAME: ReadonlyMap<string, number> = buildNameTable();

const NAME_BY_CODE: ReadonlyMap<number, string> = new Map(
  [...CODE_BY_NAME].map(([name, code]) => [code, name] as const),
);

function buildNameTable(): Map<string, number> {
  const table = new Map<string, number>();
  for (const [name, code] of Object.entries(status)) {
    if (typeof code === 'number' && Number.isInteger(code) && code >= 0 && code <= MAX_STATUS_CODE) {
      table.set(name, code);
    }
  }
  return table;
}

/**
 * Parses a status code from a service config: an integer 0..16 or a name in any letter case
 * ("UNAVAILABLE", "unavailable", "deadline_exceeded"). Numeric strings ("14") are rejected.
 *
 * @param value The JSON value.
 * @param path JSON path of the value, for the error.
 * @returns The numeric `grpc.status` value.
 * @throws ServiceConfigError when the value is not a known status code.
 */
export function parseStatusCode(value: unknown, path: string): number {
  const code = readStatusCode(value);
  if (typeof code === 'string') {
    throw new ServiceConfigError(path, code);
  }
  return code;
}

/** {@link parseStatusCode} without the throw: the code, or what is wrong with the value. */
export function readStatusCode(value: unknown): number | string {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_STATUS_CODE) {
    return value;
  }
  if (typeof value === 'string') {
    const code = CODE_BY_NAME.get(value.toUpperCase());
    if (code !== undefined) {
      return code;
    }
  }
  return (
    `must be a gRPC status code (an integer 0..${MAX_STATUS_CODE} or a name such as "UNAVAILABLE"), ` +
    `got ${describeValue(value)}${typeof value === 'string' ? statusNameHint(value) : ''}`
  );
}

/**
 * What a string that names no status code most likely meant, as an error's ending: a number without quotes, the
 * name without spaces around it, or the closest name; '' when nothing is near.
 */
export function statusNameHint(text: string): string {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed) && Number(trimmed) <= MAX_STATUS_CODE) {
    return `; write the number ${Number(trimmed)} without quotes, or its name "${statusLabel(Number(trimmed))}"`;
  }
  if (CODE_BY_NAME.has(trimmed.toUpperCase())) {
    return `; did you mean "${trimmed}" (without the spaces around it)?`;
  }
  const match = closestName(trimmed.toUpperCase(), CODE_BY_NAME.keys());
  return match === undefined ? '' : `; did you mean "${match}"?`;
}

/** The canonical status code names, in code order: `OK`, `CANCELLED`, ..., `UNAUTHENTICATED`. */
export function statusCodeNames(): string[] {
  return [...NAME_BY_CODE.entries()].sort((a, b) => a[0] - b[0]).map(([, name]) => name);
}

/**
 * The canonical upper-case name of a status code, e.g. `statusCodeName(14) === 'UNAVAILABLE'`.
 * Codes outside 0..16 are returned as their decimal string.
 *
 * @throws TypeError when `code` is not a number (NaN included): a name or text given back as its own "name" would
 *   hide the mistake.
 */
export function statusCodeName(code: number): string {
  if (typeof code !== 'number' || Number.isNaN(code)) {
    const isName = typeof code === 'string' && CODE_BY_NAME.has(code);
    throw new TypeError(
      `statusCodeName: code must be a status code number (such as 14 or grpc.status.UNAVAILABLE), got ${describeValue(code)}${isName ? '; it is already a status name' : wrongTypeHint(code, 'number')}`,
    );
  }
  return statusLabel(code);
}

/** {@link statusCodeName} unchecked, for a code read from a call: the decimal string of what is not 0..16. @internal */
export function statusLabel(code: number): string {
  return NAME_BY_CODE.get(code) ?? String(code);
}
