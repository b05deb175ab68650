/**
 * The human-readable output of `check`.
 */

import { parseStatusCode } from '../config/status-codes.js';
import { type JitterStrategy, jitterText } from '../retry/backoff.js';
import {
  attemptsTotalMs,
  type CheckDiagnostic,
  type CheckReport,
  type EntryReport,
  type HedgingPolicyReport,
  type RetryPolicyReport,
  type ThrottlingReport,
} from './check-report.js';
import {
  escapeControlCharacters,
  formatDuration,
  formatDurationSum,
  formatNumber,
  formatStatusCodes,
  indentLines,
  plural,
} from './format.js';

/**
 * One diagnostic as `file:line:col: path: message` (so that editors can jump to it), with `warning: ` before the
 * path for warnings. The file name, path and message (which quote the input) are shown with their control
 * characters escaped, so that a config cannot print a line of its own.
 */
export function formatDiagnostic(
  file: string | null,
  diagnostic: CheckDiagnostic,
  severity: 'error' | 'warning',
): string {
  const position = diagnostic.line === undefined ? '' : `:${diagnostic.line}:${diagnostic.column ?? 1}`;
  const where = file === null ? '' : `${escapeControlCharacters(file)}${position}: `;
  const label = severity === 'warning' ? 'warning: ' : '';
  const path = diagnostic.path === '' ? '' : `${escapeControlCharacters(diagnostic.path)}: `;
  return `${where}${label}${path}${escapeControlCharacters(diagnostic.message)}`;
}

/** Said under the errors: some warnings cannot be checked on an invalid config. */
export const WARNINGS_AFTER_ERRORS =
  '(the warnings that need a valid config, on most ineffective policies, the attempt limit and idempotency, come once the errors are fixed)';

/** The lines printed (to stderr) for a config that did not validate: every error, every warning, a summary. */
export function renderInvalid(report: CheckReport): string {
  const lines = [
    ...report.errors.map((e) => formatDiagnostic(report.file, e, 'error')),
    ...report.warnings.map((w) => formatDiagnostic(report.file, w, 'warning')),
    `${report.file === null ? 'config' : escapeControlCharacters(report.file)}: invalid service config (${plural(report.errors.length, 'error')})`,
    WARNINGS_AFTER_ERRORS,
  ];
  return `${lines.join('\n')}\n`;
}

/** The human-readable report of a valid config. */
export function renderReport(report: CheckReport): string {
  const sections = [
    `${escapeControlCharacters(report.file ?? 'config')}: valid service config (${plural(report.entries.length, 'methodConfig entry', 'methodConfig entries')}, ` +
      `attempt limit ${report.maxAttemptsLimit}, jitter ${report.jitter})\n`,
    ...report.entries.map((entry) => renderEntry(entry, report.jitter)),
    renderThrottling(report.throttling),
  ];
  if (report.entries.length === 0) {
    sections.splice(1, 0, 'No methodConfig entries: no call gets a retry or hedging policy.\n');
  }
  if (report.warnings.length > 0) {
    const lines = report.warnings.map((w) => formatDiagnostic(report.file, w, 'warning'));
    sections.push(`${plural(report.warnings.length, 'warning')}\n${indentLines(lines, 1)}`);
  }
  return sections.join('\n');
}

function renderEntry(entry: EntryReport, jitter: JitterStrategy): string {
  const names =
    entry.names.length > 0
      ? entry.names.map(escapeControlCharacters).join(', ')
      : '(no names: this entry matches no method)';
  const lines = [...renderPolicy(entry.policy, jitter)];
  if (entry.timeoutMs !== undefined) {
    lines.push(
      `timeout: ${formatDuration(entry.timeoutMs)} (applied as the call's deadline when shorter than the caller's)`,
    );
  } else {
    lines.push("timeout: none (only the caller's deadline applies)");
  }
  if (entry.waitForReady !== undefined) {
    lines.push(
      `waitForReady: ${entry.waitForReady} (applied to every attempt${entry.waitForReady ? ': attempts wait for a ready connection instead of failing fast' : ''})`,
    );
  }
  if (entry.policy !== null) {
    lines.push(renderWorstCase(entry));
  }
  return `methodConfig[${entry.index}]: ${names}\n${indentLines(lines, 1)}`;
}

function renderWorstCase(entry: EntryReport): string {
  const policy = entry.policy;
  if (entry.worstCaseMs === null) {
    return "worst-case time: unbounded (no per-attempt timeout and no timeout: only the caller's deadline ends it)";
  }
  if (policy?.kind !== 'retry' || policy.perAttemptTimeoutMs === null) {
    return `worst-case time: ${formatDuration(entry.worstCaseMs)} (the timeout; attempts have no timeout of their own)`;
  }
  const sum =
    `${policy.maxAttempts} × ${formatDuration(policy.perAttemptTimeoutMs)} per attempt + ` +
    `${formatDuration(policy.worstCaseWaitMs)} of backoff`;
  const unbounded = attemptsTotalMs(policy.maxAttempts, policy.perAttemptTimeoutMs, policy.worstCaseWaitMs);
  const bounded =
    entry.timeoutMs !== undefined && entry.timeoutMs < unbounded ? ', bounded by the timeout' : '';
  return `worst-case time before the last attempt answers: ${formatDuration(entry.worstCaseMs)} (${sum}${bounded})`;
}

function renderPolicy(policy: EntryReport['policy'], jitter: JitterStrategy): string[] {
  if (policy === null) {
    return ['no retry or hedging policy: matching calls are sent once (less specific entries do not apply)'];
  }
  return policy.kind === 'retry' ? renderRetry(policy, jitter) : renderHedging(policy);
}

function renderAttempts(
  policy: RetryPolicyReport | HedgingPolicyReport,
  what: string,
  whatPlural: string,
): string {
  const extra = policy.maxAttempts - 1;
  // "1 initial + up to 0 retries" read as a sum with nothing to add
  const split =
    extra === 0
      ? `the initial one only, no ${whatPlural}`
      : `1 initial + up to ${plural(extra, what, whatPlural)}`;
  if (!policy.clamped) {
    return `attempts: ${policy.maxAttempts} (${split})`;
  }
  return (
    `attempts: ${policy.maxAttempts} (${split}; clamped from maxAttempts ${policy.configuredMaxAttempts} ` +
    `by the attempt limit ${policy.maxAttempts})`
  );
}

function renderRetry(policy: RetryPolicyReport, jitter: JitterStrategy): string[] {
  const text = jitterText(jitter);
  const wait =
    policy.backoffsMs.length === 0
      ? 'worst-case wait between attempts: none (no retries)'
      : `worst-case wait between attempts: ${formatDuration(policy.worstCaseWaitMs)} in total ` +
        `(${formatDurationSum(policy.backoffsMs)}, ${text.bound}; pushback ignored)`;
  const codes =
    policy.retryableStatusCodes.length === 0
      ? 'none (only attempts that exceed perAttemptRecvTimeout are retried)'
      : formatCodeNames(policy.retryableStatusCodes);
  const perAttempt =
    policy.perAttemptTimeoutMs === null
      ? 'per-attempt timeout: none (an attempt may wait until the deadline)'
      : `per-attempt timeout: ${formatDuration(policy.perAttemptTimeoutMs)} (perAttemptRecvTimeout: an attempt ` +
        'with no response headers or message by then is cancelled and retried)';
  return [
    'retry policy',
    `  ${renderAttempts(policy, 'retry', 'retries')}`,
    `  backoff: initial ${formatDuration(policy.initialBackoffMs)}, × ${formatNumber(policy.backoffMultiplier)} ` +
      `per retry, capped at ${formatDuration(policy.maxBackoffMs)} (${text.range})`,
    `  retryable codes: ${codes}`,
    `  ${perAttempt}`,
    `  ${wait}`,
  ];
}

function renderHedging(policy: HedgingPolicyReport): string[] {
  const timing =
    policy.maxAttempts === 1
      ? 'the one attempt leaves at once'
      : policy.hedgingDelayMs === 0
        ? `all ${policy.maxAttempts} attempts leave at once`
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
  return formatStatusCodes(names.map((name) => parseStatusCode(name, '')));
}

function renderThrottling(throttling: ThrottlingReport | null): string {
  if (throttling === null) {
    return 'retryThrottling: none (retries and hedges are never throttled)\n';
  }
  const lines = [
    `maxTokens ${throttling.maxTokens}, tokenRatio ${formatNumber(throttling.tokenRatio)} ` +
      `(a failed attempt takes 1 token, an OK call gives back ${formatNumber(throttling.tokenRatio)})`,
    `threshold: retries and hedges stop while tokens <= ${formatNumber(throttling.thresholdTokens)} (maxTokens / 2)`,
    `from full tokens, ${plural(throttling.failuresToThreshold, 'consecutive failure')} ${throttling.failuresToThreshold === 1 ? 'reaches' : 'reach'} the threshold`,
  ];
  return `retryThrottling\n${indentLines(lines, 1)}`;
}
