/**
 * Checking attempt scripts (see `flaky-script.ts`) before the flaky server plays them: every problem is an Error
 * naming the offending field.
 */

import { parseStatusCode, statusNameHint } from '../config/status-codes.js';
import { errorMessage } from '../util/error-message.js';
import { describeValue, didYouMean } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import type { AttemptScript, AttemptScriptInput } from './flaky-script.js';

const MAX_DELAY_MS = 2_147_483_647; // largest delay setTimeout honours
const MAX_RESPONSES = 100_000;
const LEGAL_KEY = /^[0-9a-z_.-]+$/;
const LEGAL_VALUE = /^[ -~]*$/;
/** Trailer keys that would break the HTTP/2 response or the status itself. */
const FORBIDDEN_TRAILER_KEYS: ReadonlySet<string> = new Set([
  'grpc-status',
  'grpc-message',
  'content-type',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'te',
]);
const SCRIPT_FIELDS: ReadonlySet<string> = new Set([
  'status',
  'details',
  'delayMs',
  'pushback',
  'retryInfoMs',
  'trailers',
  'sendHeaders',
  'responses',
  'failOnFirstMessage',
  'endBeforeHalfClose',
  'echo',
  'response',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEncodable(text: string): boolean {
  try {
    encodeURI(text); // grpc-js encodes status details with encodeURI; lone surrogates would throw there
    return true;
  } catch {
    return false;
  }
}

/**
 * A script's status: an integer code 0..16, or a status name in any case, as in a service config
 * (`"UNAVAILABLE"`, `"unavailable"`). Numeric strings such as `"14"` are rejected, and so are other numbers: a
 * code outside 0..16 reaches the client as UNKNOWN, which `"UNKNOWN"` says plainly.
 */
function checkStatus(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 0 && value <= 16 ? value : undefined;
  }
  if (typeof value === 'string') {
    try {
      return parseStatusCode(value, 'status');
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Checks one attempt script (an {@link AttemptScriptInput}) and returns a copy of it, status names turned into numbers. Throws an Error whose
 * message names the offending field, prefixed by `where`. Unknown fields are rejected so typos do not silently
 * turn into a prompt success.
 */
export function validateAttemptScript(value: unknown, where = 'attempt script'): AttemptScript {
  if (!isPlainObject(value)) {
    const got = Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
    throw new Error(`${where}: must be an object, got ${got}`);
  }
  const fail = (field: string, rule: string): never => {
    throw new Error(`${where}: "${field}" ${rule}`);
  };
  /** `fail`, naming the value given and what it likely meant when it is of the wrong type. */
  const wrong = (field: string, rule: string, given: unknown, want: 'number' | 'boolean' | 'string'): never =>
    fail(field, `${rule}, got ${describeValue(given)}${wrongTypeHint(given, want)}`);
  const out: AttemptScript = {};
  for (const [field, v] of Object.entries(value)) {
    if (!SCRIPT_FIELDS.has(field)) {
      const known = [...SCRIPT_FIELDS];
      throw new Error(
        `${where}: unknown field "${field}"${didYouMean(field, known)} (known: ${known.join(', ')})`,
      );
    }
    if (v === undefined) {
      continue;
    }
    switch (field) {
      case 'status': {
        const code = checkStatus(v);
        if (code === undefined) {
          const hint =
            typeof v === 'string'
              ? statusNameHint(v)
              : typeof v === 'number'
                ? ' (a code outside 0..16 reaches the client as UNKNOWN: write "UNKNOWN" for that)'
                : '';
          fail(
            field,
            `must be a grpc status code 0..16 or a status name such as "UNAVAILABLE", got ${typeof v === 'string' ? JSON.stringify(v) : describeValue(v)}${hint}`,
          );
        }
        out.status = code;
        break;
      }
      case 'details':
        if (typeof v !== 'string' || !isEncodable(v)) {
          fail(field, 'must be a well-formed string');
        }
        out.details = v as string;
        break;
      case 'delayMs':
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_DELAY_MS) {
          wrong(field, `must be a number between 0 and ${MAX_DELAY_MS}`, v, 'number');
        }
        out.delayMs = v as number;
        break;
      case 'pushback':
        if (typeof v !== 'string' || !LEGAL_VALUE.test(v)) {
          wrong(field, 'must be a string of printable ASCII', v, 'string');
        }
        out.pushback = v as string;
        break;
      case 'retryInfoMs':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_DELAY_MS) {
          wrong(field, `must be an integer number of ms between 0 and ${MAX_DELAY_MS}`, v, 'number');
        }
        out.retryInfoMs = v as number;
        break;
      case 'trailers':
        out.trailers = checkTrailers(v, fail);
        break;
      case 'response':
        if (!isPlainObject(v)) {
          fail(field, 'must be an object: the response message, as your proto loader takes it');
        }
        out.response = v as Record<string, unknown>;
        break;
      case 'responses':
        if (Array.isArray(v)) {
          fail(
            field,
            `must be an integer between 0 and ${MAX_RESPONSES}, got an array: it is how many messages to stream, and \`response\` the message each one is (to vary them, build each in the server's \`respond\` option, which is told its index)`,
          );
        }
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_RESPONSES) {
          wrong(field, `must be an integer between 0 and ${MAX_RESPONSES}`, v, 'number');
        }
        out.responses = v as number;
        break;
      case 'sendHeaders':
      case 'failOnFirstMessage':
      case 'endBeforeHalfClose':
      case 'echo':
        if (typeof v !== 'boolean') {
          wrong(field, 'must be a boolean', v, 'boolean');
        }
        out[field] = v as boolean;
        break;
    }
  }
  checkFieldsTogether(out, fail);
  return out;
}

/**
 * The trailers a dedicated field sends, by key, with that field: a scripted trailer of the same key would be
 * replaced by it, silently. Either alone is fine (the trailer key sends any raw value, garbage included).
 */
const DEDICATED_TRAILERS = [
  ['grpc-retry-pushback-ms', 'pushback'],
  ['grpc-status-details-bin', 'retryInfoMs'],
] as const;

/** The problems of fields together, once each is known good alone. */
function checkFieldsTogether(script: AttemptScript, fail: (field: string, rule: string) => never): void {
  if (script.retryInfoMs !== undefined && (script.status ?? 0) === 0) {
    fail(
      'retryInfoMs',
      `requires a non-OK status, got ${script.status === undefined ? 'no "status" (an attempt ends OK by default)' : 'status OK'}: the RetryInfo travels in the details of a failed status, so an OK attempt would not send it; give a "status" such as "UNAVAILABLE"`,
    );
  }
  for (const [key, field] of DEDICATED_TRAILERS) {
    if (script[field] !== undefined && script.trailers !== undefined && Object.hasOwn(script.trailers, key)) {
      fail(
        `trailers.${key}`,
        `and "${field}" both set the ${key} trailer ("${field}" would replace the scripted value silently): give one of them`,
      );
    }
  }
}

function checkTrailers(value: unknown, fail: (field: string, rule: string) => never): Record<string, string> {
  if (!isPlainObject(value)) {
    return fail('trailers', 'must be an object of string values');
  }
  const trailers: Record<string, string> = {};
  for (const [key, text] of Object.entries(value)) {
    if (!LEGAL_KEY.test(key)) {
      fail(`trailers.${key}`, 'is not a legal lowercase metadata key');
    }
    if (FORBIDDEN_TRAILER_KEYS.has(key)) {
      fail(`trailers.${key}`, 'is reserved');
    }
    if (typeof text !== 'string') {
      return fail(`trailers.${key}`, 'must be a string');
    }
    if (!key.endsWith('-bin') && !LEGAL_VALUE.test(text)) {
      fail(`trailers.${key}`, 'must be printable ASCII (use a -bin key for other bytes)');
    }
    trailers[key] = text;
  }
  return trailers;
}

/**
 * Checks a per-call script (non-empty array of {@link AttemptScriptInput}) and returns a copy, status names turned
 * into numbers. Throws an Error naming
 * the problem, prefixed by `where`.
 */
export function validateAttemptScripts(value: unknown, where = 'script'): AttemptScript[] {
  if (!Array.isArray(value)) {
    throw new Error(`${where}: must be an array of attempt scripts`);
  }
  if (value.length === 0) {
    throw new Error(`${where}: must contain at least one attempt script`);
  }
  const scripts: AttemptScript[] = [];
  for (let i = 0; i < value.length; i++) {
    // A hole (`[, {...}]`) is skipped by map and forEach: the attempt it stands for would end UNKNOWN.
    if (!(i in value)) {
      throw new Error(
        `${where}[${i}]: missing (a hole in the array, as in \`[, {...}]\`); write {} for a prompt success`,
      );
    }
    scripts.push(validateAttemptScript(value[i], `${where}[${i}]`));
  }
  return scripts;
}

/** Parses and checks a JSON text holding a per-call script, as shipped in `x-flaky-script` metadata. */
export function parseAttemptScriptsJson(text: string, where = 'script'): AttemptScript[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: not valid JSON (${errorMessage(err)})`);
  }
  return validateAttemptScripts(parsed, where);
}
