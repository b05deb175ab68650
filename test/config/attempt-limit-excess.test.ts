/**
 * A policy's maxAttempts above the client's attempt limit: the calls keep to the limit (A6), which the config does
 * not say. The pure finder; `check`'s warning (located, kind `attempts-over-limit`, failing --strict); and the
 * interceptor's warning at creation (code GRPC_RETRY_HEDGING_MAX_ATTEMPTS).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { attemptLimitExcessMessage, findAttemptLimitExcess } from '../../src/config/attempt-limit-excess.js';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
const hedgingPolicy = { maxAttempts: 3, hedgingDelay: '0.2s', nonFatalStatusCodes: ['UNAVAILABLE'] };
const config = {
  methodConfig: [
    { name: [{ service: 'a.A' }], retryPolicy: { ...retryPolicy, maxAttempts: 5 } },
    { name: [{ service: 'a.B' }], retryPolicy: { ...retryPolicy, maxAttempts: 10 } },
    { name: [{ service: 'a.C' }], hedgingPolicy: { ...hedgingPolicy, maxAttempts: 6 } },
    { name: [{ service: 'a.D' }] },
  ],
};

describe('attemptLimitExcessMessage', () => {
  it('counts one attempt in the singular, and says why only for the A6 limit of 5', () => {
    const excess = findAttemptLimitExcess(parseServiceConfig(config), 1)[0];
    expect(excess).toBeDefined();
    if (excess === undefined) return;
    expect(attemptLimitExcessMessage(excess, 1, 'raise it')).toBe(
      `is ${excess.maxAttempts}, above the attempt limit of 1: calls make at most 1 attempt (raise it to allow more)`,
    );
    expect(attemptLimitExcessMessage(excess, 5, 'raise it')).toBe(
      `is ${excess.maxAttempts}, above the attempt limit of 5: calls make at most 5 attempts (A6 caps maxAttempts at 5; raise it to allow more)`,
    );
  });
});

describe('findAttemptLimitExcess', () => {
  it('finds each retry or hedging policy above the limit, not one at it', () => {
    expect(findAttemptLimitExcess(parseServiceConfig(config), 5)).toEqual([
      { path: ['methodConfig', 1, 'retryPolicy', 'maxAttempts'], maxAttempts: 10 },
      { path: ['methodConfig', 2, 'hedgingPolicy', 'maxAttempts'], maxAttempts: 6 },
    ]);
    expect(findAttemptLimitExcess(parseServiceConfig(config), 6)).toHaveLength(1);
    expect(findAttemptLimitExcess(parseServiceConfig(config), 10)).toEqual([]);
  });
});

describe('check', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'grh-attempt-limit-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const file = join(scratch, 'ten.json');
  writeFileSync(
    file,
    `{
  "methodConfig": [{
    "name": [{ "service": "a.B" }],
    "retryPolicy": { "maxAttempts": 10, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"] }
  }]
}
`,
  );

  it('warns at the value, in --json with its kind, fails --strict, and says nothing under a limit that allows it', async () => {
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${file}:4:${'    "retryPolicy": { "maxAttempts": '.length + 1}: warning: methodConfig[0].retryPolicy.maxAttempts: is 10, above the attempt limit of 5: calls make at most 5 attempts (A6 caps maxAttempts at 5; raise --max-attempts-limit here and the maxAttemptsLimit option of the interceptor to allow more)`,
    );
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.warnings.map((w) => [w.kind, w.path])).toEqual([
      ['attempts-over-limit', 'methodConfig[0].retryPolicy.maxAttempts'],
    ]);
    expect((await check(file, '--strict')).code).toBe(1);
    const allowed = JSON.parse(
      (await check(file, '--json', '--max-attempts-limit', '10')).stdout,
    ) as CheckReport;
    expect(allowed.warnings).toEqual([]);
    const six = JSON.parse((await check(file, '--json', '--max-attempts-limit', '6')).stdout) as CheckReport;
    expect(six.warnings.map((w) => w.message)).toEqual([
      'is 10, above the attempt limit of 6: calls make at most 6 attempts (raise --max-attempts-limit here and the maxAttemptsLimit option of the interceptor to allow more)',
    ]);
  });
});

describe('createRetryInterceptor', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('warns once at creation, naming every policy over the limit, and not when the limit allows them', () => {
    const emitted = captureWarnings();
    createRetryInterceptor(config);
    createRetryInterceptor(config); // the same config again: said once per process
    createRetryInterceptor(config, { maxAttemptsLimit: 10 });
    expect(emitted).toEqual([
      {
        message:
          "grpc-retry-hedging: createRetryInterceptor: the service config's methodConfig[1].retryPolicy.maxAttempts is 10, above the attempt limit of 5: calls make at most 5 attempts (A6 caps maxAttempts at 5; set the maxAttemptsLimit option to allow more); the service config's methodConfig[2].hedgingPolicy.maxAttempts is 6, above the attempt limit of 5: calls make at most 5 attempts (A6 caps maxAttempts at 5; set the maxAttemptsLimit option to allow more)",
        code: 'GRPC_RETRY_HEDGING_MAX_ATTEMPTS',
      },
    ]);
  });
});
