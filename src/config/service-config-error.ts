/**
 * Error type for invalid service configs, carrying the JSON path of the offending value.
 */

import { describeValue as describeShallow } from '../util/option-checks.js';

/**
 * Registry-wide brand, so that `isServiceConfigError` recognizes errors thrown by another copy of this package
 * (two versions installed side by side, or the CJS and ESM builds loaded together).
 */
const SERVICE_CONFIG_ERROR_BRAND: unique symbol = Symbol.for('grpc-retry-hedging.ServiceConfigError');

/**
 * One problem found in a service config. `line` and `column` (1-based) are known when the config was given as JSON
 * text; a missing field is located at its parent object.
 */
export interface ServiceConfigIssue {
  /** JSON path of the offending value, such as `methodConfig[1].retryPolicy.maxAttempts`; `` for the root. */
  readonly path: string;
  /** What is wrong, without the path: `must be an integer greater than 1, got 1`. */
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** Options of the {@link ServiceConfigError} constructor. */
export interface ServiceConfigErrorOptions {
  /** The file the config was read from; the message is then prefixed with it. */
  readonly file?: string | undefined;
  /** The underlying error (a file-system error, for instance). */
  readonly cause?: unknown;
  /**
   * Every problem found, the first of which is the one named by `path` and `detail`. Defaults to that one problem
   * alone.
   */
  readonly errors?: readonly ServiceConfigIssue[] | undefined;
}

/** The detail of an error constructed without one. */
const DEFAULT_DETAIL = 'invalid service config';

/**
 * A service config was rejected. `errors` lists every problem found; `path` and `detail` describe the first one:
 * `path` is the JSON path of the offending value, such as `methodConfig[1].retryPolicy.maxAttempts`, or `` for the
 * root (and for JSON syntax errors).
 *
 * The message's first line reads `[file[:line:column]: ][path: ]detail`, for example
 * `service-config.json:12:24: methodConfig[1].retryPolicy.maxAttempts: must be an integer greater than 1, got 1`
 * (the place as `check` prints it, and as editors and terminals link it); when there are more problems, each
 * follows on a line of its own.
 */
export class ServiceConfigError extends Error {
  /** JSON path of the offending value; `` for the root. */
  readonly path: string;
  /** What is wrong, without the file and path prefix. */
  readonly detail: string;
  /** The file the config was read from, when known. */
  readonly file?: string;
  /** Every problem found, in validation order; never empty. The first is the one `path` and `detail` name. */
  readonly errors: readonly ServiceConfigIssue[];

  /**
   * @param path JSON path of the offending value (`` for the root, and when left out).
   * @param detail What is wrong, e.g. `must be an integer greater than 1, got 1` (`invalid service config` when left
   *   out).
   * @param options Optional file name and cause.
   */
  constructor(path: string, detail: string, options: ServiceConfigErrorOptions = {}) {
    // (Called from JavaScript with nothing, the message would read "undefined: undefined".)
    const at: string = path === undefined || path === null ? '' : String(path);
    const what: string =
      detail === undefined || detail === null || detail === '' ? DEFAULT_DETAIL : String(detail);
    const given: ServiceConfigErrorOptions = options ?? {};
    const errors =
      given.errors !== undefined && given.errors.length > 0
        ? Object.freeze([...given.errors])
        : Object.freeze([{ path: at, message: what }]);
    super(
      composeMessage(at, what, given.file, errors),
      given.cause === undefined ? undefined : { cause: given.cause },
    );
    this.name = 'ServiceConfigError';
    this.path = at;
    this.detail = what;
    this.errors = errors;
    if (given.file !== undefined) {
      this.file = given.file;
    }
  }
}

Object.defineProperty(ServiceConfigError.prototype, SERVICE_CONFIG_ERROR_BRAND, {
  value: true,
  enumerable: false,
  writable: false,
});

function composeMessage(
  path: string,
  detail: string,
  file: string | undefined,
  errors: readonly ServiceConfigIssue[],
): string {
  const located = path === '' ? detail : `${path}: ${detail}`;
  const first = `${place(file, errors[0])}${located}`;
  if (errors.length <= 1) {
    return first;
  }
  const rest = errors
    .slice(1)
    .map((issue) => `    ${place(file, issue)}${issue.path === '' ? '' : `${issue.path}: `}${issue.message}`);
  return `${first}\n  and ${errors.length - 1} more:\n${rest.join('\n')}`;
}

/**
 * Where in a file a problem is, as a compiler names it: `file:line:column: ` (as `check` prints it), `file: ` when
 * the line is unknown, nothing without a file (the issue's `line` and `column` say it).
 */
function place(file: string | undefined, issue: ServiceConfigIssue | undefined): string {
  if (file === undefined) {
    return '';
  }
  return issue?.line === undefined || issue.column === undefined
    ? `${file}: `
    : `${file}:${issue.line}:${issue.column}: `;
}

/**
 * Builds the error thrown for a list of problems (at least one), naming the first in `path`, `detail` and the
 * message's first line.
 *
 * @param issues Every problem found, in order.
 * @param options The file and cause, as for the constructor.
 */
export function serviceConfigErrorOf(
  issues: readonly ServiceConfigIssue[],
  options: Omit<ServiceConfigErrorOptions, 'errors'> = {},
): ServiceConfigError {
  const [first] = issues;
  if (first === undefined) {
    throw new RangeError('serviceConfigErrorOf: needs at least one issue');
  }
  return new ServiceConfigError(first.path, first.message, { ...options, errors: issues });
}

/**
 * Whether `e` is a {@link ServiceConfigError}, including one created by another copy of this package.
 * Plain objects and other errors, even with a `path` property, are not.
 */
export function isServiceConfigError(e: unknown): e is ServiceConfigError {
  if (e instanceof ServiceConfigError) {
    return true;
  }
  if (typeof e !== 'object' || e === null) {
    return false;
  }
  const candidate = e as { [SERVICE_CONFIG_ERROR_BRAND]?: unknown; path?: unknown; message?: unknown };
  return (
    candidate[SERVICE_CONFIG_ERROR_BRAND] === true &&
    typeof candidate.path === 'string' &&
    typeof candidate.message === 'string'
  );
}

/**
 * A value as an error message shows it: JSON, cut to 60 characters (as `describeValue` of util/option-checks.ts
 * does), and readable for a value nested too deep for `JSON.stringify`, which the message then shows the start of
 * rather than `[object Array]`.
 */
export function describeValue(value: unknown): string {
  const text = describeShallow(value);
  if (typeof value !== 'object' || value === null || !text.startsWith('[object ')) {
    return text;
  }
  const start = boundedJson(value, { left: 61 });
  return start.length > 60 ? `${start.slice(0, 57)}...` : start;
}

/**
 * JSON text of `value` up to about `budget.left` characters: the start of what `JSON.stringify` would give, built
 * without recursing past the budget (so at any depth).
 */
function boundedJson(value: unknown, budget: { left: number }): string {
  if (budget.left <= 0) {
    return '';
  }
  if (typeof value !== 'object' || value === null) {
    const text = JSON.stringify(value) ?? 'null';
    budget.left -= text.length;
    return text;
  }
  const isArray = Array.isArray(value);
  let text = isArray ? '[' : '{';
  budget.left -= 1;
  const entries = isArray ? value.entries() : Object.entries(value as object).values();
  let first = true;
  for (const [key, item] of entries) {
    if (budget.left <= 0) {
      return text;
    }
    const prefix = `${first ? '' : ','}${isArray ? '' : `${JSON.stringify(key)}:`}`;
    budget.left -= prefix.length;
    text += prefix + boundedJson(item, budget);
    first = false;
  }
  budget.left -= 1;
  return `${text}${isArray ? ']' : '}'}`;
}
