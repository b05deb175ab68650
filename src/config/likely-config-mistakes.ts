/**
 * What in a service config handed to the interceptor most likely does not say what its author meant. Unknown
 * fields are ignored at run time, as the service-config spec requires (a config may carry fields of newer gRPC
 * versions), so a misspelled `methodConfigs` or `retryPolcy` leaves the calls it was meant for without retries, and
 * nothing fails. The interceptor reports these once, at creation; `check` reports every unknown field.
 */
import { findConfigWarnings } from './config-warnings.js';
import { formatJsonPath, type JsonPath } from './json-path.js';
import { parseJsonSource } from './json-source.js';
import { findPatternNames } from './pattern-names.js';
import type { ServiceConfig } from './types.js';
import { findUnknownFields, WIDENED_NAME } from './unknown-fields.js';

/**
 * One line per likely mistake: an unknown field with a known one close to its name (a misspelling), a config
 * that configures nothing the interceptor applies while holding unknown fields (not a service config at all, say),
 * a method name that looks like a pattern or a path (`"pkg.*"`, `"/pkg.Service"`), which no call matches, and an
 * entry without a name (or with an empty list), which applies to no call.
 * Empty when there is nothing to say. `placeOf` says where a path is written (` (at config.json:7:9)`), when the
 * config was JSON text.
 * @internal
 */
export function likelyConfigMistakes(
  input: string | object,
  parsed: ServiceConfig,
  placeOf: (path: JsonPath, target: 'key' | 'value') => string = () => '',
): string[] {
  let root: unknown = input;
  if (typeof input === 'string') {
    const source = parseJsonSource(input);
    if (!source.ok) {
      return [];
    }
    root = source.value;
  }
  const unknown = findUnknownFields(root);
  const mistakes = unknown.flatMap((field) =>
    field.suggestion === undefined && !field.widensName && field.advice === undefined
      ? []
      : [
          `the service config's ${formatJsonPath(field.path)}${placeOf(field.path, 'key')} is not a service-config field${field.suggestion === undefined ? '' : ` (did you mean "${field.suggestion}"?)`}${field.widensName ? `: ${WIDENED_NAME}` : ''}${field.advice === undefined ? '' : `: ${field.advice}`}`,
        ],
  );
  for (const name of findPatternNames(root)) {
    mistakes.push(
      `the service config's ${formatJsonPath(name.path)}${placeOf(name.path, 'value')}: ${name.message}`,
    );
  }
  // An entry without a name (or with an empty list) applies to no call: its policy never runs, and nothing fails
  // (grpc-js refuses such a config; a reader may take a missing name for "every method").
  for (const warning of findConfigWarnings(parsed, root)) {
    if (warning.kind === 'ineffective-policy') {
      mistakes.push(
        `the service config's ${formatJsonPath(warning.path)}${placeOf(warning.path, 'value')} ${warning.message}`,
      );
    }
  }
  if (mistakes.length === 0 && unknown.length > 0 && parsed.methodConfig.length === 0) {
    const keys = [
      ...unknown.slice(0, LISTED).map((field) => formatJsonPath(field.path)),
      ...(unknown.length > LISTED ? [`and ${unknown.length - LISTED} more`] : []),
    ].join(', ');
    mistakes.push(
      `the service config has no methodConfig, only fields a service config does not have (${keys}), so every call passes straight through`,
    );
  }
  if (mistakes.length > LISTED) {
    const more = mistakes.length - LISTED;
    return [
      ...mistakes.slice(0, LISTED),
      `and ${more} more (\`grpc-retry-hedging check\` on the config lists them all)`,
    ];
  }
  return mistakes;
}

/** How many mistakes (or unknown keys) one warning lists: a config may hold thousands, and a warning is a line. */
const LISTED = 10;
