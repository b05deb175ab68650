/**
 * Validation that reports every problem of a service config at once, located in its JSON text.
 */

import { errorMessage } from '../util/error-message.js';
import { isThenable } from '../util/option-checks.js';
import { findArrayHole } from './array-holes.js';
import { type ConfigWarningKind, findConfigWarnings } from './config-warnings.js';
import { COPIED_CONFIG_MESSAGE, findNormalizedPolicy } from './copied-normalized-config.js';
import { encodingAdvice, fileNameAdvice } from './file-name-as-text.js';
import { formatJsonPath, type JsonPath } from './json-path.js';
import { duplicateKeyMessage, type JsonSource, parseJsonSource } from './json-source.js';
import { likelyConfigMistakes } from './likely-config-mistakes.js';
import { brandConfig } from './normalized-config.js';
import { findPatternNames } from './pattern-names.js';
import type { ServiceConfigIssue } from './service-config-error.js';
import { ConfigProblems, readServiceConfig } from './service-config-rules.js';
import type { ServiceConfig } from './types.js';
import { describeUnknownField, findUnknownFields } from './unknown-fields.js';

/** Result of {@link validateServiceConfig}. */
export interface ServiceConfigValidation {
  /** The normalized, frozen config, or `undefined` when there are errors. */
  readonly config: ServiceConfig | undefined;
  /** Every problem that rejects the config (at most one for JSON text that does not parse). */
  readonly errors: readonly ServiceConfigIssue[];
  /**
   * Findings that do not reject the config: unknown fields (ignored at run time, as the spec requires), with a
   * "did you mean" for near misses; method names that look like patterns or paths (matched exactly, so by no
   * call); a methodConfig entry with no name (it applies to nothing); a `timeout` longer than a grpc-js server can time
   * (2147482647 ms, about 24.8 days: it is held at that); and, for JSON text, a key written twice in one object (the
   * last one wins).
   */
  readonly warnings: readonly ServiceConfigIssue[];
}

/**
 * Validates a service config and reports every problem at once, without throwing.
 *
 * @param input JSON text (problems then carry line and column) or an already parsed JSON value.
 * @returns The config when valid, every error, and warnings about unknown fields.
 */
export function validateServiceConfig(input: string | object): ServiceConfigValidation {
  const { config, errors, warnings } = validate(input, true);
  return { config, errors, warnings: warnings.map(({ kind: _kind, ...warning }) => warning) };
}

/** A warning with what it is about, as `check --json` labels it. @internal */
export interface KindedIssue extends ServiceConfigIssue {
  readonly kind: ConfigWarningKind;
}

/**
 * {@link ServiceConfigValidation} with the `JSON.parse` error behind a syntax error, and the kind of each warning.
 * @internal
 */
export interface ValidationWithCause extends ServiceConfigValidation {
  readonly warnings: readonly KindedIssue[];
  readonly syntaxErrorCause?: unknown;
}

/**
 * {@link validateServiceConfig}, optionally skipping the unknown-field search (the runtime does not need it).
 * @internal
 */
export function validate(input: string | object, withWarnings: boolean, file?: string): ValidationWithCause {
  let root: unknown = input;
  let source: JsonSource | undefined;
  if (typeof input === 'string') {
    const parsed = parseJsonSource(input);
    if (!parsed.ok) {
      const { line, column, offset } = parsed.position;
      const advice = fileNameAdvice(input) ?? encodingAdvice(input);
      const message = `invalid JSON at line ${line}, column ${column} (position ${offset}): ${parsed.problem}${advice === undefined ? '' : `; ${advice}`}`;
      return {
        config: undefined,
        errors: [{ path: '', message, line, column }],
        warnings: [],
        syntaxErrorCause: parsed.cause,
      };
    }
    source = parsed;
    root = parsed.value;
  }
  const bytes = bytesKind(root);
  if (bytes !== undefined) {
    // A file read without an encoding: as an object, its bytes would read as fields "0", "1", ... of no config.
    const message = `is ${bytes} (bytes), not a service config: decode it first (buffer.toString('utf8')) and pass the text, or read the file with loadServiceConfig(file)`;
    return { config: undefined, errors: [{ path: '', message }], warnings: [] };
  }
  if (isThenable(root)) {
    // A forgotten `await`: a Promise has no fields, so it would read as a config that configures nothing.
    const message =
      'is a Promise, not a service config: await loadServiceConfigAsync(...) before passing its result';
    return { config: undefined, errors: [{ path: '', message }], warnings: [] };
  }
  const hole = source === undefined ? findArrayHole(root) : undefined;
  if (hole !== undefined) {
    const message = `has a hole at index ${hole.index} (an empty slot, as \`new Array(n)\` or \`[ , x]\` make): give every element a value`;
    return { config: undefined, errors: [issue(hole.path, message, undefined, 'value')], warnings: [] };
  }
  const normalizedPolicy = findNormalizedPolicy(root);
  if (normalizedPolicy !== undefined) {
    // Read as JSON, it would be rejected for every duration it lacks, with "misspelling?" hints naming our own
    // internal fields.
    return {
      config: undefined,
      errors: [issue(normalizedPolicy, COPIED_CONFIG_MESSAGE, source, 'value')],
      warnings: [],
    };
  }
  const problems = new ConfigProblems();
  const config = readServiceConfig(root, problems);
  const misspelled = problems.list.length > 0 ? misspellingsByPath(root) : undefined;
  const errors = problems.list.map((p) =>
    issue(p.path, withMisspelling(p.message, misspelled?.get(formatJsonPath(p.path))), source, 'value'),
  );
  const warnings: KindedIssue[] = withWarnings
    ? [
        ...findUnknownFields(root).map((field) => ({
          ...issue(field.path, describeUnknownField(field), source, 'key'),
          kind: 'unknown-field' as const,
        })),
        ...findPatternNames(root).map((name) => ({
          ...issue(name.path, name.message, source, 'value'),
          kind: 'pattern-name' as const,
        })),
        ...(source === undefined ? [] : duplicateKeyWarnings(source)),
        ...(config === undefined || errors.length > 0
          ? []
          : findConfigWarnings(config, root).map((w) => ({
              ...issue(w.path, w.message, source, 'value'),
              kind: w.kind,
            }))),
      ]
    : [];
  return {
    config:
      config === undefined || errors.length > 0
        ? undefined
        : brandConfig(config, {
            ...(source === undefined ? jsonCopy(root) : { raw: root }),
            mistakes: likelyConfigMistakes(
              root as object,
              config,
              source === undefined ? undefined : placeIn(source, file),
            ),
          }),
    errors,
    warnings,
  };
}

function issue(
  path: JsonPath,
  message: string,
  source: JsonSource | undefined,
  target: 'value' | 'key',
): ServiceConfigIssue {
  if (source === undefined) {
    return { path: formatJsonPath(path), message };
  }
  const { line, column } = source.locate(path, target);
  return { path: formatJsonPath(path), message, line, column };
}

/** Where a path of JSON text is written, for a warning: ` (at file:line:column)`, or the line and column alone. */
function placeIn(source: JsonSource, file: string | undefined) {
  return (path: JsonPath, target: 'key' | 'value'): string => {
    const { line, column } = source.locate(path, target);
    return file === undefined ? ` (at line ${line}, column ${column})` : ` (at ${file}:${line}:${column})`;
  };
}

/** A key written twice in one object, located at its last occurrence (the one that counts). */
function duplicateKeyWarnings(source: JsonSource): KindedIssue[] {
  return source
    .duplicateKeys()
    .sort((a, b) => a.last.offset - b.last.offset)
    .map(({ path, ignored, last }) => ({
      path: formatJsonPath(path),
      message: duplicateKeyMessage(ignored),
      line: last.line,
      column: last.column,
      kind: 'duplicate-key' as const,
    }));
}

/**
 * A copy of a JSON value handed in as an object (the caller may change theirs later), or why it is not JSON (a
 * cycle, a BigInt): createChannelOptions then says so.
 */
function jsonCopy(value: unknown): { raw: unknown; notJson?: string } {
  try {
    return { raw: JSON.parse(JSON.stringify(value)) as unknown };
  } catch (error) {
    return { raw: undefined, notJson: errorMessage(error) };
  }
}

/**
 * Unknown fields close to a known one, keyed by the path the known one would have: an error about a missing
 * `retryableStatusCodes` then also names the `retryableStatusCode` that was written instead.
 */
function misspellingsByPath(root: unknown): Map<string, string> {
  const byPath = new Map<string, string>();
  for (const field of findUnknownFields(root)) {
    if (field.suggestion !== undefined && !hasField(root, field.path.slice(0, -1), field.suggestion)) {
      byPath.set(formatJsonPath([...field.path.slice(0, -1), field.suggestion]), field.key);
    }
  }
  return byPath;
}

function withMisspelling(message: string, written: string | undefined): string {
  return written === undefined ? message : `${message} (the config has "${written}": a misspelling?)`;
}

/** Whether the object at `path` in `root` has its own field `key`. */
function hasField(root: unknown, path: JsonPath, key: string): boolean {
  let value = root;
  for (const step of path) {
    value = (value as Record<string | number, unknown> | null | undefined)?.[step];
  }
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key);
}

/** `a Buffer`, `a Uint8Array`, `an ArrayBuffer`...: what bytes `value` is, or undefined when it is not bytes. */
function bytesKind(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  if (!ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer)) {
    return undefined;
  }
  const name = Buffer.isBuffer(value) ? 'Buffer' : (value.constructor?.name ?? 'ArrayBuffer view');
  return `${/^[AEIO]/.test(name) ? 'an' : 'a'} ${name}`;
}
