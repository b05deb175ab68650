/**
 * `grpc-retry-hedging check <config.json> [--proto a.proto ...] [--json] [--max-attempts-limit N]`:
 * validates a service config and explains what each policy does.
 */

import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { clampPolicy } from '../config/method-policy.js';
import { parseServiceConfig } from '../config/parse-service-config.js';
import { isServiceConfigError, ServiceConfigError } from '../config/service-config-error.js';
import { parseStatusCode, statusCodeName } from '../config/status-codes.js';
import type {
  HedgingPolicy,
  MethodConfig,
  MethodName,
  RetryPolicy,
  RetryThrottlingConfig,
  ServiceConfig,
} from '../config/types.js';
import { DEFAULT_MAX_ATTEMPTS_LIMIT } from '../config/types.js';
import {
  formatDuration,
  formatDurationSum,
  formatMethodName,
  formatNumber,
  formatStatusCodes,
  indentLines,
  plural,
} from './format.js';

/** Where `runCheck` writes. Each call receives complete text ending in a newline. */
export interface CheckIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

/** Exit codes of the check command. */
export const CHECK_EXIT = { valid: 0, invalid: 1, usage: 2 } as const;

/** Upper bound of the A6 jitter factor applied to each backoff. */
const MAX_JITTER = 1.2;

/** A retry policy as the report describes it. Durations in ms; codes by name. */
export interface RetryPolicyReport {
  readonly kind: 'retry';
  /** maxAttempts as written in the config. */
  readonly configuredMaxAttempts: number;
  /** maxAttempts after clamping to the attempt limit. */
  readonly maxAttempts: number;
  readonly clamped: boolean;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly retryableStatusCodes: readonly string[];
  /** Backoff before retry n (n = 1..maxAttempts-1), capped, before jitter. */
  readonly backoffsMs: readonly number[];
  /** Longest total time a call can wait between attempts: sum of backoffsMs × 1.2 (pushback ignored). */
  readonly worstCaseWaitMs: number;
}

/** A hedging policy as the report describes it. */
export interface HedgingPolicyReport {
  readonly kind: 'hedging';
  readonly configuredMaxAttempts: number;
  readonly maxAttempts: number;
  readonly clamped: boolean;
  readonly hedgingDelayMs: number;
  readonly nonFatalStatusCodes: readonly string[];
  /** When the last hedge is sent, from the start of the call: (maxAttempts - 1) × hedgingDelay. */
  readonly lastHedgeAtMs: number;
}

/** One methodConfig entry of the report. */
export interface EntryReport {
  readonly index: number;
  /** Names as `pkg.Service/Method`, `pkg.Service/*` or `*`. */
  readonly names: readonly string[];
  readonly policy: RetryPolicyReport | HedgingPolicyReport | null;
  readonly timeoutMs?: number;
  readonly waitForReady?: boolean;
}

/** retryThrottling as the report describes it. */
export interface ThrottlingReport {
  readonly maxTokens: number;
  readonly tokenRatio: number;
  /** Retries and hedges are allowed only while tokens exceed this (maxTokens / 2). */
  readonly thresholdTokens: number;
  /** Consecutive failures that take full tokens down to the threshold. */
  readonly failuresToThreshold: number;
}

/** A non-fatal finding, such as a config name that matches nothing in the protos. */
export interface CheckWarning {
  readonly path: string;
  readonly message: string;
}

/** The whole result, as printed by `--json`. */
export interface CheckReport {
  readonly valid: boolean;
  readonly file: string;
  readonly maxAttemptsLimit: number;
  readonly entries: readonly EntryReport[];
  readonly throttling: ThrottlingReport | null;
  readonly warnings: readonly CheckWarning[];
  readonly error?: { readonly path: string; readonly message: string };
}

interface CheckOptions {
  readonly configFile: string;
  readonly protoFiles: readonly string[];
  readonly json: boolean;
  readonly maxAttemptsLimit: number;
}

type ParsedArgs =
  | { readonly kind: 'run'; readonly options: CheckOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly problem: string };

/** Services found in the protos: fully qualified name → method names. */
type ProtoServices = ReadonlyMap<string, ReadonlySet<string>>;

/** Usage text of the check command. */
export const CHECK_USAGE = `Usage: grpc-retry-hedging check <config.json> [--proto <file.proto> ...] [--json] [--max-attempts-limit <n>]

Validates a gRPC service config (methodConfig retryPolicy / hedgingPolicy, retryThrottling; gRPC proposal A6)
and explains what each policy does.

Options:
  --proto <file.proto>      warn about config names that match no service or method of this proto (repeatable)
  --json                    print one JSON object instead of the report
  --max-attempts-limit <n>  client-side cap on maxAttempts, an integer >= 1 (default ${DEFAULT_MAX_ATTEMPTS_LIMIT})
  -h, --help                show this help

Exit status: 0 valid (warnings allowed), 1 invalid config, 2 usage error.
`;

/**
 * Runs the `check` command.
 *
 * @param argv The arguments after `check`.
 * @param io Output sinks.
 * @returns The exit code: 0 valid (even with warnings), 1 invalid config, 2 usage error (bad arguments, unreadable
 *   config file or proto).
 */
export async function runCheck(argv: readonly string[], io: CheckIo): Promise<number> {
  const args = parseCheckArgs(argv);
  if (args.kind === 'help') {
    io.stdout(CHECK_USAGE);
    return CHECK_EXIT.valid;
  }
  if (args.kind === 'usage-error') {
    return usageError(io, args.problem);
  }
  const { options } = args;
  let services: ProtoServices | undefined;
  let text: string;
  try {
    services = options.protoFiles.length > 0 ? loadProtoServices(options.protoFiles) : undefined;
    text = await readConfigText(options.configFile);
  } catch (error) {
    return usageError(io, errorMessage(error));
  }
  const report = buildReport(text, options, services);
  if (report.error !== undefined) {
    io.stderr(`error: ${report.error.message}\n`);
  }
  if (options.json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else if (report.valid) {
    io.stdout(renderReport(report));
  }
  return report.valid ? CHECK_EXIT.valid : CHECK_EXIT.invalid;
}

function usageError(io: CheckIo, problem: string): number {
  io.stderr(`error: ${problem}\n\n${CHECK_USAGE}`);
  return CHECK_EXIT.usage;
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments

function parseCheckArgs(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const protoFiles: string[] = [];
  let json = false;
  let limitText: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') {
      return { kind: 'help' };
    }
    if (arg === '--json') {
      json = true;
      continue;
    }
    const [flag, inlineValue] = splitFlag(arg);
    if (flag === '--proto' || flag === '--max-attempts-limit') {
      const value = inlineValue ?? argv[++i];
      if (value === undefined || value === '') {
        return { kind: 'usage-error', problem: `${flag} needs a value` };
      }
      if (flag === '--proto') {
        protoFiles.push(value);
      } else {
        limitText = value;
      }
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      return { kind: 'usage-error', problem: `unknown option ${arg}` };
    }
    positional.push(arg);
  }
  return finishArgs(positional, protoFiles, json, limitText);
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}

function finishArgs(
  positional: readonly string[],
  protoFiles: readonly string[],
  json: boolean,
  limitText: string | undefined,
): ParsedArgs {
  const [configFile, ...extra] = positional;
  if (configFile === undefined) {
    return { kind: 'usage-error', problem: 'missing the service config file argument' };
  }
  if (extra.length > 0) {
    return { kind: 'usage-error', problem: `unexpected argument ${extra[0]} (check takes one config file)` };
  }
  let maxAttemptsLimit = DEFAULT_MAX_ATTEMPTS_LIMIT;
  if (limitText !== undefined) {
    maxAttemptsLimit = /^\d+$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!Number.isSafeInteger(maxAttemptsLimit) || maxAttemptsLimit < 1) {
      return {
        kind: 'usage-error',
        problem: `--max-attempts-limit must be an integer >= 1, got ${limitText}`,
      };
    }
  }
  return { kind: 'run', options: { configFile, protoFiles, json, maxAttemptsLimit } };
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

async function readConfigText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the service config file ${file}: ${errorMessage(error)}`);
  }
}

/** Loads every proto and collects its services; throws a readable Error when one cannot be loaded. */
function loadProtoServices(files: readonly string[]): ProtoServices {
  const services = new Map<string, Set<string>>();
  for (const file of files) {
    let definition: PackageDefinition;
    try {
      const absolute = resolve(file);
      definition = loadSync(absolute, {
        keepCase: true,
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
        includeDirs: [dirname(absolute)],
      });
    } catch (error) {
      throw new Error(`cannot load the proto file ${file}: ${errorMessage(error)}`);
    }
    collectServices(definition, services);
  }
  return services;
}

function collectServices(definition: PackageDefinition, into: Map<string, Set<string>>): void {
  for (const [name, value] of Object.entries(definition)) {
    if ('format' in value) {
      continue; // a message or enum type
    }
    const methods = into.get(name) ?? new Set<string>();
    for (const method of Object.values(value)) {
      methods.add(method.path.slice(method.path.lastIndexOf('/') + 1));
    }
    into.set(name, methods);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function buildReport(text: string, options: CheckOptions, services: ProtoServices | undefined): CheckReport {
  const base = (valid: boolean) => ({
    valid,
    file: options.configFile,
    maxAttemptsLimit: options.maxAttemptsLimit,
  });
  let config: ServiceConfig;
  try {
    config = parseServiceConfig(text);
  } catch (error) {
    if (!isServiceConfigError(error)) {
      throw error;
    }
    const located = new ServiceConfigError(error.path, error.detail, { file: options.configFile });
    return {
      ...base(false),
      entries: [],
      throttling: null,
      warnings: [],
      error: { path: located.path, message: located.message },
    };
  }
  return {
    ...base(true),
    entries: config.methodConfig.map((entry, index) => describeEntry(entry, index, options.maxAttemptsLimit)),
    throttling: config.retryThrottling === undefined ? null : describeThrottling(config.retryThrottling),
    warnings: services === undefined ? [] : findNameWarnings(config, services),
  };
}

function describeEntry(entry: MethodConfig, index: number, limit: number): EntryReport {
  let policy: EntryReport['policy'] = null;
  if (entry.retryPolicy !== undefined) {
    policy = describeRetry(entry.retryPolicy, limit);
  } else if (entry.hedgingPolicy !== undefined) {
    policy = describeHedging(entry.hedgingPolicy, limit);
  }
  return {
    index,
    names: entry.name.map(formatMethodName),
    policy,
    ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
    ...(entry.waitForReady === undefined ? {} : { waitForReady: entry.waitForReady }),
  };
}

/**
 * The capped backoff before each retry (n = 1..maxAttempts-1), before jitter:
 * min(initialBackoff × multiplier^(n-1), maxBackoff).
 */
export function retryBackoffsMs(policy: RetryPolicy, maxAttempts: number): number[] {
  const backoffs: number[] = [];
  for (let n = 1; n < maxAttempts; n++) {
    backoffs.push(
      Math.min(policy.initialBackoffMs * policy.backoffMultiplier ** (n - 1), policy.maxBackoffMs),
    );
  }
  return backoffs;
}

function describeRetry(policy: RetryPolicy, limit: number): RetryPolicyReport {
  const maxAttempts = clampPolicy(policy, limit).maxAttempts;
  const backoffsMs = retryBackoffsMs(policy, maxAttempts);
  const total = backoffsMs.reduce((sum, ms) => sum + ms, 0);
  return {
    kind: 'retry',
    configuredMaxAttempts: policy.maxAttempts,
    maxAttempts,
    clamped: maxAttempts < policy.maxAttempts,
    initialBackoffMs: policy.initialBackoffMs,
    maxBackoffMs: policy.maxBackoffMs,
    backoffMultiplier: policy.backoffMultiplier,
    retryableStatusCodes: policy.retryableStatusCodes.map(statusCodeName),
    backoffsMs,
    worstCaseWaitMs: roundMicros(total * MAX_JITTER),
  };
}

function describeHedging(policy: HedgingPolicy, limit: number): HedgingPolicyReport {
  const maxAttempts = clampPolicy(policy, limit).maxAttempts;
  return {
    kind: 'hedging',
    configuredMaxAttempts: policy.maxAttempts,
    maxAttempts,
    clamped: maxAttempts < policy.maxAttempts,
    hedgingDelayMs: policy.hedgingDelayMs,
    nonFatalStatusCodes: policy.nonFatalStatusCodes.map(statusCodeName),
    lastHedgeAtMs: roundMicros((maxAttempts - 1) * policy.hedgingDelayMs),
  };
}

function describeThrottling(throttling: RetryThrottlingConfig): ThrottlingReport {
  const thresholdTokens = throttling.maxTokens / 2;
  return {
    maxTokens: throttling.maxTokens,
    tokenRatio: throttling.tokenRatio,
    thresholdTokens,
    failuresToThreshold: Math.ceil(throttling.maxTokens - thresholdTokens),
  };
}

/** Rounds to a microsecond, to keep float noise (840.0000000000001) out of the output. */
function roundMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

// ---------------------------------------------------------------------------------------------------------------
// Proto cross-check

function findNameWarnings(config: ServiceConfig, services: ProtoServices): CheckWarning[] {
  const warnings: CheckWarning[] = [];
  config.methodConfig.forEach((entry, i) => {
    entry.name.forEach((name, j) => {
      const message = nameProblem(name, services);
      if (message !== undefined) {
        warnings.push({ path: `methodConfig[${i}].name[${j}]`, message });
      }
    });
  });
  return warnings;
}

function nameProblem(name: MethodName, services: ProtoServices): string | undefined {
  if (name.service === undefined) {
    return undefined;
  }
  const methods = services.get(name.service);
  if (methods === undefined) {
    return unknownServiceMessage(name, services);
  }
  if (name.method === undefined || methods.has(name.method)) {
    return undefined;
  }
  const hint = [...methods].find((m) => m.toLowerCase() === name.method?.toLowerCase());
  const suffix = hint !== undefined ? `did you mean ${hint}?` : `its methods are ${[...methods].join(', ')}`;
  return `${formatMethodName(name)} matches no method: service ${name.service} has no method "${name.method}"; ${suffix}`;
}

function unknownServiceMessage(name: MethodName, services: ProtoServices): string {
  const service = name.service ?? '';
  const base = `${formatMethodName(name)} matches nothing: no service "${service}" in the protos`;
  const simpleName = lastSegment(service).toLowerCase();
  const candidates = [...services.keys()].filter(
    (known) =>
      lastSegment(known).toLowerCase() === simpleName || known.toLowerCase() === service.toLowerCase(),
  );
  if (candidates.length === 0) {
    return `${base} (known services: ${[...services.keys()].join(', ') || 'none'})`;
  }
  const why = service.includes('.') ? '' : ' (service names must include the proto package)';
  return `${base}${why}; did you mean ${candidates.join(' or ')}?`;
}

function lastSegment(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Human-readable rendering

/** The human-readable report of a valid config. */
function renderReport(report: CheckReport): string {
  const sections = [
    `${report.file}: valid service config (${plural(report.entries.length, 'methodConfig entry', 'methodConfig entries')}, ` +
      `attempt limit ${report.maxAttemptsLimit})\n`,
    ...report.entries.map(renderEntry),
    renderThrottling(report.throttling),
  ];
  if (report.entries.length === 0) {
    sections.splice(1, 0, 'No methodConfig entries: no call gets a retry or hedging policy.\n');
  }
  if (report.warnings.length > 0) {
    sections.push(renderWarnings(report.warnings));
  }
  return sections.join('\n');
}

function renderEntry(entry: EntryReport): string {
  const names = entry.names.length > 0 ? entry.names.join(', ') : '(no names: this entry matches no method)';
  const lines = [...renderPolicy(entry.policy)];
  if (entry.timeoutMs !== undefined) {
    lines.push(`timeout: ${formatDuration(entry.timeoutMs)} (not enforced by grpc-retry-hedging)`);
  }
  if (entry.waitForReady !== undefined) {
    lines.push(`waitForReady: ${entry.waitForReady}`);
  }
  return `methodConfig[${entry.index}]: ${names}\n${indentLines(lines, 1)}`;
}

function renderPolicy(policy: EntryReport['policy']): string[] {
  if (policy === null) {
    return ['no retry or hedging policy: matching calls are sent once (less specific entries do not apply)'];
  }
  return policy.kind === 'retry' ? renderRetry(policy) : renderHedging(policy);
}

function renderAttempts(
  policy: RetryPolicyReport | HedgingPolicyReport,
  what: string,
  whatPlural: string,
): string {
  const extra = policy.maxAttempts - 1;
  const split = `1 initial + up to ${plural(extra, what, whatPlural)}`;
  if (!policy.clamped) {
    return `attempts: ${policy.maxAttempts} (${split})`;
  }
  return (
    `attempts: ${policy.maxAttempts} (${split}; clamped from maxAttempts ${policy.configuredMaxAttempts} ` +
    `by the attempt limit ${policy.maxAttempts})`
  );
}

function renderRetry(policy: RetryPolicyReport): string[] {
  const wait =
    policy.backoffsMs.length === 0
      ? 'worst-case wait between attempts: none (no retries)'
      : `worst-case wait between attempts: ${formatDuration(policy.worstCaseWaitMs)} in total ` +
        `(${formatDurationSum(policy.backoffsMs)}, each × ${MAX_JITTER} jitter upper bound; pushback ignored)`;
  return [
    'retry policy',
    `  ${renderAttempts(policy, 'retry', 'retries')}`,
    `  backoff: initial ${formatDuration(policy.initialBackoffMs)}, × ${formatNumber(policy.backoffMultiplier)} ` +
      `per retry, capped at ${formatDuration(policy.maxBackoffMs)} (then jittered × 0.8 to × ${MAX_JITTER})`,
    `  retryable codes: ${formatCodeNames(policy.retryableStatusCodes)}`,
    `  ${wait}`,
  ];
}

function renderHedging(policy: HedgingPolicyReport): string[] {
  const timing =
    policy.hedgingDelayMs === 0 || policy.maxAttempts === 1
      ? `all ${plural(policy.maxAttempts, 'attempt')} leave at once`
      : `last hedge leaves ${formatDuration(policy.lastHedgeAtMs)} after the call starts ` +
        `((${policy.maxAttempts} - 1) × ${formatDuration(policy.hedgingDelayMs)})`;
  const nonFatal =
    policy.nonFatalStatusCodes.length === 0
      ? 'none (any failure ends the call)'
      : formatCodeNames(policy.nonFatalStatusCodes);
  return [
    'hedging policy',
    `  ${renderAttempts(policy, 'hedge', 'hedges')}`,
    `  hedging delay: ${formatDuration(policy.hedgingDelayMs)}`,
    `  non-fatal codes: ${nonFatal}`,
    `  ${timing}`,
  ];
}

function formatCodeNames(names: readonly string[]): string {
  return formatStatusCodes(names.map(codeOfName));
}

function codeOfName(name: string): number {
  return parseStatusCode(name, '');
}

function renderThrottling(throttling: ThrottlingReport | null): string {
  if (throttling === null) {
    return 'retryThrottling: none (retries and hedges are never throttled)\n';
  }
  const lines = [
    `maxTokens ${throttling.maxTokens}, tokenRatio ${formatNumber(throttling.tokenRatio)} ` +
      `(a failed attempt takes 1 token, an OK call gives back ${formatNumber(throttling.tokenRatio)})`,
    `threshold: retries and hedges stop while tokens <= ${formatNumber(throttling.thresholdTokens)} (maxTokens / 2)`,
    `from full tokens, ${plural(throttling.failuresToThreshold, 'consecutive failure')} reach the threshold`,
  ];
  return `retryThrottling\n${indentLines(lines, 1)}`;
}

function renderWarnings(warnings: readonly CheckWarning[]): string {
  const lines = warnings.map((w) => `warning: ${w.path}: ${w.message}`);
  return `${plural(warnings.length, 'warning')}\n${indentLines(lines, 1)}`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
