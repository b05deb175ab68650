/**
 * The validation rules of a service config (the parts A6 relies on), collecting every problem instead of stopping
 * at the first.
 *
 * Known fields are checked strictly and any invalid one rejects the whole config; unknown fields are ignored.
 * `null` is treated like an absent field, as proto3 JSON does.
 */

import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { findLoadBalancingConfigProblems, findMessageLimitProblems } from './channel-rules.js';
import { readDuration } from './duration.js';
import { formatJsonPath, type JsonPath } from './json-path.js';
import { describeValue } from './service-config-error.js';
import { readStatusCode } from './status-codes.js';
import { truncateTokenRatio } from './token-ratio.js';
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

/** A problem at a path, before it is located in the text. */
export interface ConfigProblem {
  readonly path: JsonPath;
  readonly message: string;
}

/** Collects problems; every rule reports here and returns `undefined` for an invalid value. */
export class ConfigProblems {
  readonly list: ConfigProblem[] = [];

  /** Records a problem; returns `undefined` so that rules can `return problems.add(...)`. */
  add(path: JsonPath, message: string): undefined {
    this.list.push({ path, message });
    return undefined;
  }
}

/** Largest allowed `retryThrottling.maxTokens` (A6). */
const MAX_THROTTLING_TOKENS = 1000;

/** Where each name was first seen, keyed by its normalized (service, method) pair. */
type SeenNames = Map<string, JsonPath>;

/** What an array given as the whole config most likely is, and how to write it as a service config. */
function rootShapeHint(root: unknown): string {
  if (!Array.isArray(root) || root.length === 0 || !root.every(isJsonObject)) {
    return '';
  }
  if (root.every((item) => 'serviceConfig' in item)) {
    return '; this is a grpc_config choice list (as a DNS TXT record holds it): pass the serviceConfig of one choice';
  }
  if (root.every((item) => 'name' in item)) {
    return '; this is a list of methodConfig entries: write it as {"methodConfig": [...]}';
  }
  return '';
}

/**
 * Validates a parsed service config, reporting every problem to `problems`.
 *
 * @returns The normalized config (not yet frozen), or `undefined` when any problem was found.
 */
export function readServiceConfig(root: unknown, problems: ConfigProblems): ServiceConfig | undefined {
  if (!isJsonObject(root)) {
    return problems.add(
      [],
      `a service config must be a JSON object, got ${describeValue(root)}${rootShapeHint(root)}`,
    );
  }
  const before = problems.list.length;
  const lbPolicy = root.loadBalancingPolicy;
  if (isPresent(lbPolicy) && typeof lbPolicy !== 'string') {
    problems.add(['loadBalancingPolicy'], `must be a string, got ${describeValue(lbPolicy)}`);
  }
  // What createChannelOptions (and grpc-js) would reject.
  for (const problem of findLoadBalancingConfigProblems(root.loadBalancingConfig)) {
    problems.add(problem.path, problem.message);
  }
  const methodConfig = readMethodConfigList(root.methodConfig, ['methodConfig'], problems);
  const throttling = isPresent(root.retryThrottling)
    ? readRetryThrottling(root.retryThrottling, ['retryThrottling'], problems)
    : undefined;
  if (problems.list.length > before || methodConfig === undefined) {
    return undefined;
  }
  return throttling === undefined ? { methodConfig } : { methodConfig, retryThrottling: throttling };
}

/**
 * Validates a single policy in service-config form, `{ "retryPolicy": {...} }` or `{ "hedgingPolicy": {...} }`.
 *
 * @returns The normalized policy, or `undefined` when any problem was found.
 */
export function readCallPolicy(
  input: unknown,
  path: JsonPath,
  problems: ConfigProblems,
): CallPolicy | undefined {
  const obj = requireObject(input, path, problems, 'an object with retryPolicy or hedgingPolicy');
  if (obj === undefined) {
    return undefined;
  }
  const hasRetry = isPresent(obj.retryPolicy);
  const hasHedging = isPresent(obj.hedgingPolicy);
  if (hasRetry === hasHedging) {
    return problems.add(path, 'must have exactly one of retryPolicy and hedgingPolicy');
  }
  return hasRetry
    ? readRetryPolicy(obj.retryPolicy, [...path, 'retryPolicy'], problems)
    : readHedgingPolicy(obj.hedgingPolicy, [...path, 'hedgingPolicy'], problems);
}

function readRetryThrottling(
  value: unknown,
  path: JsonPath,
  problems: ConfigProblems,
): RetryThrottlingConfig | undefined {
  const obj = requireObject(value, path, problems);
  if (obj === undefined) {
    return undefined;
  }
  const maxTokens = obj.maxTokens;
  const maxTokensOk = isInteger(maxTokens) && maxTokens > 0 && maxTokens <= MAX_THROTTLING_TOKENS;
  if (!maxTokensOk) {
    problems.add(
      [...path, 'maxTokens'],
      `must be an integer greater than 0 and at most ${MAX_THROTTLING_TOKENS}, got ${describeValue(maxTokens)}`,
    );
  }
  const tokenRatio = readTokenRatio(obj.tokenRatio, [...path, 'tokenRatio'], problems);
  return maxTokensOk && tokenRatio !== undefined ? { maxTokens, tokenRatio } : undefined;
}

function readTokenRatio(value: unknown, path: JsonPath, problems: ConfigProblems): number | undefined {
  if (!isFiniteNumber(value) || value <= 0) {
    return problems.add(path, `must be ${positiveNumber(value)}, got ${describeValue(value)}`);
  }
  const truncated = truncateTokenRatio(value);
  if (truncated <= 0) {
    return problems.add(
      path,
      `must be at least 0.001 (decimals beyond the third are dropped), got ${describeValue(value)}`,
    );
  }
  return truncated;
}

function readMethodConfigList(
  value: unknown,
  path: JsonPath,
  problems: ConfigProblems,
): MethodConfig[] | undefined {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    return problems.add(path, `must be an array, got ${describeValue(value)}`);
  }
  const seen: SeenNames = new Map();
  const entries = value.map((entry, index) => readMethodConfigEntry(entry, [...path, index], seen, problems));
  return entries.every((entry) => entry !== undefined) ? (entries as MethodConfig[]) : undefined;
}

function readMethodConfigEntry(
  value: unknown,
  path: JsonPath,
  seen: SeenNames,
  problems: ConfigProblems,
): MethodConfig | undefined {
  const entry = requireObject(value, path, problems);
  if (entry === undefined) {
    return undefined;
  }
  const before = problems.list.length;
  const name = readNameList(entry.name, [...path, 'name'], seen, problems);
  checkMessageSizeLimits(entry, path, problems);
  const hasRetry = isPresent(entry.retryPolicy);
  const hasHedging = isPresent(entry.hedgingPolicy);
  if (hasRetry && hasHedging) {
    problems.add(
      path,
      'must not have both retryPolicy and hedgingPolicy: a method runs under one policy; give the methods that should hedge an entry of their own (the most specific name wins)',
    );
  }
  const retryPolicy = hasRetry
    ? readRetryPolicy(entry.retryPolicy, [...path, 'retryPolicy'], problems)
    : undefined;
  const hedgingPolicy = hasHedging
    ? readHedgingPolicy(entry.hedgingPolicy, [...path, 'hedgingPolicy'], problems)
    : undefined;
  const timeoutMs = isPresent(entry.timeout)
    ? readDurationAtLeastZero(entry.timeout, [...path, 'timeout'], problems)
    : undefined;
  const waitForReady = entry.waitForReady;
  if (isPresent(waitForReady) && typeof waitForReady !== 'boolean') {
    problems.add(
      [...path, 'waitForReady'],
      `must be true or false, got ${describeValue(waitForReady)}${wrongTypeHint(waitForReady, 'boolean')}`,
    );
  }
  if (problems.list.length > before || name === undefined) {
    return undefined;
  }
  const result: { -readonly [K in keyof MethodConfig]: MethodConfig[K] } = { name };
  if (retryPolicy !== undefined) {
    result.retryPolicy = retryPolicy;
  }
  if (hedgingPolicy !== undefined) {
    result.hedgingPolicy = hedgingPolicy;
  }
  if (timeoutMs !== undefined) {
    result.timeoutMs = timeoutMs;
  }
  if (typeof waitForReady === 'boolean') {
    result.waitForReady = waitForReady;
  }
  return result;
}

/** Known fields this package does not use but still validates, as createChannelOptions reads them. */
function checkMessageSizeLimits(entry: JsonObject, path: JsonPath, problems: ConfigProblems): void {
  for (const problem of findMessageLimitProblems(entry, path)) {
    problems.add(problem.path, problem.message);
  }
}

function readNameList(
  value: unknown,
  path: JsonPath,
  seen: SeenNames,
  problems: ConfigProblems,
): MethodName[] | undefined {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    return problems.add(path, `must be an array of {service, method} objects, got ${describeValue(value)}`);
  }
  const names = value.map((item, index) => {
    const itemPath = [...path, index];
    const name = readName(item, itemPath, problems);
    if (name === undefined) {
      return undefined;
    }
    const key = JSON.stringify([name.service ?? '', name.method ?? '']);
    const firstPath = seen.get(key);
    if (firstPath !== undefined) {
      return problems.add(
        itemPath,
        `duplicate name ${describeName(name)}, already used at ${formatJsonPath(firstPath)}`,
      );
    }
    seen.set(key, itemPath);
    return name;
  });
  return names.every((name) => name !== undefined) ? (names as MethodName[]) : undefined;
}

function readName(value: unknown, path: JsonPath, problems: ConfigProblems): MethodName | undefined {
  const obj = requireObject(value, path, problems, 'an object with optional "service" and "method" strings');
  if (obj === undefined) {
    return undefined;
  }
  const service = readNamePart(obj.service, [...path, 'service'], problems);
  const method = readNamePart(obj.method, [...path, 'method'], problems);
  if (service === false || method === false) {
    return undefined;
  }
  if (method !== undefined && service === undefined) {
    return problems.add(path, `names method "${method}" without a service; a method needs its service`);
  }
  if (service === undefined) {
    return {};
  }
  return method === undefined ? { service } : { service, method };
}

/** Empty, null and absent all mean "unset" (`undefined`); `false` marks an invalid value. */
function readNamePart(value: unknown, path: JsonPath, problems: ConfigProblems): string | undefined | false {
  if (!isPresent(value) || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.add(path, `must be a string, got ${describeValue(value)}`);
    return false;
  }
  return value;
}

function describeName(name: MethodName): string {
  if (name.service === undefined) {
    return '{} (the default for every method)';
  }
  return name.method === undefined ? `${name.service}/*` : `${name.service}/${name.method}`;
}

function readRetryPolicy(value: unknown, path: JsonPath, problems: ConfigProblems): RetryPolicy | undefined {
  const obj = requireObject(value, path, problems);
  if (obj === undefined) {
    return undefined;
  }
  const maxAttempts = readMaxAttempts(obj.maxAttempts, [...path, 'maxAttempts'], problems);
  const initialBackoffMs = readPositiveDuration(obj.initialBackoff, [...path, 'initialBackoff'], problems);
  const maxBackoffMs = readPositiveDuration(obj.maxBackoff, [...path, 'maxBackoff'], problems);
  const backoffMultiplier = readBackoffMultiplier(
    obj.backoffMultiplier,
    [...path, 'backoffMultiplier'],
    problems,
  );
  const perAttemptRecvTimeoutMs = isPresent(obj.perAttemptRecvTimeout)
    ? readPositiveDuration(obj.perAttemptRecvTimeout, [...path, 'perAttemptRecvTimeout'], problems)
    : undefined;
  const codes = readRetryableCodes(
    obj.retryableStatusCodes,
    [...path, 'retryableStatusCodes'],
    isPresent(obj.perAttemptRecvTimeout),
    problems,
  );
  if (
    maxAttempts === undefined ||
    initialBackoffMs === undefined ||
    maxBackoffMs === undefined ||
    backoffMultiplier === undefined ||
    codes === undefined ||
    (isPresent(obj.perAttemptRecvTimeout) && perAttemptRecvTimeoutMs === undefined)
  ) {
    return undefined;
  }
  const policy: RetryPolicy = {
    kind: 'retry',
    maxAttempts,
    initialBackoffMs,
    maxBackoffMs,
    backoffMultiplier,
    retryableStatusCodes: codes,
  };
  return perAttemptRecvTimeoutMs === undefined ? policy : { ...policy, perAttemptRecvTimeoutMs };
}

function readHedgingPolicy(
  value: unknown,
  path: JsonPath,
  problems: ConfigProblems,
): HedgingPolicy | undefined {
  const obj = requireObject(value, path, problems);
  if (obj === undefined) {
    return undefined;
  }
  const maxAttempts = readMaxAttempts(obj.maxAttempts, [...path, 'maxAttempts'], problems);
  const delay = obj.hedgingDelay;
  const hedgingDelayMs = isPresent(delay)
    ? readDurationAtLeastZero(delay, [...path, 'hedgingDelay'], problems)
    : 0;
  const codes = readNonFatalCodes(obj.nonFatalStatusCodes, [...path, 'nonFatalStatusCodes'], problems);
  if (maxAttempts === undefined || hedgingDelayMs === undefined || codes === undefined) {
    return undefined;
  }
  return { kind: 'hedging', maxAttempts, hedgingDelayMs, nonFatalStatusCodes: codes };
}

/** Integer > 1; values above the client limit are clamped at lookup time, not rejected. */
function readMaxAttempts(value: unknown, path: JsonPath, problems: ConfigProblems): number | undefined {
  if (!isInteger(value) || value <= 1) {
    return problems.add(
      path,
      `must be an integer greater than 1, got ${describeValue(value)}${maxAttemptsHint(value, path)}`,
    );
  }
  return value;
}

/**
 * What a maxAttempts that is not one likely meant: one attempt (retries off), a number written as text, or, left
 * out of a retry policy, a config written for Google's generated API clients.
 */
function maxAttemptsHint(value: unknown, path: JsonPath): string {
  if (value === undefined && path.at(-2) === 'retryPolicy') {
    // googleapis' *_grpc_service_config.json files: 113 of the 467 at its head of August 2026 leave it out (grpc-js
    // and this parser accept and reject the same files, all 467).
    return '; A6 requires it (grpc-js rejects such a config too). Service configs written for Google\'s generated API clients (googleapis\' *_grpc_service_config.json) leave it out, as those clients bound retries by the timeout instead: add "maxAttempts" (A6 caps it at 5)';
  }
  if (value === 1 || value === 0) {
    const policy = path.at(-2) === 'hedgingPolicy' ? 'hedgingPolicy' : 'retryPolicy';
    return `; for a single attempt, leave the ${policy} out (without a policy, a call makes one attempt)`;
  }
  return wrongTypeHint(value, 'number');
}

function readBackoffMultiplier(value: unknown, path: JsonPath, problems: ConfigProblems): number | undefined {
  if (!isFiniteNumber(value) || value <= 0) {
    return problems.add(path, `must be ${positiveNumber(value)}, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * What a number > 0 must be, said so that it does not contradict the value: Infinity (what `JSON.parse` makes of a
 * number too large for a double, 1e400) is greater than 0, but not finite.
 */
function positiveNumber(value: unknown): string {
  return value === Number.POSITIVE_INFINITY ? 'a finite number greater than 0' : 'a number greater than 0';
}

function readPositiveDuration(value: unknown, path: JsonPath, problems: ConfigProblems): number | undefined {
  const ms = readDuration(value);
  if (typeof ms === 'string') {
    return problems.add(path, ms);
  }
  if (ms <= 0) {
    return problems.add(path, `must be a duration greater than 0, got ${describeValue(value)}`);
  }
  return ms;
}

function readDurationAtLeastZero(
  value: unknown,
  path: JsonPath,
  problems: ConfigProblems,
): number | undefined {
  const ms = readDuration(value);
  if (typeof ms === 'string') {
    return problems.add(path, ms);
  }
  if (ms < 0) {
    return problems.add(path, `must not be negative, got ${describeValue(value)}`);
  }
  return ms;
}

/** Non-empty, unless the policy has a perAttemptRecvTimeout (gRPC C-core's rule): then it may be empty or absent. */
function readRetryableCodes(
  value: unknown,
  path: JsonPath,
  hasPerAttemptTimeout: boolean,
  problems: ConfigProblems,
): number[] | undefined {
  if (hasPerAttemptTimeout) {
    if (!isPresent(value)) {
      return [];
    }
    if (!Array.isArray(value)) {
      return problems.add(path, `must be an array of status codes, got ${describeValue(value)}`);
    }
    return readCodeList(value, path, problems);
  }
  if (!Array.isArray(value) || value.length === 0) {
    return problems.add(
      path,
      `must be a non-empty array of status codes (it may be empty only with a perAttemptRecvTimeout), ` +
        `got ${describeValue(value)}`,
    );
  }
  return readCodeList(value, path, problems);
}

function readNonFatalCodes(value: unknown, path: JsonPath, problems: ConfigProblems): number[] | undefined {
  if (!isPresent(value)) {
    return [];
  }
  if (!Array.isArray(value)) {
    return problems.add(path, `must be an array of status codes, got ${describeValue(value)}`);
  }
  return readCodeList(value, path, problems);
}

/** Reads every code; duplicates are dropped, the order of first appearance is kept. */
function readCodeList(
  values: readonly unknown[],
  path: JsonPath,
  problems: ConfigProblems,
): number[] | undefined {
  const codes = values.map((value, index) => {
    const code = readStatusCode(value);
    return typeof code === 'string' ? problems.add([...path, index], code) : code;
  });
  return codes.every((code) => code !== undefined) ? [...new Set(codes as number[])] : undefined;
}

function requireObject(
  value: unknown,
  path: JsonPath,
  problems: ConfigProblems,
  expectation = 'an object',
): JsonObject | undefined {
  if (!isJsonObject(value)) {
    return problems.add(path, `must be ${expectation}, got ${describeValue(value)}`);
  }
  return value;
}

/** Whether a value is a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Absent and `null` both mean "not set". */
export function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
