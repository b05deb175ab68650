import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CheckReport, runCheck } from '../../src/cli/check.js';

const PROTO = 'protos/flaky_test.proto';
const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function check(...argv: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCheck(argv, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr };
}

function durationSeconds(text: string): number {
  const match = /^(\d*(?:\.\d+)?)s$/.exec(text);
  if (match === null) {
    throw new Error(`test helper: unexpected duration ${text}`);
  }
  return Number(match[1]);
}

/** Independent computation of the worst-case wait (ms) of the first policy of examples/service-config.json. */
function expectedWorstCaseMs(attempts: number): number {
  const json = JSON.parse(readFileSync('examples/service-config.json', 'utf8'));
  const policy = json.methodConfig[0].retryPolicy;
  const initial = durationSeconds(policy.initialBackoff) * 1000;
  const max = durationSeconds(policy.maxBackoff) * 1000;
  let total = 0;
  for (let n = 1; n < attempts; n++) {
    total += Math.min(initial * policy.backoffMultiplier ** (n - 1), max) * 1.2;
  }
  return Math.round(total * 1000) / 1000;
}

describe('check: valid configs', () => {
  it('explains examples/service-config.json and exits 0', async () => {
    const run = await check('examples/service-config.json');
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`methodConfig[0]: ${SERVICE}/*`);
    expect(run.stdout).toContain(`methodConfig[1]: ${SERVICE}/ServerStream`);
    expect(run.stdout).toContain('attempts: 4 (1 initial + up to 3 retries)');
    expect(expectedWorstCaseMs(4)).toBe(840);
    expect(run.stdout).toContain(`worst-case wait between attempts: ${expectedWorstCaseMs(4)} ms in total`);
    expect(run.stdout).toContain('retryable codes: UNAVAILABLE (14), RESOURCE_EXHAUSTED (8)');
    expect(run.stdout).toContain('maxTokens 10, tokenRatio 0.1');
    expect(run.stdout).toContain('tokens <= 5 (maxTokens / 2)');
    expect(run.stdout).toContain('5 consecutive failures reach the threshold');
  });

  it('reports clamped attempts with a custom limit', async () => {
    const run = await check('examples/service-config.json', '--max-attempts-limit', '3');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('attempt limit 3');
    expect(run.stdout).toContain('attempts: 3 (1 initial + up to 2 retries; clamped from maxAttempts 4');
    expect(run.stdout).toContain(`${expectedWorstCaseMs(3)} ms in total`);
  });

  it('reports clamping by the default limit of 5', async () => {
    const run = await check('test/fixtures/unqualified-service-config.json');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('attempts: 5 (1 initial + up to 4 retries; clamped from maxAttempts 7');
    expect(run.stdout).toContain('1.8 s in total');
    expect(run.stdout).toContain('retryThrottling: none');
  });

  it('explains a hedging policy', async () => {
    const run = await check('examples/hedging-config.json');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`methodConfig[0]: ${SERVICE}/Unary`);
    expect(run.stdout).toContain('hedging policy');
    expect(run.stdout).toContain('non-fatal codes: UNAVAILABLE (14)');
    expect(run.stdout).toContain('last hedge leaves 20 ms after the call starts');
  });

  it('prints the JSON report with --json', async () => {
    const run = await check('--json', 'examples/service-config.json', '--max-attempts-limit=3');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.valid).toBe(true);
    expect(report.error).toBeUndefined();
    expect(report.maxAttemptsLimit).toBe(3);
    expect(report.warnings).toEqual([]);
    expect(report.throttling).toEqual({
      maxTokens: 10,
      tokenRatio: 0.1,
      thresholdTokens: 5,
      failuresToThreshold: 5,
    });
    expect(report.entries).toHaveLength(2);
    expect(report.entries[0]).toMatchObject({
      index: 0,
      names: [`${SERVICE}/*`],
      policy: {
        kind: 'retry',
        configuredMaxAttempts: 4,
        maxAttempts: 3,
        clamped: true,
        retryableStatusCodes: ['UNAVAILABLE'],
        backoffsMs: [100, 200],
        worstCaseWaitMs: expectedWorstCaseMs(3),
      },
    });
    const hedging = JSON.parse((await check('examples/hedging-config.json', '--json')).stdout) as CheckReport;
    expect(hedging.entries[0]?.policy).toMatchObject({ kind: 'hedging', maxAttempts: 2, lastHedgeAtMs: 20 });
  });
});

describe('check: --proto', () => {
  it('finds no warnings for the example configs', async () => {
    for (const file of ['examples/service-config.json', 'examples/hedging-config.json']) {
      const run = await check(file, '--proto', PROTO, '--json');
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as CheckReport).warnings).toEqual([]);
    }
  });

  it('hints at the package of an unqualified service name, without failing', async () => {
    const run = await check('test/fixtures/unqualified-service-config.json', '--proto', PROTO);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('warning: methodConfig[0].name[0]:');
    expect(run.stdout).toContain(`did you mean ${SERVICE}?`);
    const json = JSON.parse(
      (await check('test/fixtures/unqualified-service-config.json', `--proto=${PROTO}`, '--json')).stdout,
    ) as CheckReport;
    expect(json.valid).toBe(true);
    expect(json.warnings).toHaveLength(1);
    expect(json.warnings[0]?.path).toBe('methodConfig[0].name[0]');
    expect(json.warnings[0]?.message).toContain(`did you mean ${SERVICE}?`);
  });

  it('warns about unknown methods and services', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'grh-check-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        methodConfig: [
          { name: [{}, { service: SERVICE, method: 'unary' }, { service: SERVICE, method: 'Nope' }] },
          { name: [{ service: 'other.Thing' }, { service: SERVICE, method: 'Bidi' }] },
        ],
      }),
    );
    const report = JSON.parse((await check(file, '--proto', PROTO, '--json')).stdout) as CheckReport;
    expect(report.warnings.map((w) => w.path)).toEqual([
      'methodConfig[0].name[1]',
      'methodConfig[0].name[2]',
      'methodConfig[1].name[0]',
    ]);
    expect(report.warnings[0]?.message).toContain('did you mean Unary?');
    expect(report.warnings[1]?.message).toContain('its methods are Unary, ServerStream, ClientStream, Bidi');
    expect(report.warnings[2]?.message).toContain(`known services: ${SERVICE}`);
  });

  it('exits 2 for an unreadable proto', async () => {
    const run = await check('examples/service-config.json', '--proto', 'protos/missing.proto');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('protos/missing.proto');
    expect(run.stderr).toContain('Usage: grpc-retry-hedging check');
  });
});

describe('check: invalid configs', () => {
  it('exits 1 and prints the error with its path to stderr', async () => {
    const run = await check('test/fixtures/bad-service-config.json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'test/fixtures/bad-service-config.json: methodConfig[0].retryPolicy.maxAttempts: ' +
        'must be an integer greater than 1, got 1',
    );
  });

  it('reports the error in the JSON report', async () => {
    const run = await check('test/fixtures/bad-service-config.json', '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).toMatchObject({
      valid: false,
      entries: [],
      throttling: null,
      warnings: [],
      error: { path: 'methodConfig[0].retryPolicy.maxAttempts' },
    });
    expect(report.error?.message).toContain('methodConfig[0].retryPolicy.maxAttempts');
  });
});

describe('check: usage errors', () => {
  it.each<[string, string[], string]>([
    ['no config file', [], 'missing the service config file'],
    ['an unknown flag', ['examples/service-config.json', '--verbose'], 'unknown option --verbose'],
    ['two config files', ['a.json', 'b.json'], 'unexpected argument b.json'],
    ['--proto without a value', ['examples/service-config.json', '--proto'], '--proto needs a value'],
    ['a bad limit', ['examples/service-config.json', '--max-attempts-limit', '0'], 'integer >= 1'],
    ['a non-numeric limit', ['examples/service-config.json', '--max-attempts-limit=five'], 'integer >= 1'],
    ['a missing config file', ['test/fixtures/does-not-exist.json'], 'cannot read the service config file'],
  ])('exits 2 for %s', async (_label, argv, fragment) => {
    const run = await check(...argv);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(fragment);
    expect(run.stderr).toContain('Usage: grpc-retry-hedging check');
  });

  it('prints the usage to stdout for --help', async () => {
    const run = await check('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: grpc-retry-hedging check');
  });
});
