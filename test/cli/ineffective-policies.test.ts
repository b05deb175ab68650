/**
 * `check` warns about policies that validate but cannot do what they say: the pure finder, and the command's
 * report (located, of kind `ineffective-policy`, exit 0 unless --strict).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { findIneffectivePolicies, findTokenRatioPrecision } from '../../src/cli/ineffective-policies.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-ineffective-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
const hedgingPolicy = { maxAttempts: 3, hedgingDelay: '0.2s', nonFatalStatusCodes: ['UNAVAILABLE'] };

function findings(entry: object, jitter: 'a6' | 'full' | 'equal' | 'decorrelated' = 'a6') {
  const config = parseServiceConfig({ methodConfig: [{ name: [{}], ...entry }] });
  return findIneffectivePolicies(config, jitter).map((f) => `${f.path.join('.')}: ${f.message}`);
}

describe('findIneffectivePolicies', () => {
  it('finds nothing in sound policies, at the edges of each rule', () => {
    expect(findings({ retryPolicy })).toEqual([]);
    expect(findings({ retryPolicy: { ...retryPolicy, initialBackoff: '1s' } })).toEqual([]); // equal to the cap
    expect(findings({ retryPolicy, timeout: '0.081s' })).toEqual([]); // just past 0.8 × 100 ms
    expect(findings({ hedgingPolicy, timeout: '0.201s' })).toEqual([]);
    expect(findings({ hedgingPolicy: { ...hedgingPolicy, hedgingDelay: '0s' }, timeout: '0.001s' })).toEqual(
      [],
    );
    expect(findings({ retryPolicy, timeout: '0.001s' }, 'full')).toEqual([]); // full jitter can retry at once
  });

  it("an empty name list is the validator's warning (config-warnings.ts), not found again here", () => {
    const config = parseServiceConfig({
      methodConfig: [
        { name: [{}], retryPolicy },
        { name: [], retryPolicy },
      ],
    });
    expect(findIneffectivePolicies(config, 'a6')).toEqual([]);
  });

  it('an initialBackoff longer than maxBackoff', () => {
    expect(findings({ retryPolicy: { ...retryPolicy, initialBackoff: '1.5s' } })).toEqual([
      'methodConfig.0.retryPolicy.initialBackoff: is longer than maxBackoff (1.5 s > 1 s): every backoff is capped at maxBackoff, so initialBackoff has no effect',
    ]);
  });

  it('OK among the codes retried or hedged on, by name or number', () => {
    expect(
      findings({ retryPolicy: { ...retryPolicy, retryableStatusCodes: ['UNAVAILABLE', 'ok'] } }),
    ).toEqual([
      'methodConfig.0.retryPolicy.retryableStatusCodes: lists OK: a call that succeeds is never retried, so the code has no effect',
    ]);
    expect(findings({ hedgingPolicy: { ...hedgingPolicy, nonFatalStatusCodes: [0] } })).toEqual([
      'methodConfig.0.hedgingPolicy.nonFatalStatusCodes: lists OK: the first OK answer ends the call, so the code has no effect',
    ]);
  });

  it('a timeout no retry can start in, with the jitter strategy given', () => {
    expect(findings({ retryPolicy, timeout: '0.08s' })).toEqual([
      'methodConfig.0.timeout: 80 ms is not longer than the earliest first backoff (80 ms, with a6 jitter): no retry can start before the deadline, unless a server pushback asks for one sooner',
    ]);
    // equal jitter waits at least half the backoff; decorrelated at least initialBackoff
    expect(findings({ retryPolicy, timeout: '0.06s' }, 'equal')).toEqual([]);
    expect(findings({ retryPolicy, timeout: '0.05s' }, 'equal')).toHaveLength(1);
    expect(findings({ retryPolicy, timeout: '0.09s' }, 'decorrelated')).toEqual([
      'methodConfig.0.timeout: 90 ms is not longer than the earliest first backoff (100 ms, with decorrelated jitter): no retry can start before the deadline, unless a server pushback asks for one sooner',
    ]);
    // the cap applies before jitter: 0.8 × maxBackoff when initialBackoff is above it
    expect(findings({ retryPolicy: { ...retryPolicy, initialBackoff: '5s' }, timeout: '0.8s' })).toContain(
      'methodConfig.0.timeout: 800 ms is not longer than the earliest first backoff (800 ms, with a6 jitter): no retry can start before the deadline, unless a server pushback asks for one sooner',
    );
  });

  it('a timeout no hedge goes out in on its delay', () => {
    expect(findings({ hedgingPolicy, timeout: '0.2s' })).toEqual([
      'methodConfig.0.timeout: 200 ms is not longer than hedgingDelay (200 ms): no hedge is sent on its delay before the deadline, only after a non-fatal failure',
    ]);
  });
});

describe('check with ineffective policies', () => {
  const file = join(SCRATCH, 'ineffective.json');
  writeFileSync(
    file,
    `{
  "methodConfig": [
    { "name": [{ "service": "a.B" }], "retryPolicy": ${JSON.stringify(retryPolicy)}, "timeout": "0.05s" }
  ]
}
`,
  );

  it('warns, located at the value, and still exits 0', async () => {
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${file}:3:${'    { "name": [{ "service": "a.B" }], "retryPolicy": '.length + JSON.stringify(retryPolicy).length + ', "timeout": '.length + 1}: warning: methodConfig[0].timeout: 50 ms is not longer than the earliest first backoff (80 ms, with a6 jitter)`,
    );
  });

  it('reports the kind in --json, follows --jitter, and fails under --strict', async () => {
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.warnings.map((w) => [w.kind, w.path])).toEqual([
      ['ineffective-policy', 'methodConfig[0].timeout'],
    ]);
    const full = JSON.parse((await check(file, '--json', '--jitter', 'full')).stdout) as CheckReport;
    expect(full.warnings).toEqual([]);
    expect((await check(file, '--strict')).code).toBe(1);
  });
});

describe('a tokenRatio more precise than A6 reads', () => {
  it('is found in the JSON as written, and not when three decimals or fewer are given', () => {
    const throttling = (tokenRatio: unknown) => ({ retryThrottling: { maxTokens: 10, tokenRatio } });
    expect(findTokenRatioPrecision(throttling(0.1234))).toEqual([
      {
        path: ['retryThrottling', 'tokenRatio'],
        message: 'has more than three decimals, which A6 drops: the ratio is 0.123, not 0.1234',
      },
    ]);
    for (const fine of [0.1, 0.123, 1, 2.5, 0.57]) {
      expect(findTokenRatioPrecision(throttling(fine))).toEqual([]);
    }
    // Invalid values are the validator's errors, not this warning.
    for (const invalid of [0.0004, 0, -1, '0.1234', undefined]) {
      expect(findTokenRatioPrecision(throttling(invalid))).toEqual([]);
    }
    expect(findTokenRatioPrecision({})).toEqual([]);
    expect(findTokenRatioPrecision(null)).toEqual([]);
  });

  it('check warns at the value (kind ineffective-policy), and --strict fails', async () => {
    const file = join(SCRATCH, 'token-ratio.json');
    writeFileSync(file, '{\n  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1234 }\n}\n');
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${file}:2:55: warning: retryThrottling.tokenRatio: has more than three decimals, which A6 drops: the ratio is 0.123, not 0.1234`,
    );
    expect((await check(file, '--strict')).code).toBe(1);
  });
});

describe('a retryThrottling whose first failure reaches its threshold', () => {
  const withThrottling = (maxTokens: number, entry: object = { retryPolicy }) =>
    parseServiceConfig({
      methodConfig: [{ name: [{}], ...entry }],
      retryThrottling: { maxTokens, tokenRatio: 0.5 },
    });
  const found = (config: ReturnType<typeof withThrottling>) =>
    findIneffectivePolicies(config, 'a6').map((f) => `${f.path.join('.')}: ${f.message}`);

  it('is found for maxTokens 1 and 2, where a failure leaves no token above maxTokens / 2', () => {
    expect(found(withThrottling(2))).toEqual([
      'retryThrottling.maxTokens: is 2: a failed attempt takes 1 token, leaving 1, which is not above the threshold (maxTokens / 2 = 1), so no retry, nor a hedge after a failure, is ever sent; give maxTokens 3 or more',
    ]);
    expect(found(withThrottling(1, { hedgingPolicy }))).toEqual([
      'retryThrottling.maxTokens: is 1: a failed attempt takes 1 token, leaving 0, which is not above the threshold (maxTokens / 2 = 0.5), so no retry, nor a hedge after a failure, is ever sent; give maxTokens 3 or more',
    ]);
  });

  it('is not found from maxTokens 3, nor without a policy it would hold back', () => {
    expect(found(withThrottling(3))).toEqual([]);
    expect(found(withThrottling(2, { timeout: '1s' }))).toEqual([]);
  });

  it('check warns at the value (kind ineffective-policy)', async () => {
    const file = join(SCRATCH, 'max-tokens.json');
    writeFileSync(
      file,
      `{\n  "methodConfig": [{ "name": [{}], "retryPolicy": ${JSON.stringify(retryPolicy)} }],\n  "retryThrottling": { "maxTokens": 2, "tokenRatio": 0.1 }\n}\n`,
    );
    const run = await check(file, '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.warnings).toContainEqual(
      expect.objectContaining({
        kind: 'ineffective-policy',
        path: 'retryThrottling.maxTokens',
        line: 3,
        message: expect.stringMatching(/^is 2: a failed attempt takes 1 token, leaving 1/),
      }),
    );
  });
});
