/**
 * What `check` reports, at the edges: the JSON report of a file that cannot be read and of a config that does not
 * validate (its `error`), the names of an invalid config checked against the protos where they are well-formed, the
 * wording of the name and idempotency warnings, the order of warnings on one line, and the timing fields.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { invalidReport } from '../../src/cli/check-report.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-report-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const PROTO = 'protos/flaky_test.proto';
const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
const DEMO_PROTO = 'protos/idempotency_demo.proto';
const DEMO_SERVICE = 'grpc_retry_hedging.demo.v1.Items';
const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;
const THROTTLING = { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } };

/** Writes `text` to a new file of the scratch directory. */
function writeText(name: string, text: string): string {
  const file = join(SCRATCH, name);
  writeFileSync(file, text);
  return file;
}

/** Writes `config` as JSON on one line. */
function write(name: string, config: object): string {
  return writeText(`${name}.json`, JSON.stringify(config));
}

/** The `--json` report of `check file ...argv`, with its exit code. */
async function jsonReport(file: string, ...argv: string[]): Promise<{ code: number; report: CheckReport }> {
  const run = await check(file, '--json', ...argv);
  return { code: run.code, report: JSON.parse(run.stdout) as CheckReport };
}

/** The `[kind, path, message]` of every warning of a report. */
function warningsOf(report: CheckReport): [string | undefined, string, string][] {
  return report.warnings.map((w) => [w.kind, w.path, w.message]);
}

describe('check --json: reports without entries', () => {
  it('gives a file that cannot be read one error, repeated as error, with no location and no warnings', async () => {
    const file = join(SCRATCH, 'does-not-exist.json');
    const { code, report } = await jsonReport(file);
    expect(code).toBe(1);
    const message = expect.stringMatching(
      /^cannot read the service config file .*does-not-exist\.json: ENOENT/,
    );
    expect(report).toEqual({
      valid: false,
      status: 'io-error',
      file,
      maxAttemptsLimit: 5,
      jitter: 'a6',
      entries: [],
      throttling: null,
      errors: [{ path: '', message }],
      warnings: [],
      error: { path: '', message },
    });
  });

  it('words the error of an invalid config as "file: path: message", or "file: message" for the whole config', async () => {
    const atPath = write('methodconfig-5', { methodConfig: 5 });
    expect((await jsonReport(atPath)).report.error).toEqual({
      path: 'methodConfig',
      message: `${atPath}: methodConfig: must be an array, got 5`,
    });
    const whole = writeText('array.json', '[]');
    expect((await jsonReport(whole)).report.error).toEqual({
      path: '',
      message: `${whole}: a service config must be a JSON object, got []`,
    });
  });

  it('words the error without a file name when the report names no file', () => {
    const report = invalidReport(
      { file: null, maxAttemptsLimit: 5, jitter: 'a6' },
      [{ path: 'methodConfig', message: 'must be an array, got 5' }],
      [],
      () => true,
    );
    expect(report.error).toEqual({ path: 'methodConfig', message: 'methodConfig: must be an array, got 5' });
  });

  it('reports status valid for a valid config', async () => {
    const { code, report } = await jsonReport('examples/service-config.json');
    expect(code).toBe(0);
    expect(report.status).toBe('valid');
  });
});

describe('check --proto on a config that does not validate', () => {
  it('reports the errors, without failing itself, whatever shape the config has', async () => {
    const cases: [string, string, string[]][] = [
      ['syntax.json', '{"methodConfig": [', ['']],
      ['methodconfig-not-array.json', '{"methodConfig": 5}', ['methodConfig']],
      [
        'entries-not-objects.json',
        '{"methodConfig": [{"name": 5}, 7, null]}',
        ['methodConfig[0].name', 'methodConfig[1]', 'methodConfig[2]'],
      ],
    ];
    for (const [name, text, paths] of cases) {
      const file = writeText(name, text);
      const run = await check(file, '--proto', PROTO);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${file}: invalid service config (${paths.length} error`);
      const { code, report } = await jsonReport(file, '--proto', PROTO);
      expect(code).toBe(1);
      expect(report.errors.map((e) => e.path)).toEqual(paths);
      expect(report.warnings).toEqual([]);
    }
  });

  it('checks a name whose method is null as a whole service, and leaves other malformed names to the errors', async () => {
    const file = write('malformed-names', {
      methodConfig: [
        {
          name: [
            { service: SERVICE, method: '' },
            { service: 'nope.v1.Null', method: null },
            { service: 'nope.v1.Number', method: 5 },
            { service: '' },
            { service: 'nope.v1.Object', method: {} },
          ],
          retryPolicy: { ...retryPolicy, maxAttempts: '3' },
        },
      ],
    });
    const { code, report } = await jsonReport(file, '--proto', PROTO);
    expect(code).toBe(1);
    expect(warningsOf(report)).toEqual([
      [
        'unmatched-name',
        'methodConfig[0].name[1]',
        `nope.v1.Null/* matches nothing: no service "nope.v1.Null" in the protos (known services: ${SERVICE})`,
      ],
    ]);
  });
});

describe('check --proto: names that match nothing', () => {
  const protoDir = mkdtempSync(join(SCRATCH, 'protos-'));
  const shop = join(protoDir, 'shop.proto');
  writeFileSync(
    shop,
    'syntax = "proto3";\npackage shop.v1;\nmessage M {}\n' +
      'service Items {\n  rpc Get_Item(M) returns (M);\n  rpc GetItem(M) returns (M);\n}\n',
  );
  const stock = join(protoDir, 'stock.proto');
  writeFileSync(
    stock,
    'syntax = "proto3";\npackage stock.v1;\nmessage M {}\nservice Items {\n  rpc Count(M) returns (M);\n}\n',
  );
  const messagesOnly = join(protoDir, 'messages.proto');
  writeFileSync(messagesOnly, 'syntax = "proto3";\npackage messages.v1;\nmessage M {}\n');

  const messages = async (names: object[], ...protos: string[]): Promise<string[]> => {
    const file = write('names', { methodConfig: [{ name: names }] });
    const { code, report } = await jsonReport(file, ...protos.flatMap((proto) => ['--proto', proto]));
    expect(code).toBe(0);
    return report.warnings.map((w) => w.message);
  };

  it('suggests every service of that name, in any package, and the package an unqualified name lacks', async () => {
    expect(
      await messages(
        [{ service: 'Items' }, { service: 'shop.v2.Items' }, { service: 'shop.v1.Itemz' }],
        shop,
        stock,
      ),
    ).toEqual([
      'Items/* matches nothing: no service "Items" in the protos (service names must include the proto package); ' +
        'did you mean shop.v1.Items or stock.v1.Items?',
      'shop.v2.Items/* matches nothing: no service "shop.v2.Items" in the protos; ' +
        'did you mean shop.v1.Items or stock.v1.Items?',
      'shop.v1.Itemz/* matches nothing: no service "shop.v1.Itemz" in the protos; did you mean shop.v1.Items?',
    ]);
    expect(await messages([{ service: 'FlakyTest' }], PROTO)).toEqual([
      'FlakyTest/* matches nothing: no service "FlakyTest" in the protos (service names must include the proto ' +
        `package); did you mean ${SERVICE}?`,
    ]);
  });

  it('lists the known services when none is close, and says none when the protos have none', async () => {
    expect(await messages([{ service: 'nope.v1.Other' }], shop, stock)).toEqual([
      'nope.v1.Other/* matches nothing: no service "nope.v1.Other" in the protos (known services: shop.v1.Items, stock.v1.Items)',
    ]);
    expect(await messages([{ service: 'a.B' }], messagesOnly)).toEqual([
      'a.B/* matches nothing: no service "a.B" in the protos (known services: none)',
    ]);
  });

  it('suggests the method that differs only in letter case before one that differs in more', async () => {
    expect(await messages([{ service: 'shop.v1.Items', method: 'getitem' }], shop)).toEqual([
      'shop.v1.Items/getitem matches no method: service shop.v1.Items has no method "getitem"; did you mean GetItem?',
    ]);
  });
});

describe('check --proto: methods not marked idempotent', () => {
  const idempotencyWarning = (policy: string, method: string, call: string): string =>
    `${policy} covers ${DEMO_SERVICE}/${method}, which its proto does not mark "option idempotency_level = ` +
    `IDEMPOTENT" or "NO_SIDE_EFFECTS": ${call} call may run more than once on the server`;

  it('names the policy and what it does to the call, for a retried and for a hedged method', async () => {
    const retried = await jsonReport('test/cli/fixtures/idempotency-config.json', '--proto', DEMO_PROTO);
    expect(retried.report.warnings.map((w) => w.message)).toEqual([
      idempotencyWarning('retryPolicy', 'CreateItem', 'a retried'),
    ]);
    const file = write('hedged-create', {
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        {
          name: [{ service: DEMO_SERVICE, method: 'CreateItem' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s' },
        },
      ],
    });
    const hedged = await jsonReport(file, '--proto', DEMO_PROTO);
    expect(warningsOf(hedged.report)).toEqual([
      [
        'not-idempotent',
        'methodConfig[0].name[0]',
        idempotencyWarning('hedgingPolicy', 'CreateItem', 'a hedged'),
      ],
    ]);
  });
});

describe('check: warnings in file order', () => {
  it('orders warnings on one line by column, whichever check found them', async () => {
    // The unknown field (found first, by the validator) comes after the timeout (found later) on the line.
    const file = write('one-line', {
      methodConfig: [{ name: [{ service: 'a.B' }], timeout: '0.05s', retryPolicy }],
      ...THROTTLING,
      extra: 1,
    });
    const { report } = await jsonReport(file);
    expect(report.warnings.map((w) => [w.kind, w.line])).toEqual([
      ['ineffective-policy', 1],
      ['unknown-field', 1],
    ]);
    const [first, second] = report.warnings;
    expect(first?.column).toBeLessThan(second?.column ?? 0);
    const text = (await check(file)).stdout;
    expect(text.indexOf('warning: methodConfig[0].timeout:')).toBeLessThan(text.indexOf('warning: extra:'));
  });
});

describe('check --json: timing and clamping', () => {
  it('gives the worst-case time of per-attempt timeouts when no timeout bounds it', async () => {
    const file = write('per-attempt', {
      methodConfig: [
        { name: [{ service: 'a.B' }], retryPolicy: { ...retryPolicy, perAttemptRecvTimeout: '0.5s' } },
      ],
      ...THROTTLING,
    });
    const { report } = await jsonReport(file);
    // 3 × 500 ms + (100 + 200) × 1.2 ms
    expect(report.entries[0]).toMatchObject({ worstCaseMs: 1860 });
    expect(report.entries[0]).not.toHaveProperty('timeoutMs');
  });

  it('marks a hedging policy clamped only when the attempt limit lowers its maxAttempts', async () => {
    const file = write('hedging-clamp', {
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        { name: [{ service: 'a.Two' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.1s' } },
        { name: [{ service: 'a.Three' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.1s' } },
        { name: [{ service: 'a.Four' }], hedgingPolicy: { maxAttempts: 4, hedgingDelay: '0.1s' } },
      ],
    });
    const { report } = await jsonReport(file, '--max-attempts-limit', '3');
    expect(report.entries.map((e) => e.policy)).toEqual([
      expect.objectContaining({
        configuredMaxAttempts: 2,
        maxAttempts: 2,
        clamped: false,
        lastHedgeAtMs: 100,
      }),
      expect.objectContaining({
        configuredMaxAttempts: 3,
        maxAttempts: 3,
        clamped: false,
        lastHedgeAtMs: 200,
      }),
      expect.objectContaining({
        configuredMaxAttempts: 4,
        maxAttempts: 3,
        clamped: true,
        lastHedgeAtMs: 200,
      }),
    ]);
  });
});
