/**
 * What `check` reports about a service config: the effective policy, timeouts and worst-case timing of every
 * methodConfig entry, throttling, errors and warnings. Pure: the command reads the files, this builds the report.
 */

import { attemptLimitExcessMessage, findAttemptLimitExcess } from '../config/attempt-limit-excess.js';
import { CONFIG_WARNING_KINDS, type ConfigWarningKind } from '../config/config-warnings.js';
import { findUnsafeRetriedMethods, type ProtoMethod } from '../config/idempotency.js';
import { formatJsonPath, type JsonPath } from '../config/json-path.js';
import type { JsonSource } from '../config/json-source.js';
import { clampPolicy } from '../config/method-policy.js';
import type { ServiceConfigIssue } from '../config/service-config-error.js';
import { isJsonObject } from '../config/service-config-rules.js';
import { statusCodeName } from '../config/status-codes.js';
import type {
  HedgingPolicy,
  MethodConfig,
  MethodName,
  RetryPolicy,
  RetryThrottlingConfig,
  ServiceConfig,
} from '../config/types.js';
import { findHedgingBehindPickFirst } from '../lb/hedging-lb-warning.js';
import { unknownPoliciesWarning } from '../lb/lb-policy-names.js';
import { cappedBackoffMs, type JitterStrategy, maxBackoffMs } from '../retry/backoff.js';
import { closestName } from '../util/closest-name.js';
import { formatMethodName } from './format.js';
import { findIneffectivePolicies, findTokenRatioPrecision } from './ineffective-policies.js';
import { findLoadAmplifyingPolicies } from './load-amplifying-policies.js';
import type { ProtoServices } from './proto-services.js';

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
  /** `perAttemptRecvTimeout` in ms, or `null` when an attempt may wait until the call's deadline. */
  readonly perAttemptTimeoutMs: number | null;
  /** Backoff before retry n (n = 1..maxAttempts-1), capped, before jitter. */
  readonly backoffsMs: readonly number[];
  /** Longest total time a call can wait between attempts with the report's jitter (pushback ignored). */
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
  /** `timeout` in ms (applied as the call's deadline when shorter than the caller's), when set. */
  readonly timeoutMs?: number;
  /** `waitForReady` (applied to every attempt), when set. */
  readonly waitForReady?: boolean;
  /**
   * Longest time a call under this entry can take before its last attempt gets a response: attempts × per-attempt
   * timeout plus the backoffs, bounded by `timeout`; only `timeout` when attempts have no per-attempt timeout;
   * `null` when nothing bounds it (the caller's own deadline still does).
   */
  readonly worstCaseMs: number | null;
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

/** An error or warning, located in the config file when it concerns it. */
export interface CheckDiagnostic extends ServiceConfigIssue {
  /** What a warning is about; absent for errors. */
  readonly kind?: CheckWarningKind;
}

/**
 * What `check` warns of that the validator does not: names matching no method of the protos, retried methods the
 * protos do not mark idempotent, load balancing, policies over the attempt limit, policies that multiply load.
 */
const CHECK_ONLY_WARNING_KINDS = [
  'unmatched-name',
  'not-idempotent',
  'hedging-one-connection',
  'unknown-lb-policy',
  'attempts-over-limit',
  'load-amplifying',
] as const;

/** Every kind of warning `check --json` reports: the validator's and its own (docs/cli.md lists them). */
export const CHECK_WARNING_KINDS: readonly CheckWarningKind[] = [
  ...CONFIG_WARNING_KINDS,
  ...CHECK_ONLY_WARNING_KINDS,
];

/** The `kind` of a `check` warning. */
export type CheckWarningKind = ConfigWarningKind | (typeof CHECK_ONLY_WARNING_KINDS)[number];

/** How a check ended: the exit code follows from it. */
export type CheckStatus = 'valid' | 'invalid' | 'io-error' | 'usage-error';

/** The whole result, as printed by `--json`. */
export interface CheckReport {
  readonly valid: boolean;
  readonly status: CheckStatus;
  /** The config file, or `null` when the command line named none. */
  readonly file: string | null;
  readonly maxAttemptsLimit: number;
  readonly jitter: JitterStrategy;
  readonly entries: readonly EntryReport[];
  readonly throttling: ThrottlingReport | null;
  /** Every problem that makes the check fail. */
  readonly errors: readonly CheckDiagnostic[];
  readonly warnings: readonly CheckDiagnostic[];
  /** The first error, with a message as `loadServiceConfig` words it (kept for older readers of the report). */
  readonly error?: { readonly path: string; readonly message: string };
}

/** What a report is built from. */
export interface ReportInput {
  readonly file: string | null;
  readonly maxAttemptsLimit: number;
  readonly jitter: JitterStrategy;
}

/**
 * A report of a check that could not look at the config (a usage or file-system error).
 *
 * @param message One line that names the file concerned.
 */
export function failedReport(
  input: ReportInput,
  status: 'io-error' | 'usage-error',
  message: string,
): CheckReport {
  return { ...emptyReport(input, status), errors: [{ path: '', message }], error: { path: '', message } };
}

/**
 * The warnings read off the JSON as written, which a config with errors gets too: the load-balancing policies (an
 * unknown one, hedging behind `pick_first`) and a `tokenRatio` more precise than A6 reads.
 */
function writtenValueWarnings(
  source: JsonSource | undefined,
  isKnownPolicy: (name: string) => boolean,
): CheckDiagnostic[] {
  const located = (path: JsonPath, message: string, kind: CheckDiagnostic['kind']): CheckDiagnostic =>
    locatedDiagnostic(source, path, message, kind);
  const raw = source?.value;
  const unknownPolicies = isJsonObject(raw)
    ? unknownPoliciesWarning(raw.loadBalancingConfig, isKnownPolicy)
    : undefined;
  return [
    ...(unknownPolicies === undefined
      ? []
      : [located(unknownPolicies.path, unknownPolicies.message, 'unknown-lb-policy')]),
    ...findHedgingBehindPickFirst(raw, isKnownPolicy).map((w) =>
      located(w.path, w.message, 'hedging-one-connection'),
    ),
    ...findTokenRatioPrecision(raw).map((w) => located(w.path, w.message, 'ineffective-policy')),
  ];
}

/**
 * The report of a config that did not validate: its errors, and the warnings that need no valid config (unknown
 * fields, names against the protos, what is read off the JSON as written); the others wait for a valid config.
 */
export function invalidReport(
  input: ReportInput,
  errors: readonly ServiceConfigIssue[],
  warnings: readonly CheckDiagnostic[],
  isKnownPolicy: (name: string) => boolean,
  protos?: { readonly services: ProtoServices },
  source?: JsonSource,
): CheckReport {
  // in file order, as the warnings are, whatever order the checks found them in (a policy's before its timeout)
  const sorted = byPosition(errors);
  const first = sorted[0] ?? { path: '', message: 'invalid' };
  const located = first.path === '' ? first.message : `${first.path}: ${first.message}`;
  // The names are checked against the protos even so, where they are well-formed: every problem at once.
  const nameWarnings =
    protos === undefined || source === undefined
      ? []
      : findNameWarnings(wellFormedNames(source.value), protos.services).map((w) =>
          locatedDiagnostic(source, w.path, w.message, 'unmatched-name'),
        );
  return {
    ...emptyReport(input, 'invalid'),
    errors: sorted,
    warnings: byPosition([...warnings, ...nameWarnings, ...writtenValueWarnings(source, isKnownPolicy)]),
    error: { path: first.path, message: input.file === null ? located : `${input.file}: ${located}` },
  };
}

function emptyReport(input: ReportInput, status: CheckStatus): CheckReport {
  return {
    valid: false,
    status,
    file: input.file,
    maxAttemptsLimit: input.maxAttemptsLimit,
    jitter: input.jitter,
    entries: [],
    throttling: null,
    errors: [],
    warnings: [],
  };
}

/**
 * The report of a valid config.
 *
 * @param warnings Warnings found so far (unknown fields).
 * @param protos The protos' services and methods, for the name and idempotency checks, when `--proto` was given.
 * @param source The config's text, to locate proto warnings.
 * @param isKnownPolicy Whether grpc-js runs a load-balancing policy of this name.
 */
export function validReport(
  input: ReportInput,
  config: ServiceConfig,
  warnings: readonly CheckDiagnostic[],
  protos: { readonly services: ProtoServices; readonly methods: readonly ProtoMethod[] } | undefined,
  source: JsonSource | undefined,
  isKnownPolicy: (name: string) => boolean,
): CheckReport {
  const located = (path: JsonPath, message: string, kind: CheckDiagnostic['kind']): CheckDiagnostic =>
    locatedDiagnostic(source, path, message, kind);
  const protoWarnings =
    protos === undefined
      ? []
      : [
          ...findNameWarnings(configNames(config), protos.services).map((w) =>
            located(w.path, w.message, 'unmatched-name'),
          ),
          ...findUnsafeRetriedMethods(config, protos.methods).map((m) =>
            located(
              ['methodConfig', m.methodConfigIndex, 'name', m.nameIndex],
              `${m.policy === 'retry' ? 'retryPolicy' : 'hedgingPolicy'} covers ${m.service}/${m.method}, which its ` +
                'proto does not mark "option idempotency_level = IDEMPOTENT" or "NO_SIDE_EFFECTS": ' +
                `${m.policy === 'retry' ? 'a retried' : 'a hedged'} call may run more than once on the server`,
              'not-idempotent',
            ),
          ),
        ];
  const ineffective = findIneffectivePolicies(config, input.jitter).map((w) =>
    located(w.path, w.message, 'ineffective-policy'),
  );
  const overLimit = findAttemptLimitExcess(config, input.maxAttemptsLimit).map((e) =>
    located(
      e.path,
      attemptLimitExcessMessage(
        e,
        input.maxAttemptsLimit,
        'raise --max-attempts-limit here and the maxAttemptsLimit option of the interceptor',
      ),
      'attempts-over-limit',
    ),
  );
  const amplifying = findLoadAmplifyingPolicies(config, input.maxAttemptsLimit).map((w) =>
    located(w.path, w.message, 'load-amplifying'),
  );
  return {
    valid: true,
    status: 'valid',
    file: input.file,
    maxAttemptsLimit: input.maxAttemptsLimit,
    jitter: input.jitter,
    entries: config.methodConfig.map((entry, index) => describeEntry(entry, index, input)),
    throttling: config.retryThrottling === undefined ? null : describeThrottling(config.retryThrottling),
    errors: [],
    warnings: byPosition([
      ...warnings,
      ...protoWarnings,
      ...writtenValueWarnings(source, isKnownPolicy),
      ...ineffective,
      ...overLimit,
      ...amplifying,
    ]),
  };
}

/**
 * The errors of the load-balancing policy configs that `createChannelOptions` would reject (the replica-avoiding
 * policy's `childPolicy`, say), located, after the validator's own errors, all in file order.
 *
 * @param findProblems The check `createChannelOptions` makes of a `loadBalancingConfig` list (it asks grpc-js, so it
 *   is the caller's).
 */
export function withLoadBalancingErrors(
  errors: readonly ServiceConfigIssue[],
  source: JsonSource | undefined,
  findProblems: (list: unknown) => readonly { readonly path: JsonPath; readonly problem: string }[],
): ServiceConfigIssue[] {
  const raw = source?.value;
  if (!isJsonObject(raw)) {
    return [...errors];
  }
  const lbErrors = findProblems(raw.loadBalancingConfig).map(({ path, problem }) => {
    const { kind: _none, ...error } = locatedDiagnostic(source, path, problem, undefined);
    return error;
  });
  return lbErrors.length === 0 ? [...errors] : byPosition([...errors, ...lbErrors]);
}

/** Diagnostics in file order (stable: those at one place keep their order). */
function byPosition(diagnostics: readonly CheckDiagnostic[]): CheckDiagnostic[] {
  return [...diagnostics].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

function describeEntry(entry: MethodConfig, index: number, input: ReportInput): EntryReport {
  let policy: EntryReport['policy'] = null;
  if (entry.retryPolicy !== undefined) {
    policy = describeRetry(entry.retryPolicy, input);
  } else if (entry.hedgingPolicy !== undefined) {
    policy = describeHedging(entry.hedgingPolicy, input.maxAttemptsLimit);
  }
  return {
    index,
    names: entry.name.map(formatMethodName),
    policy,
    ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
    ...(entry.waitForReady === undefined ? {} : { waitForReady: entry.waitForReady }),
    worstCaseMs: worstCase(policy, entry.timeoutMs),
  };
}

/**
 * Attempts × per-attempt timeout plus the backoffs, bounded by the method timeout; the method timeout alone when
 * attempts are not bounded; `null` when nothing is.
 */
function worstCase(policy: EntryReport['policy'], timeoutMs: number | undefined): number | null {
  const timeout = timeoutMs ?? null;
  if (policy?.kind !== 'retry' || policy.perAttemptTimeoutMs === null) {
    return timeout;
  }
  const total = attemptsTotalMs(policy.maxAttempts, policy.perAttemptTimeoutMs, policy.worstCaseWaitMs);
  return timeout === null ? total : Math.min(total, timeout);
}

/**
 * Every attempt's timeout plus the backoffs between them, rounded as the report's other times are: the report's
 * worst case before the method timeout bounds it (the text report compares the timeout with it). @internal
 */
export function attemptsTotalMs(
  maxAttempts: number,
  perAttemptTimeoutMs: number,
  worstCaseWaitMs: number,
): number {
  return roundMicros(maxAttempts * perAttemptTimeoutMs + worstCaseWaitMs);
}

function describeRetry(policy: RetryPolicy, input: ReportInput): RetryPolicyReport {
  const maxAttempts = clampPolicy(policy, input.maxAttemptsLimit).maxAttempts;
  const backoffsMs: number[] = [];
  let worstCaseWait = 0;
  for (let retry = 1; retry < maxAttempts; retry++) {
    backoffsMs.push(cappedBackoffMs(policy, retry));
    worstCaseWait += maxBackoffMs(policy, retry, input.jitter);
  }
  return {
    kind: 'retry',
    configuredMaxAttempts: policy.maxAttempts,
    maxAttempts,
    clamped: maxAttempts < policy.maxAttempts,
    initialBackoffMs: policy.initialBackoffMs,
    maxBackoffMs: policy.maxBackoffMs,
    backoffMultiplier: policy.backoffMultiplier,
    retryableStatusCodes: policy.retryableStatusCodes.map(statusCodeName),
    perAttemptTimeoutMs: policy.perAttemptRecvTimeoutMs ?? null,
    backoffsMs,
    worstCaseWaitMs: roundMicros(worstCaseWait),
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
// Names that match nothing in the protos

/** A method name of the config with where it is: `methodConfig[i].name[j]`. */
interface PlacedName {
  readonly path: JsonPath;
  readonly name: MethodName;
}

function findNameWarnings(
  names: readonly PlacedName[],
  services: ProtoServices,
): { path: JsonPath; message: string }[] {
  const warnings: { path: JsonPath; message: string }[] = [];
  for (const { path, name } of names) {
    const message = nameProblem(name, services);
    if (message !== undefined) {
      warnings.push({ path, message });
    }
  }
  return warnings;
}

function configNames(config: ServiceConfig): PlacedName[] {
  return config.methodConfig.flatMap((entry, i) =>
    entry.name.map((name, j) => ({ path: ['methodConfig', i, 'name', j], name })),
  );
}

/**
 * The names of a config that did not validate, as written, where they are well-formed (an object whose `service`
 * is a non-empty string and whose `method` is a string, null or absent); anything else is left to the errors.
 */
function wellFormedNames(value: unknown): PlacedName[] {
  const names: PlacedName[] = [];
  const entries = isJsonObject(value) && Array.isArray(value.methodConfig) ? value.methodConfig : [];
  entries.forEach((entry: unknown, i) => {
    const list = isJsonObject(entry) && Array.isArray(entry.name) ? entry.name : [];
    list.forEach((name: unknown, j) => {
      if (!isJsonObject(name) || typeof name.service !== 'string' || name.service === '') {
        return;
      }
      if (name.method !== undefined && name.method !== null && typeof name.method !== 'string') {
        return;
      }
      const method = typeof name.method === 'string' && name.method !== '' ? { method: name.method } : {};
      names.push({ path: ['methodConfig', i, 'name', j], name: { service: name.service, ...method } });
    });
  });
  return names;
}

function locatedDiagnostic(
  source: JsonSource | undefined,
  path: JsonPath,
  message: string,
  kind: CheckDiagnostic['kind'],
): CheckDiagnostic {
  const position = source?.locate(path);
  return {
    path: formatJsonPath(path),
    message,
    ...(position === undefined ? {} : { line: position.line, column: position.column }),
    ...(kind === undefined ? {} : { kind }),
  };
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
  const hint =
    [...methods].find((m) => m.toLowerCase() === name.method?.toLowerCase()) ??
    closestName(name.method, methods);
  const suffix = hint !== undefined ? `did you mean ${hint}?` : `its methods are ${[...methods].join(', ')}`;
  return `${formatMethodName(name)} matches no method: service ${name.service} has no method "${name.method}"; ${suffix}`;
}

function unknownServiceMessage(name: MethodName, services: ProtoServices): string {
  const service = name.service ?? '';
  const base = `${formatMethodName(name)} matches nothing: no service "${service}" in the protos`;
  const simpleName = lastSegment(service).toLowerCase();
  const sameName = [...services.keys()].filter(
    (known) =>
      lastSegment(known).toLowerCase() === simpleName || known.toLowerCase() === service.toLowerCase(),
  );
  const misspelt = sameName.length === 0 ? closestName(service, services.keys()) : undefined;
  const candidates = misspelt === undefined ? sameName : [misspelt];
  if (candidates.length === 0) {
    return `${base} (known services: ${[...services.keys()].join(', ') || 'none'})`;
  }
  const why = service.includes('.') ? '' : ' (service names must include the proto package)';
  return `${base}${why}; did you mean ${candidates.join(' or ')}?`;
}

function lastSegment(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1);
}
