/**
 * The text report of `check`, line for line: the header, each methodConfig entry (retry, hedging, no policy, no
 * names), the timing lines at their edges, throttling, and the warnings under it; and the rendering functions for a
 * report that names no file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  formatDiagnostic,
  renderInvalid,
  renderReport,
  WARNINGS_AFTER_ERRORS,
} from '../../src/cli/check-render.js';
import { invalidReport, validReport } from '../../src/cli/check-report.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-render-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
const THROTTLING = { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } };
const THROTTLING_TEXT =
  'retryThrottling\n' +
  '  maxTokens 10, tokenRatio 0.1 (a failed attempt takes 1 token, an OK call gives back 0.1)\n' +
  '  threshold: retries and hedges stop while tokens <= 5 (maxTokens / 2)\n' +
  '  from full tokens, 5 consecutive failures reach the threshold\n';
const UNBOUNDED =
  "  worst-case time: unbounded (no per-attempt timeout and no timeout: only the caller's deadline ends it)\n";
const NO_TIMEOUT = "  timeout: none (only the caller's deadline applies)\n";

/** Writes `config` (indented, two spaces) to a new file of the scratch directory. */
function write(name: string, config: object): string {
  const file = join(SCRATCH, `${name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** The text report of a config that checks valid (exit 0, nothing on stderr). */
async function report(file: string, ...argv: string[]): Promise<string> {
  const run = await check(file, ...argv);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout;
}

describe('check: the text report of a valid config', () => {
  it('explains retry policies, a policy-less default entry, throttling and a warning, line for line', async () => {
    const file = write('retries', {
      methodConfig: [
        {
          name: [
            { service: 'pkg.v1.Orders', method: 'Get' },
            { service: 'pkg.v1.Orders', method: 'List' },
          ],
          retryPolicy: {
            maxAttempts: 2,
            initialBackoff: '0.25s',
            maxBackoff: '2s',
            backoffMultiplier: 1.5,
            retryableStatusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'],
          },
          waitForReady: false,
        },
        {
          name: [{ service: 'pkg.v1.Orders' }],
          retryPolicy: { ...retryPolicy, maxAttempts: 6, perAttemptRecvTimeout: '0.5s' },
          waitForReady: true,
        },
        { name: [{}], timeout: '90s' },
      ],
      retryThrottling: { maxTokens: 7, tokenRatio: 0.25 },
    });
    expect(await report(file, '--max-attempts-limit', '4')).toBe(
      `${file}: valid service config (3 methodConfig entries, attempt limit 4, jitter a6)\n` +
        '\n' +
        'methodConfig[0]: pkg.v1.Orders/Get, pkg.v1.Orders/List\n' +
        '  retry policy\n' +
        '    attempts: 2 (1 initial + up to 1 retry)\n' +
        '    backoff: initial 250 ms, × 1.5 per retry, capped at 2 s (then jittered × 0.8 to × 1.2)\n' +
        '    retryable codes: UNAVAILABLE (14), DEADLINE_EXCEEDED (4)\n' +
        '    per-attempt timeout: none (an attempt may wait until the deadline)\n' +
        '    worst-case wait between attempts: 300 ms in total (250 ms, each × 1.2 jitter upper bound; pushback ignored)\n' +
        NO_TIMEOUT +
        '  waitForReady: false (applied to every attempt)\n' +
        UNBOUNDED +
        '\n' +
        'methodConfig[1]: pkg.v1.Orders/*\n' +
        '  retry policy\n' +
        '    attempts: 4 (1 initial + up to 3 retries; clamped from maxAttempts 6 by the attempt limit 4)\n' +
        '    backoff: initial 100 ms, × 2 per retry, capped at 1 s (then jittered × 0.8 to × 1.2)\n' +
        '    retryable codes: UNAVAILABLE (14)\n' +
        '    per-attempt timeout: 500 ms (perAttemptRecvTimeout: an attempt with no response headers or message by then is cancelled and retried)\n' +
        '    worst-case wait between attempts: 840 ms in total (100 ms + 200 ms + 400 ms, each × 1.2 jitter upper bound; pushback ignored)\n' +
        NO_TIMEOUT +
        '  waitForReady: true (applied to every attempt: attempts wait for a ready connection instead of failing fast)\n' +
        // 4 × 500 ms + (100 + 200 + 400) × 1.2 ms, with no timeout to bound it
        '  worst-case time before the last attempt answers: 2.84 s (4 × 500 ms per attempt + 840 ms of backoff)\n' +
        '\n' +
        'methodConfig[2]: *\n' +
        '  no retry or hedging policy: matching calls are sent once (less specific entries do not apply)\n' +
        "  timeout: 1.5 min (applied as the call's deadline when shorter than the caller's)\n" +
        '\n' +
        'retryThrottling\n' +
        '  maxTokens 7, tokenRatio 0.25 (a failed attempt takes 1 token, an OK call gives back 0.25)\n' +
        '  threshold: retries and hedges stop while tokens <= 3.5 (maxTokens / 2)\n' +
        '  from full tokens, 4 consecutive failures reach the threshold\n' +
        '\n' +
        '1 warning\n' +
        `  ${file}:33:24: warning: methodConfig[1].retryPolicy.maxAttempts: is 6, above the attempt limit of 4: ` +
        'calls make at most 4 attempts (raise --max-attempts-limit here and the maxAttemptsLimit option of the ' +
        'interceptor to allow more)\n',
    );
  });

  it('explains hedging policies, clamped and not, an entry with no names, and several warnings', async () => {
    const file = write('hedging', {
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        {
          name: [{ service: 'pkg.v1.Orders' }],
          hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.3s' },
          timeout: '2s',
        },
        { name: [], hedgingPolicy: { maxAttempts: 2, nonFatalStatusCodes: ['UNAVAILABLE', 'INTERNAL'] } },
      ],
    });
    expect(await report(file, '--max-attempts-limit', '2')).toBe(
      `${file}: valid service config (2 methodConfig entries, attempt limit 2, jitter a6)\n` +
        '\n' +
        'methodConfig[0]: pkg.v1.Orders/*\n' +
        '  hedging policy\n' +
        '    attempts: 2 (1 initial + up to 1 hedge; clamped from maxAttempts 3 by the attempt limit 2)\n' +
        '    hedging delay: 300 ms\n' +
        '    non-fatal codes: none (any failure ends the call)\n' +
        '    last hedge leaves 300 ms after the call starts ((2 - 1) × 300 ms)\n' +
        "  timeout: 2 s (applied as the call's deadline when shorter than the caller's)\n" +
        '  worst-case time: 2 s (the timeout; attempts have no timeout of their own)\n' +
        '\n' +
        'methodConfig[1]: (no names: this entry matches no method)\n' +
        '  hedging policy\n' +
        '    attempts: 2 (1 initial + up to 1 hedge)\n' +
        '    hedging delay: 0 ms\n' +
        '    non-fatal codes: UNAVAILABLE (14), INTERNAL (13)\n' +
        '    all 2 attempts leave at once\n' +
        NO_TIMEOUT +
        UNBOUNDED +
        '\n' +
        'retryThrottling: none (retries and hedges are never throttled)\n' +
        '\n' +
        '3 warnings\n' +
        `  ${file}:15:24: warning: methodConfig[0].hedgingPolicy.maxAttempts: is 3, above the attempt limit of 2: ` +
        'calls make at most 2 attempts (raise --max-attempts-limit here and the maxAttemptsLimit option of the ' +
        'interceptor to allow more)\n' +
        `  ${file}:21:15: warning: methodConfig[1].name: is an empty list, which matches no call: this entry ` +
        'applies to nothing (name a service, or write [{}] for every method)\n' +
        `  ${file}:22:24: warning: methodConfig[1].hedgingPolicy.hedgingDelay: is 0s or left out: every call sends ` +
        'all 2 attempts at once, 2× the load of calls that are not hedged even when nothing fails (throttling does ' +
        'not limit them then); a delay near the latency most calls answer within (their p95, say) hedges only the ' +
        'slow ones\n',
    );
  });

  it('says so when there are no methodConfig entries, and prints no warnings section without warnings', async () => {
    const file = join(SCRATCH, 'empty.json');
    writeFileSync(file, '{}\n');
    expect(await report(file)).toBe(
      `${file}: valid service config (0 methodConfig entries, attempt limit 5, jitter a6)\n` +
        '\n' +
        'No methodConfig entries: no call gets a retry or hedging policy.\n' +
        '\n' +
        'retryThrottling: none (retries and hedges are never throttled)\n',
    );
  });

  it('counts one entry in the singular', async () => {
    const file = write('one-entry', {
      methodConfig: [{ name: [{ service: 'a.B' }], retryPolicy }],
      ...THROTTLING,
    });
    expect(await report(file)).toMatch(
      /^.*: valid service config \(1 methodConfig entry, attempt limit 5, jitter a6\)\n\nmethodConfig\[0\]: a\.B\/\*\n/,
    );
  });

  it('says "1 consecutive failure reaches" the threshold in the singular', async () => {
    const file = write('one-failure', {
      methodConfig: [{ name: [{ service: 'a.B' }], retryPolicy }],
      retryThrottling: { maxTokens: 2, tokenRatio: 0.5 },
    });
    expect(await report(file)).toContain(
      '  threshold: retries and hedges stop while tokens <= 1 (maxTokens / 2)\n' +
        '  from full tokens, 1 consecutive failure reaches the threshold\n',
    );
  });

  it('when the attempt limit leaves one attempt: no retries to wait between, the one attempt leaves at once', async () => {
    const file = write('one-attempt', {
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        { name: [{ service: 'a.B' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.02s' } },
        { name: [{ service: 'a.C' }], retryPolicy },
      ],
      ...THROTTLING,
    });
    const text = await report(file, '--max-attempts-limit', '1');
    expect(text).toContain(
      'methodConfig[0]: a.B/*\n' +
        '  hedging policy\n' +
        '    attempts: 1 (the initial one only, no hedges; clamped from maxAttempts 3 by the attempt limit 1)\n' +
        '    hedging delay: 20 ms\n' +
        '    non-fatal codes: none (any failure ends the call)\n' +
        '    the one attempt leaves at once\n',
    );
    expect(text).toContain(
      '    attempts: 1 (the initial one only, no retries; clamped from maxAttempts 3 by the attempt limit 1)\n' +
        '    backoff: initial 100 ms, × 2 per retry, capped at 1 s (then jittered × 0.8 to × 1.2)\n' +
        '    retryable codes: UNAVAILABLE (14)\n' +
        '    per-attempt timeout: none (an attempt may wait until the deadline)\n' +
        '    worst-case wait between attempts: none (no retries)\n',
    );
  });

  it('adds up six backoffs in full, and elides the middle of seven', async () => {
    const policy = { ...retryPolicy, initialBackoff: '0.01s', maxBackoff: '10s' };
    const file = write('backoff-sums', {
      methodConfig: [
        { name: [{ service: 'a.Seven' }], retryPolicy: { ...policy, maxAttempts: 7 } },
        { name: [{ service: 'a.Eight' }], retryPolicy: { ...policy, maxAttempts: 8 } },
      ],
      ...THROTTLING,
    });
    const text = await report(file, '--max-attempts-limit', '8');
    // (10 + 20 + 40 + 80 + 160 + 320) × 1.2 = 756; with 640 more, 1524
    expect(text).toContain(
      'worst-case wait between attempts: 756 ms in total ' +
        '(10 ms + 20 ms + 40 ms + 80 ms + 160 ms + 320 ms, each × 1.2 jitter upper bound; pushback ignored)\n',
    );
    expect(text).toContain(
      'worst-case wait between attempts: 1.524 s in total ' +
        '(10 ms + 20 ms + 40 ms + 80 ms + ... + 640 ms, each × 1.2 jitter upper bound; pushback ignored)\n',
    );
    // throttling last, and no warnings section: there is nothing to warn of
    expect(text.slice(-THROTTLING_TEXT.length - 2)).toBe(`\n\n${THROTTLING_TEXT}`);
  });

  it('bounds the worst-case time by the timeout only when the timeout is shorter', async () => {
    const perAttempt = { ...retryPolicy, maxAttempts: 2, perAttemptRecvTimeout: '1s' };
    const file = write('worst-case', {
      methodConfig: [
        // no per-attempt timeout: the timeout alone bounds the call
        { name: [{ service: 'a.Timeout' }], timeout: '5s', retryPolicy },
        // 2 × 1 s + 100 ms × 1.2 = 2.12 s: a timeout of exactly that bounds nothing
        { name: [{ service: 'a.Equal' }], timeout: '2.12s', retryPolicy: perAttempt },
        { name: [{ service: 'a.Shorter' }], timeout: '2.119s', retryPolicy: perAttempt },
        // 3 × 128.8 ms is 386.40000000000003 ms in floating point: still exactly the timeout of 746.4 ms
        {
          name: [{ service: 'a.Float' }],
          timeout: '0.7464s',
          retryPolicy: { ...retryPolicy, maxAttempts: 3, perAttemptRecvTimeout: '0.1288s' },
        },
      ],
      ...THROTTLING,
    });
    const text = await report(file);
    expect(text).toContain(
      "  timeout: 5 s (applied as the call's deadline when shorter than the caller's)\n" +
        '  worst-case time: 5 s (the timeout; attempts have no timeout of their own)\n',
    );
    expect(text).toContain(
      '  worst-case time before the last attempt answers: 2.12 s (2 × 1 s per attempt + 120 ms of backoff)\n',
    );
    expect(text).toContain(
      '  worst-case time before the last attempt answers: 2.119 s ' +
        '(2 × 1 s per attempt + 120 ms of backoff, bounded by the timeout)\n',
    );
    expect(text).toContain(
      '  worst-case time before the last attempt answers: 746.4 ms (3 × 128.8 ms per attempt + 360 ms of backoff)\n',
    );
  });
});

describe('rendering a report that names no file', () => {
  const input = { file: null, maxAttemptsLimit: 5, jitter: 'a6' } as const;
  const knownPolicy = (): boolean => true;

  it('formats a diagnostic with its location only when there is a file, and column 1 when none is known', () => {
    const diagnostic = {
      path: 'methodConfig[0].timeout',
      message: 'must be a duration',
      line: 3,
      column: 14,
    };
    expect(formatDiagnostic('c.json', diagnostic, 'error')).toBe(
      'c.json:3:14: methodConfig[0].timeout: must be a duration',
    );
    expect(formatDiagnostic(null, diagnostic, 'error')).toBe('methodConfig[0].timeout: must be a duration');
    expect(formatDiagnostic(null, diagnostic, 'warning')).toBe(
      'warning: methodConfig[0].timeout: must be a duration',
    );
    expect(formatDiagnostic('c.json', { path: 'retryThrottling', message: 'm', line: 7 }, 'warning')).toBe(
      'c.json:7:1: warning: retryThrottling: m',
    );
    expect(formatDiagnostic('c.json', { path: '', message: 'not JSON' }, 'error')).toBe('c.json: not JSON');
  });

  it('calls the config "config" in the summary of an invalid report and the header of a valid one', () => {
    const invalid = invalidReport(
      input,
      [{ path: 'methodConfig', message: 'must be an array, got 5' }],
      [],
      knownPolicy,
    );
    expect(renderInvalid(invalid)).toBe(
      `methodConfig: must be an array, got 5\nconfig: invalid service config (1 error)\n${WARNINGS_AFTER_ERRORS}\n`,
    );
    const valid = validReport(input, parseServiceConfig({}), [], undefined, undefined, knownPolicy);
    expect(renderReport(valid)).toMatch(
      /^config: valid service config \(0 methodConfig entries, attempt limit 5, jitter a6\)\n/,
    );
  });
});
