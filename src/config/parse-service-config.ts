/**
 * Parsing a service config into its normalized form, throwing one error that lists every problem.
 */

import { closestName } from '../util/closest-name.js';
import { normalizedPolicyField, wrappedParsedPolicyMessage } from './copied-normalized-config.js';
import { deepFreeze, isNormalizedServiceConfig } from './normalized-config.js';
import { ServiceConfigError, serviceConfigErrorOf } from './service-config-error.js';
import { ConfigProblems, isJsonObject, readCallPolicy } from './service-config-rules.js';
import type { CallPolicy, ServiceConfig } from './types.js';
import { findUnknownPolicyFields } from './unknown-fields.js';
import { validate } from './validate-service-config.js';

export { isNormalizedServiceConfig, NORMALIZED_SERVICE_CONFIG } from './normalized-config.js';

/**
 * Parses and validates a service config.
 *
 * Known fields are checked strictly and any invalid one rejects the whole config; unknown fields are ignored.
 * `null` is treated like an absent field, as proto3 JSON does.
 *
 * @param input JSON text, or an already parsed JSON value. A config this function returned is returned as is.
 * @returns The normalized config (durations in ms, numeric status codes, names without empty parts), deeply frozen
 *   and branded (not enumerably) as a config this package made.
 * @throws ServiceConfigError listing every problem in `errors` (with line and column for JSON text); `path` and
 *   `detail` name the first. JSON text that does not parse gives one error naming the line, column and position
 *   of the syntax error (with path ``).
 */
export function parseServiceConfig(input: string | object): ServiceConfig {
  return parseServiceConfigFrom(input);
}

/**
 * {@link parseServiceConfig}, with the file the text was read from, for the likely mistakes the interceptor
 * reports later (`methodConfig[0].retryPolcy (at config.json:7:9)`). @internal
 */
export function parseServiceConfigFrom(input: string | object, file?: string): ServiceConfig {
  if (isNormalizedServiceConfig(input)) {
    return input;
  }
  const result = validate(input, false, file);
  if (result.config === undefined) {
    throw serviceConfigErrorOf(
      result.errors,
      result.syntaxErrorCause === undefined ? {} : { cause: result.syntaxErrorCause },
    );
  }
  return result.config;
}

/**
 * Parses a single policy in service-config form, `{ "retryPolicy": {...} }` or `{ "hedgingPolicy": {...} }`, with
 * the same rules as inside a methodConfig entry (used for per-call overrides), except that a field the policy does
 * not have is an error, with a "did you mean", rather than ignored.
 *
 * @param path JSON path prefix for error messages (default `policy`).
 * @param otherFields Fields the caller reads beside the policy (serviceConfigFromProtos: timeout, waitForReady);
 *   any other field is an error, with a "did you mean".
 * @throws ServiceConfigError listing every problem; `path` names the first.
 */
export function parseCallPolicy(
  input: unknown,
  path = 'policy',
  otherFields: readonly string[] = [],
): CallPolicy {
  const wrapped = normalizedPolicyField(input);
  if (wrapped !== undefined) {
    // withRetryOptions takes a parsed policy as it is; elsewhere (serviceConfigFromProtos) only JSON will do.
    const advice =
      path === 'policy'
        ? `pass it as the policy itself (policy: config.methodConfig[i].${wrapped}), not wrapped in { ${wrapped} }`
        : 'write the policy as service-config JSON (durations as "0.1s", status codes by name)';
    throw new ServiceConfigError(joinPrefix(path, [wrapped]), wrappedParsedPolicyMessage(advice));
  }
  const problems = new ConfigProblems();
  const prefix = path === '' ? [] : [path];
  if (isJsonObject(input)) {
    const known = ['retryPolicy', 'hedgingPolicy', ...otherFields];
    for (const key of Object.keys(input).filter((k) => !known.includes(k))) {
      problems.add([...prefix, key], unknownCallPolicyField(key, known, otherFields.length === 0));
    }
  }
  const policy = readCallPolicy(input, prefix, problems);
  // A policy handed to a function is code, not a config file the spec tells us to read leniently: a misspelled
  // field would silently take its default (a misspelled hedgingDelay sends every hedge at once).
  for (const field of findUnknownPolicyFields(input, prefix)) {
    const hint = field.suggestion === undefined ? '' : ` (did you mean "${field.suggestion}"?)`;
    problems.add(field.path, `is not a field of a ${field.path.at(-2) as string}${hint}`);
  }
  if (policy === undefined || problems.list.length > 0) {
    throw serviceConfigErrorOf(
      problems.list.map((p) => ({ path: joinPrefix(path, p.path.slice(prefix.length)), message: p.message })),
    );
  }
  return deepFreeze(policy);
}

/** Per-call settings that are not policy fields (a deadline, the metadata's waitForReady), and what to do instead. */
const CALL_OPTION_FIELDS: Readonly<Record<string, string>> = {
  timeout: 'give the call a deadline (the call option deadline) instead',
  // grpc-js's call options have no waitForReady: it reads it from the call's metadata options only.
  waitForReady: "set it on the call's metadata instead: metadata.setOptions({ waitForReady: true })",
  name: 'the policy applies to the call it is passed with',
};

/**
 * The fields of a retry or hedging policy, and the policies that have each: written beside retryPolicy and
 * hedgingPolicy rather than inside one (`{ policy: { maxAttempts: 3, initialBackoff: ... } }`).
 */
const INNER_POLICY_FIELDS: Readonly<Record<string, readonly ('retryPolicy' | 'hedgingPolicy')[]>> = {
  maxAttempts: ['retryPolicy', 'hedgingPolicy'],
  initialBackoff: ['retryPolicy'],
  maxBackoff: ['retryPolicy'],
  backoffMultiplier: ['retryPolicy'],
  retryableStatusCodes: ['retryPolicy'],
  perAttemptRecvTimeout: ['retryPolicy'],
  hedgingDelay: ['hedgingPolicy'],
  nonFatalStatusCodes: ['hedgingPolicy'],
};

/** The error for a field beside retryPolicy/hedgingPolicy that the policy object does not have. */
function unknownCallPolicyField(key: string, known: readonly string[], perCall: boolean): string {
  const where = perCall ? 'a per-call policy' : `this policy (${known.join(', ')})`;
  const callOptions = perCall ? Object.keys(CALL_OPTION_FIELDS) : [];
  const instead = CALL_OPTION_FIELDS[key];
  if (perCall && instead !== undefined) {
    return `is not a field of ${where}; ${instead}`;
  }
  const inside = Object.hasOwn(INNER_POLICY_FIELDS, key) ? INNER_POLICY_FIELDS[key] : undefined;
  if (inside !== undefined) {
    return `is not a field of ${where}, but of the ${inside.join(' or ')} in it: write ${inside.map((p) => `{ ${p}: { ${key}, ... } }`).join(' or ')}`;
  }
  const match = closestName(key, [...known, ...callOptions]);
  if (match === undefined) {
    return `is not a field of ${where}`;
  }
  const meant = CALL_OPTION_FIELDS[match];
  return perCall && meant !== undefined && !known.includes(match)
    ? `is not a field of ${where} (did you mean "${match}"? that is not one either: ${meant})`
    : `is not a field of ${where} (did you mean "${match}"?)`;
}

/** `prefix` (itself a rendered path such as `policy`) followed by the rest of a path. */
function joinPrefix(prefix: string, rest: readonly (string | number)[]): string {
  let text = prefix;
  for (const segment of rest) {
    text += typeof segment === 'number' ? `[${segment}]` : text === '' ? segment : `.${segment}`;
  }
  return text;
}
