/**
 * Validation and normalization of gRPC service configs (the parts A6 relies on).
 *
 * Known fields are checked strictly and any invalid one rejects the whole config; unknown fields are ignored.
 * `null` is treated like an absent field, as proto3 JSON does.
 */

import { parseDuration } from './duration.js';
import { describeValue, ServiceConfigError } from './service-config-error.js';
import { parseStatusCode } from './status-codes.js';
import type {
  CallPolicy,
  HedgingPolicy,
  MethodConfig,
  MethodName,
  RetryPolicy,
  RetryThrottlingConfig,
  ServiceConfig,
} from './types.js';

type JsonObject = Readonly<Record<string, unknown>>;

/** Where each name was first seen, keyed by its normalized (service, method) pair. */
type SeenNames = Map<string, string>;

/**
 * Brand on every config returned by {@link parseServiceConfig} (a non-enumerable property set to `true`), so that
 * code in any copy of this package can tell a normalized config from raw service-config JSON.
 */
export const NORMALIZED_SERVICE_CONFIG: unique symbol = Symbol.for(
  'grpc-retry-hedging.normalized-service-config',
);

/** Whether `value` was returned by `parseServiceConfig` (of this or another copy of the package). */
export function isNormalizedServiceConfig(value: unknown): value is ServiceConfig {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [NORMALIZED_SERVICE_CONFIG]?: unknown })[NORMALIZED_SERVICE_CONFIG] === true
  );
}

/** Largest allowed `retryThrottling.maxTokens` (A6). */
const MAX_THROTTLING_TOKENS = 1000;

/**
 * Parses and validates a service config.
 *
 * @param input JSON text, or an already parsed JSON value. A config this function returned is returned as is.
 * @returns The normalized config (durations in ms, numeric status codes, names without empty parts), deeply frozen
 *   and branded with {@link NORMALIZED_SERVICE_CONFIG}.
 * @throws ServiceConfigError naming the JSON path of the first invalid value, or, for JSON text that does not
 *   parse, the line, column and position of the syntax error (with path ``).
 */
export function parseServiceConfig(input: string | object): ServiceConfig {
  if (isNormalizedServiceConfig(input)) {
    return input;
  }
  const root = typeof input === 'string' ? parseJsonText(input) : input;
  if (!isJsonObject(root)) {
    throw new ServiceConfigError('', `a service config must be a JSON object, got ${describeValue(root)}`);
  }
  const config = parseRoot(root);
  Object.defineProperty(config, NORMALIZED_SERVICE_CONFIG, { value: true, enumerable: false });
  return deepFreeze(config);
}

function parseRoot(root: JsonObject): ServiceConfig {
  const lbPolicy = root.loadBalancingPolicy;
  if (isPresent(lbPolicy) && typeof lbPolicy !== 'string') {
    throw new ServiceConfigError('loadBalancingPolicy', `must be a string, got ${describeValue(lbPolicy)}`);
  }
  const methodConfig = parseMethodConfigList(root.methodConfig, 'methodConfig');
  const throttling = root.retryThrottling;
  if (!isPresent(throttling)) {
    return { methodConfig };
  }
  return { methodConfig, retryThrottling: parseRetryThrottling(throttling, 'retryThrottling') };
}

function parseRetryThrottling(value: unknown, path: string): RetryThrottlingConfig {
  const obj = requireObject(value, path);
  const maxTokens = obj.maxTokens;
  if (!isInteger(maxTokens) || maxTokens <= 0 || maxTokens > MAX_THROTTLING_TOKENS) {
    throw new ServiceConfigError(
      `${path}.maxTokens`,
      `must be an integer greater than 0 and at most ${MAX_THROTTLING_TOKENS}, got ${describeValue(maxTokens)}`,
    );
  }
  return { maxTokens, tokenRatio: parseTokenRatio(obj.tokenRatio, `${path}.tokenRatio`) };
}

/** A6: decimals beyond the third are ignored; the epsilon keeps 0.57 (569.999... × 1e-3) at 0.57. */
function parseTokenRatio(value: unknown, path: string): number {
  if (!isFiniteNumber(value) || value <= 0) {
    throw new ServiceConfigError(path, `must be a number greater than 0, got ${describeValue(value)}`);
  }
  // Beyond 2^53 thousandths there are no decimals left to drop (and ×1000 may overflow to Infinity).
  const scaled = value * 1000;
  const truncated = scaled < 2 ** 53 ? Math.floor(scaled + 1e-9) / 1000 : value;
  if (truncated <= 0) {
    throw new ServiceConfigError(
      path,
      `must be at least 0.001 (decimals beyond the third are dropped), got ${describeValue(value)}`,
    );
  }
  return truncated;
}

function parseMethodConfigList(value: unknown, path: string): MethodConfig[] {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    throw new ServiceConfigError(path, `must be an array, got ${describeValue(value)}`);
  }
  const seen: SeenNames = new Map();
  return value.map((entry, index) => parseMethodConfigEntry(entry, `${path}[${index}]`, seen));
}

function parseMethodConfigEntry(value: unknown, path: string, seen: SeenNames): MethodConfig {
  const entry = requireObject(value, path);
  const name = parseNameList(entry.name, `${path}.name`, seen);
  checkEntryExtras(entry, path);
  const hasRetry = isPresent(entry.retryPolicy);
  const hasHedging = isPresent(entry.hedgingPolicy);
  if (hasRetry && hasHedging) {
    throw new ServiceConfigError(path, 'must not have both retryPolicy and hedgingPolicy');
  }
  const result: { -readonly [K in keyof MethodConfig]: MethodConfig[K] } = { name };
  if (hasRetry) {
    result.retryPolicy = parseRetryPolicy(entry.retryPolicy, `${path}.retryPolicy`);
  }
  if (hasHedging) {
    result.hedgingPolicy = parseHedgingPolicy(entry.hedgingPolicy, `${path}.hedgingPolicy`);
  }
  if (isPresent(entry.timeout)) {
    result.timeoutMs = parseDurationAtLeastZero(entry.timeout, `${path}.timeout`);
  }
  if (isPresent(entry.waitForReady)) {
    if (typeof entry.waitForReady !== 'boolean') {
      throw new ServiceConfigError(
        `${path}.waitForReady`,
        `must be true or false, got ${describeValue(entry.waitForReady)}`,
      );
    }
    result.waitForReady = entry.waitForReady;
  }
  return result;
}

/** Known fields this package does not use but still validates. */
function checkEntryExtras(entry: JsonObject, path: string): void {
  for (const field of ['maxRequestMessageBytes', 'maxResponseMessageBytes'] as const) {
    const value = entry[field];
    if (isPresent(value) && !isByteCount(value)) {
      throw new ServiceConfigError(
        `${path}.${field}`,
        `must be a non-negative integer (a number or a decimal string), got ${describeValue(value)}`,
      );
    }
  }
}

function isByteCount(value: unknown): boolean {
  return (isInteger(value) && value >= 0) || (typeof value === 'string' && /^\d+$/.test(value));
}

function parseNameList(value: unknown, path: string, seen: SeenNames): MethodName[] {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    throw new ServiceConfigError(
      path,
      `must be an array of {service, method} objects, got ${describeValue(value)}`,
    );
  }
  return value.map((item, index) => {
    const itemPath = `${path}[${index}]`;
    const name = parseName(item, itemPath);
    const key = JSON.stringify([name.service ?? '', name.method ?? '']);
    const firstPath = seen.get(key);
    if (firstPath !== undefined) {
      throw new ServiceConfigError(
        itemPath,
        `duplicate name ${describeName(name)}, already used at ${firstPath}`,
      );
    }
    seen.set(key, itemPath);
    return name;
  });
}

function parseName(value: unknown, path: string): MethodName {
  const obj = requireObject(value, path, 'an object with optional "service" and "method" strings');
  const service = parseNamePart(obj.service, `${path}.service`);
  const method = parseNamePart(obj.method, `${path}.method`);
  if (method !== undefined && service === undefined) {
    throw new ServiceConfigError(
      path,
      `names method "${method}" without a service; a method needs its service`,
    );
  }
  if (service === undefined) {
    return {};
  }
  return method === undefined ? { service } : { service, method };
}

/** Empty, null and absent all mean "unset". */
function parseNamePart(value: unknown, path: string): string | undefined {
  if (!isPresent(value) || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new ServiceConfigError(path, `must be a string, got ${describeValue(value)}`);
  }
  return value;
}

function describeName(name: MethodName): string {
  if (name.service === undefined) {
    return '{} (the default for every method)';
  }
  return name.method === undefined ? `${name.service}/*` : `${name.service}/${name.method}`;
}

/**
 * Parses a single policy in service-config form, `{ "retryPolicy": {...} }` or `{ "hedgingPolicy": {...} }`, with
 * the same rules as inside a methodConfig entry (used for per-call overrides).
 *
 * @param path JSON path prefix for error messages (default `policy`).
 * @throws ServiceConfigError naming the path of the invalid value.
 */
export function parseCallPolicy(input: unknown, path = 'policy'): CallPolicy {
  const obj = requireObject(input, path, 'an object with retryPolicy or hedgingPolicy');
  const hasRetry = isPresent(obj.retryPolicy);
  const hasHedging = isPresent(obj.hedgingPolicy);
  if (hasRetry === hasHedging) {
    throw new ServiceConfigError(path, 'must have exactly one of retryPolicy and hedgingPolicy');
  }
  return deepFreeze(
    hasRetry
      ? parseRetryPolicy(obj.retryPolicy, `${path}.retryPolicy`)
      : parseHedgingPolicy(obj.hedgingPolicy, `${path}.hedgingPolicy`),
  );
}

function parseRetryPolicy(value: unknown, path: string): RetryPolicy {
  const obj = requireObject(value, path);
  const perAttempt = obj.perAttemptRecvTimeout;
  const perAttemptRecvTimeoutMs = isPresent(perAttempt)
    ? parsePositiveDuration(perAttempt, `${path}.perAttemptRecvTimeout`)
    : undefined;
  const codesPath = `${path}.retryableStatusCodes`;
  return {
    kind: 'retry',
    maxAttempts: parseMaxAttempts(obj.maxAttempts, `${path}.maxAttempts`),
    initialBackoffMs: parsePositiveDuration(obj.initialBackoff, `${path}.initialBackoff`),
    maxBackoffMs: parsePositiveDuration(obj.maxBackoff, `${path}.maxBackoff`),
    backoffMultiplier: parseBackoffMultiplier(obj.backoffMultiplier, `${path}.backoffMultiplier`),
    // C-core: with a per-attempt timeout, the list may be empty (the timeout alone triggers retries).
    retryableStatusCodes:
      perAttemptRecvTimeoutMs === undefined
        ? parseRetryableCodes(obj.retryableStatusCodes, codesPath)
        : parseNonFatalCodes(obj.retryableStatusCodes, codesPath),
    ...(perAttemptRecvTimeoutMs === undefined ? {} : { perAttemptRecvTimeoutMs }),
  };
}

function parseHedgingPolicy(value: unknown, path: string): HedgingPolicy {
  const obj = requireObject(value, path);
  const delay = obj.hedgingDelay;
  return {
    kind: 'hedging',
    maxAttempts: parseMaxAttempts(obj.maxAttempts, `${path}.maxAttempts`),
    hedgingDelayMs: isPresent(delay) ? parseDurationAtLeastZero(delay, `${path}.hedgingDelay`) : 0,
    nonFatalStatusCodes: parseNonFatalCodes(obj.nonFatalStatusCodes, `${path}.nonFatalStatusCodes`),
  };
}

/** Integer > 1; values above the client limit are clamped at lookup time, not rejected. */
function parseMaxAttempts(value: unknown, path: string): number {
  if (!isInteger(value) || value <= 1) {
    throw new ServiceConfigError(path, `must be an integer greater than 1, got ${describeValue(value)}`);
  }
  return value;
}

function parseBackoffMultiplier(value: unknown, path: string): number {
  if (!isFiniteNumber(value) || value <= 0) {
    throw new ServiceConfigError(path, `must be a number greater than 0, got ${describeValue(value)}`);
  }
  return value;
}

function parsePositiveDuration(value: unknown, path: string): number {
  const ms = parseDuration(value, path);
  if (ms <= 0) {
    throw new ServiceConfigError(path, `must be a duration greater than 0, got ${describeValue(value)}`);
  }
  return ms;
}

function parseDurationAtLeastZero(value: unknown, path: string): number {
  const ms = parseDuration(value, path);
  if (ms < 0) {
    throw new ServiceConfigError(path, `must not be negative, got ${describeValue(value)}`);
  }
  return ms;
}

function parseRetryableCodes(value: unknown, path: string): number[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ServiceConfigError(
      path,
      `must be a non-empty array of status codes, got ${describeValue(value)}`,
    );
  }
  return parseCodeList(value, path);
}

function parseNonFatalCodes(value: unknown, path: string): number[] {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    throw new ServiceConfigError(path, `must be an array of status codes, got ${describeValue(value)}`);
  }
  return parseCodeList(value, path);
}

/** Parses every code; duplicates are dropped, the order of first appearance is kept. */
function parseCodeList(values: readonly unknown[], path: string): number[] {
  const codes = values.map((code, index) => parseStatusCode(code, `${path}[${index}]`));
  return [...new Set(codes)];
}

function requireObject(value: unknown, path: string, expectation = 'an object'): JsonObject {
  if (!isJsonObject(value)) {
    throw new ServiceConfigError(path, `must be ${expectation}, got ${describeValue(value)}`);
  }
  return value;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) {
      deepFreeze(child);
    }
    Object.freeze(value);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON text parsing with a located syntax error. V8's JSON.parse messages do not always carry a position (Node 20
// says only `Unexpected token '}', "..." is not valid JSON`), so on failure a small scanner finds the offending
// character itself.

function parseJsonText(text: string): unknown {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    return JSON.parse(source) as unknown;
  } catch (error) {
    const located = locateJsonSyntaxError(source) ?? fromEngineMessage(error);
    if (located === undefined) {
      throw new ServiceConfigError('', `invalid JSON: ${errorMessage(error)}`, { cause: error });
    }
    const { line, column } = lineAndColumn(source, located.position);
    throw new ServiceConfigError(
      '',
      `invalid JSON at line ${line}, column ${column} (position ${located.position}): ${located.problem}`,
      { cause: error },
    );
  }
}

interface JsonSyntaxProblem {
  /** 0-based character offset. */
  readonly position: number;
  readonly problem: string;
}

function fromEngineMessage(error: unknown): JsonSyntaxProblem | undefined {
  const match = /position (\d+)/.exec(errorMessage(error));
  return match === null ? undefined : { position: Number(match[1]), problem: errorMessage(error) };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** 1-based line and column of a character offset. */
function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: position - lastBreak };
}

class JsonScanFailure {
  constructor(
    readonly position: number,
    readonly problem: string,
  ) {}
}

interface Scanner {
  readonly text: string;
  pos: number;
}

/** Finds the first syntax error of `text`, or `undefined` when the scanner finds none (or nests too deep). */
function locateJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  const scanner: Scanner = { text, pos: 0 };
  try {
    skipWhitespace(scanner);
    scanValue(scanner);
    skipWhitespace(scanner);
    if (scanner.pos < text.length) {
      fail(scanner, 'after the end of the JSON value');
    }
    return undefined;
  } catch (error) {
    if (error instanceof JsonScanFailure) {
      return { position: error.position, problem: error.problem };
    }
    return undefined;
  }
}

function fail(scanner: Scanner, expectation: string): never {
  const char = scanner.text[scanner.pos];
  const found =
    char === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(char)}`;
  throw new JsonScanFailure(scanner.pos, `${found} ${expectation}`.trim());
}

function skipWhitespace(scanner: Scanner): void {
  while (/[ \t\n\r]/.test(scanner.text[scanner.pos] ?? '')) {
    scanner.pos++;
  }
}

function scanValue(scanner: Scanner): void {
  const char = scanner.text[scanner.pos];
  if (char === '{') {
    scanObject(scanner);
  } else if (char === '[') {
    scanArray(scanner);
  } else if (char === '"') {
    scanString(scanner);
  } else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) {
    scanNumber(scanner);
  } else if (!scanLiteral(scanner)) {
    fail(scanner, '(expected a value)');
  }
}

function scanObject(scanner: Scanner): void {
  scanner.pos++;
  skipWhitespace(scanner);
  if (scanner.text[scanner.pos] === '}') {
    scanner.pos++;
    return;
  }
  for (;;) {
    skipWhitespace(scanner);
    if (scanner.text[scanner.pos] !== '"') {
      fail(scanner, '(expected a property name in double quotes)');
    }
    scanString(scanner);
    skipWhitespace(scanner);
    expectChar(scanner, ':', '(expected ":" after a property name)');
    skipWhitespace(scanner);
    scanValue(scanner);
    skipWhitespace(scanner);
    if (scanner.text[scanner.pos] === '}') {
      scanner.pos++;
      return;
    }
    expectChar(scanner, ',', '(expected "," or "}" after a property value)');
  }
}

function scanArray(scanner: Scanner): void {
  scanner.pos++;
  skipWhitespace(scanner);
  if (scanner.text[scanner.pos] === ']') {
    scanner.pos++;
    return;
  }
  for (;;) {
    skipWhitespace(scanner);
    scanValue(scanner);
    skipWhitespace(scanner);
    if (scanner.text[scanner.pos] === ']') {
      scanner.pos++;
      return;
    }
    expectChar(scanner, ',', '(expected "," or "]" after an array element)');
  }
}

function expectChar(scanner: Scanner, char: string, expectation: string): void {
  if (scanner.text[scanner.pos] !== char) {
    fail(scanner, expectation);
  }
  scanner.pos++;
}

function scanString(scanner: Scanner): void {
  scanner.pos++;
  for (;;) {
    const char = scanner.text[scanner.pos];
    if (char === undefined) {
      fail(scanner, 'in a string (missing closing quote)');
    } else if (char === '"') {
      scanner.pos++;
      return;
    } else if (char === '\\') {
      scanEscape(scanner);
    } else if (char < ' ') {
      fail(scanner, 'in a string (control characters must be escaped)');
    } else {
      scanner.pos++;
    }
  }
}

function scanEscape(scanner: Scanner): void {
  scanner.pos++;
  const char = scanner.text[scanner.pos];
  if (char === 'u') {
    const hex = scanner.text.slice(scanner.pos + 1, scanner.pos + 5);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
      fail(scanner, 'in a string (expected four hex digits after \\u)');
    }
    scanner.pos += 5;
  } else if (char !== undefined && '"\\/bfnrt'.includes(char)) {
    scanner.pos++;
  } else {
    fail(scanner, 'after a backslash in a string (invalid escape)');
  }
}

const NUMBER_PATTERN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function scanNumber(scanner: Scanner): void {
  NUMBER_PATTERN.lastIndex = scanner.pos;
  if (!NUMBER_PATTERN.test(scanner.text)) {
    fail(scanner, '(malformed number)');
  }
  const end = NUMBER_PATTERN.lastIndex;
  const next = scanner.text[end];
  if (next !== undefined && /[0-9.eE+-]/.test(next)) {
    scanner.pos = end;
    fail(scanner, 'in a number (malformed number)');
  }
  scanner.pos = end;
}

function scanLiteral(scanner: Scanner): boolean {
  for (const word of ['true', 'false', 'null']) {
    if (scanner.text.startsWith(word, scanner.pos)) {
      scanner.pos += word.length;
      return true;
    }
  }
  return false;
}
