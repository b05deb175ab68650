/**
 * `check` warns about policies that work as written but multiply the load on a failing or overloaded server: the
 * pure finder at the edges of each rule, and the command's report (located, of kind `load-amplifying`, exit 0
 * unless --strict).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { findLoadAmplifyingPolicies } from '../../src/cli/load-amplifying-policies.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-amplifying-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
const hedgingPolicy = { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] };
const THROTTLING = { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } };

function findings(config: object, limit = 5): string[] {
  return findLoadAmplifyingPolicies(parseServiceConfig(config), limit).map(
    (f) => `${f.path.join('.')}: ${f.message}`,
  );
}

function entry(policy: object): object {
  return { methodConfig: [{ name: [{}], ...policy }] };
}

describe('findLoadAmplifyingPolicies', () => {
  it('finds nothing in sound policies, at the edges of each rule', () => {
    expect(findings(entry({ retryPolicy }))).toEqual([]);
    expect(findings(entry({ hedgingPolicy }))).toEqual([]);
    // a first backoff of exactly 10 ms, as the examples write
    expect(findings(entry({ retryPolicy: { ...retryPolicy, initialBackoff: '0.01s' } }))).toEqual([]);
    // a backoff under 10 ms or RESOURCE_EXHAUSTED is throttled when retryThrottling is there
    expect(
      findings({
        ...entry({
          retryPolicy: {
            ...retryPolicy,
            initialBackoff: '0.001s',
            retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'],
          },
        }),
        ...THROTTLING,
      }),
    ).toEqual([]);
    // one attempt: nothing is retried or hedged
    expect(
      findings(entry({ retryPolicy: { ...retryPolicy, maxAttempts: 2, initialBackoff: '0.001s' } }), 1),
    ).toEqual([]);
    expect(findings(entry({ hedgingPolicy: { ...hedgingPolicy, hedgingDelay: '0s' } }), 1)).toEqual([]);
    // a ratio just under 9 fails over 89.9% only
    expect(findings({ retryThrottling: { maxTokens: 10, tokenRatio: 8.999 } })).toEqual([]);
  });

  it('a first retry under 10 ms with no throttling, at the field that makes it short', () => {
    expect(
      findings(entry({ retryPolicy: { ...retryPolicy, initialBackoff: '0.001s', maxAttempts: 4 } })),
    ).toEqual([
      'methodConfig.0.retryPolicy.initialBackoff: makes the first retry come 1 ms after a failure, and no retryThrottling limits retries: while a server fails, each call sends it 4 attempts within about 7 ms, 4× the load of calls that are not retried; add retryThrottling (A6 limits retries and hedges across calls once many fail), or give the interceptor a gate such as a RetryBudget (not visible to check), or start the backoff at 10 ms or more',
    ]);
    // maxBackoff caps a longer initialBackoff under 10 ms: the cap is the field to blame
    expect(
      findings(entry({ retryPolicy: { ...retryPolicy, initialBackoff: '0.1s', maxBackoff: '0.005s' } })),
    ).toEqual([
      expect.stringMatching(/^methodConfig\.0\.retryPolicy\.maxBackoff: makes the first retry come 5 ms/),
    ]);
    // the attempts quoted are those the limit allows
    expect(
      findings(entry({ retryPolicy: { ...retryPolicy, initialBackoff: '0.001s', maxAttempts: 9 } }), 5),
    ).toEqual([expect.stringContaining('each call sends it 5 attempts within about 15 ms, 5×')]);
  });

  it('RESOURCE_EXHAUSTED retried or hedged on with no throttling', () => {
    expect(
      findings(
        entry({
          retryPolicy: { ...retryPolicy, retryableStatusCodes: ['UNAVAILABLE', 'RESOURCE_EXHAUSTED'] },
        }),
      ),
    ).toEqual([
      'methodConfig.0.retryPolicy.retryableStatusCodes: lists RESOURCE_EXHAUSTED, which a server returns when it is out of capacity or quota, and no retryThrottling limits retries: each such call sends up to 2 more attempts to a server that is already overloaded, as soon as the backoff allows unless the server says when to come back (grpc-retry-pushback-ms, google.rpc.RetryInfo); add retryThrottling (A6 limits retries and hedges across calls once many fail), or give the interceptor a gate such as a RetryBudget (not visible to check), or leave the code out',
    ]);
    expect(findings(entry({ hedgingPolicy: { ...hedgingPolicy, nonFatalStatusCodes: [8] } }))).toEqual([
      'methodConfig.0.hedgingPolicy.nonFatalStatusCodes: lists RESOURCE_EXHAUSTED, which a server returns when it is out of capacity or quota, and no retryThrottling limits hedges: each such answer sends the next hedge at once, up to 3 attempts a call to a server that is already overloaded; add retryThrottling (A6 limits retries and hedges across calls once many fail), or give the interceptor a gate such as a RetryBudget (not visible to check), or leave the code out',
    ]);
  });

  it('a hedgingDelay of 0, written or left out, throttled or not', () => {
    const expected = [
      'methodConfig.0.hedgingPolicy.hedgingDelay: is 0s or left out: every call sends all 3 attempts at once, 3× the load of calls that are not hedged even when nothing fails (throttling does not limit them then); a delay near the latency most calls answer within (their p95, say) hedges only the slow ones',
    ];
    expect(findings(entry({ hedgingPolicy: { ...hedgingPolicy, hedgingDelay: '0s' } }))).toEqual(expected);
    expect(findings({ ...entry({ hedgingPolicy: { maxAttempts: 3 } }), ...THROTTLING })).toEqual(expected);
  });

  it('a tokenRatio that throttles only once 90% or more fail', () => {
    expect(findings({ retryThrottling: { maxTokens: 10, tokenRatio: 9 } })).toEqual([
      "retryThrottling.tokenRatio: gives back 9 tokens for each success, against 1 for each failure: retries and hedges are throttled only while more than 90% of attempts fail, so a server failing most calls still gets every retry; a ratio of 0.1 (A6's example) throttles once more than about 9% fail",
    ]);
    expect(findings({ retryThrottling: { maxTokens: 100, tokenRatio: 1000 } })).toEqual([
      expect.stringContaining('throttled only while more than 99.9% of attempts fail'),
    ]);
  });
});

describe('check with load-amplifying policies', () => {
  const file = join(SCRATCH, 'amplifying.json');
  const lines = [
    '{',
    '  "loadBalancingConfig": [{ "round_robin": {} }],',
    '  "methodConfig": [',
    '    { "name": [{ "service": "a.B" }], "hedgingPolicy": { "maxAttempts": 2, "hedgingDelay": "0s" } }',
    '  ],',
    '  "retryThrottling": { "maxTokens": 10, "tokenRatio": 20 }',
    '}',
  ];
  writeFileSync(file, `${lines.join('\n')}\n`);
  const at = (line: number, value: string) => `${line}:${(lines[line - 1] ?? '').indexOf(value) + 1}`;

  it('warns, located at the value, and still exits 0', async () => {
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${file}:${at(4, '"0s"')}: warning: methodConfig[0].hedgingPolicy.hedgingDelay: is 0s or left out`,
    );
    expect(run.stdout).toContain(
      `${file}:${at(6, '20')}: warning: retryThrottling.tokenRatio: gives back 20 tokens`,
    );
  });

  it('reports the kind in --json and fails under --strict', async () => {
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.warnings.map((w) => [w.kind, w.path])).toEqual([
      ['load-amplifying', 'methodConfig[0].hedgingPolicy.hedgingDelay'],
      ['load-amplifying', 'retryThrottling.tokenRatio'],
    ]);
    expect((await check(file, '--strict')).code).toBe(1);
  });

  it('finds nothing in the examples the docs run', async () => {
    for (const example of ['examples/service-config.json', 'examples/greeter-service-config.json']) {
      const report = JSON.parse((await check(example, '--json')).stdout) as CheckReport;
      expect(report.warnings.filter((w) => w.kind === 'load-amplifying')).toEqual([]);
    }
  });
});
