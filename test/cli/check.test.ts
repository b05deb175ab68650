import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CheckReport, runCheck } from '../../src/cli/check.js';
import { WARNINGS_AFTER_ERRORS } from '../../src/cli/check-render.js';
import { type CheckRun, captureRun, check } from '../helpers/check-run.js';

// Every file a test writes goes under one scratch directory, removed when the file's tests end.
const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const FIXTURES = 'test/cli/fixtures';
const DEMO_PROTO = 'protos/idempotency_demo.proto';

const PROTO = 'protos/flaky_test.proto';
const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';

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
    // maxAttempts 4 under a limit of 3: the calls keep to 3, and the report says so.
    expect(report.warnings.map((w) => [w.kind, w.path])).toEqual([
      ['attempts-over-limit', 'methodConfig[0].retryPolicy.maxAttempts'],
    ]);
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
  it('finds every name of the example configs in the proto (only idempotency warnings remain)', async () => {
    for (const file of ['examples/service-config.json', 'examples/hedging-config.json']) {
      const run = await check(file, '--proto', PROTO, '--json');
      expect(run.code).toBe(0);
      const kinds = (JSON.parse(run.stdout) as CheckReport).warnings.map((w) => w.kind);
      expect(kinds.filter((kind) => kind !== 'not-idempotent')).toEqual([]);
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
    const names = json.warnings.filter((w) => w.kind === 'unmatched-name');
    expect(names).toHaveLength(1);
    expect(names[0]).toMatchObject({ path: 'methodConfig[0].name[0]', line: 4, column: 16 });
    expect(names[0]?.message).toContain(`did you mean ${SERVICE}?`);
  });

  it('warns about unknown methods and services', async () => {
    const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        methodConfig: [
          { name: [{}, { service: SERVICE, method: 'unary' }, { service: SERVICE, method: 'Nope' }] },
          { name: [{ service: 'other.Thing' }, { service: SERVICE, method: 'Bidi' }] },
          { name: [{ service: SERVICE, method: 'Unray' }, { service: `${SERVICE}s` }] },
        ],
      }),
    );
    const all = (JSON.parse((await check(file, '--proto', PROTO, '--json')).stdout) as CheckReport).warnings;
    const report = { warnings: all.filter((w) => w.kind === 'unmatched-name') };
    expect(report.warnings.map((w) => w.path)).toEqual([
      'methodConfig[0].name[1]',
      'methodConfig[0].name[2]',
      'methodConfig[1].name[0]',
      'methodConfig[2].name[0]',
      'methodConfig[2].name[1]',
    ]);
    expect(report.warnings[0]?.message).toContain('did you mean Unary?');
    expect(report.warnings[1]?.message).toContain('its methods are Unary, ServerStream, ClientStream, Bidi');
    expect(report.warnings[2]?.message).toContain(`known services: ${SERVICE}`);
    // Misspellings: a letter swapped in a method, one added to a service.
    expect(report.warnings[3]?.message).toContain('did you mean Unary?');
    expect(report.warnings[4]?.message).toContain(`did you mean ${SERVICE}?`);
  });

  it('checks the names of a config that does not validate too, where they are well-formed', async () => {
    const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify(
        {
          methodConfig: [
            {
              name: [
                { service: SERVICE, method: 'unary' },
                { service: 7 },
                { service: SERVICE, method: null },
              ],
              retryPolicy: { maxAttempts: '3' },
            },
            { name: [{ service: 'FlakyTest' }] },
          ],
        },
        null,
        2,
      ),
    );
    const run = await check(file, '--proto', PROTO, '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.status).toBe('invalid');
    expect(report.errors.map((e) => e.path)).toContain('methodConfig[0].name[1].service');
    expect(report.warnings.map((w) => [w.path, w.kind, w.line])).toEqual([
      ['methodConfig[0].name[0]', 'unmatched-name', 5],
      ['methodConfig[1].name[0]', 'unmatched-name', 23],
    ]);
    expect(report.warnings[0]?.message).toContain('did you mean Unary?');
    expect(report.warnings[1]?.message).toContain(`did you mean ${SERVICE}?`);
    const text = await check(file, '--proto', PROTO);
    expect(text.stderr).toContain('warning: methodConfig[0].name[0]:');
  });

  it('exits 1 with one line for a missing proto', async () => {
    const run = await check('examples/service-config.json', '--proto', 'protos/missing.proto');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `check: cannot read the proto file protos/missing.proto: not found in the working directory (${process.cwd()})\n`,
    );
  });
});

describe('check: invalid configs', () => {
  it('exits 1 and prints the error as file:line:col: path: message to stderr', async () => {
    const run = await check('test/fixtures/bad-service-config.json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'test/fixtures/bad-service-config.json:6:24: methodConfig[0].retryPolicy.maxAttempts: ' +
        'must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)\n' +
        'test/fixtures/bad-service-config.json: invalid service config (1 error)\n' +
        `${WARNINGS_AFTER_ERRORS}\n`,
    );
  });

  it('prints every error at once, then the warnings, each at its line and column', async () => {
    const file = `${FIXTURES}/many-errors-config.json`;
    const run = await check(file);
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `${file}:7:24: methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1, got "3"; did you mean 3 (a number, not a string)?`,
      expect.stringMatching(
        /^test\/cli\/fixtures\/many-errors-config\.json:8:27: methodConfig\[0\]\.retryPolicy\.initialBackoff: must be a duration string .*, got 0\.1; write it as a string: "0\.1s" for 0\.1 seconds$/,
      ),
      expect.stringMatching(
        /:11:49: methodConfig\[0\]\.retryPolicy\.retryableStatusCodes\[1\]: must be a gRPC status code .*got "NOPE"$/,
      ),
      `${file}:15:37: retryThrottling.maxTokens: must be an integer greater than 0 and at most 1000, got 0`,
      `${file}:2:3: warning: methodconfig: unknown field "methodconfig" is ignored; did you mean "methodConfig"?`,
      `${file}:5:40: warning: methodConfig[0].name[0].methd: unknown field "methd" is ignored; did you mean "method"?`,
      `${file}: invalid service config (4 errors)`,
      WARNINGS_AFTER_ERRORS,
    ]);
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.status).toBe('invalid');
    expect(report.errors.map((e) => [e.path, e.line, e.column])).toEqual([
      ['methodConfig[0].retryPolicy.maxAttempts', 7, 24],
      ['methodConfig[0].retryPolicy.initialBackoff', 8, 27],
      ['methodConfig[0].retryPolicy.retryableStatusCodes[1]', 11, 49],
      ['retryThrottling.maxTokens', 15, 37],
    ]);
    expect(report.warnings.map((w) => [w.kind, w.path, w.line, w.column])).toEqual([
      ['unknown-field', 'methodconfig', 2, 3],
      ['unknown-field', 'methodConfig[0].name[0].methd', 5, 40],
    ]);
  });

  it('lists the errors in file order, whichever check found them (a timeout above its policy first)', async () => {
    const file = join(SCRATCH, 'order.json');
    writeFileSync(
      file,
      '{\n  "methodConfig": [\n    { "name": [{ "service": "a.B" }],\n      "timeout": "500ms",\n' +
        '      "retryPolicy": { "maxAttempts": 4, "initialBackoff": "1m", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": [14] } }\n  ]\n}\n',
    );
    const run = await check(file);
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(WARNINGS_AFTER_ERRORS);
    expect(lines.slice(0, -1).map((line) => line.slice(file.length).split(': ')[0])).toEqual([
      ':4:18',
      ':5:60',
      '',
    ]);
    expect(lines[0]).toContain('methodConfig[0].timeout: must be a duration string');
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.errors.map((e) => e.path)).toEqual([
      'methodConfig[0].timeout',
      'methodConfig[0].retryPolicy.initialBackoff',
    ]);
    expect(report.error?.path).toBe('methodConfig[0].timeout');
  });

  it('gives the warnings read off the JSON as written with the errors: load-balancing policies, tokenRatio', async () => {
    const file = join(SCRATCH, 'errors-and-written-warnings.json');
    writeFileSync(
      file,
      '{\n  "methodConfig": [{ "name": [{ "service": "a.B" }], "timeout": "5" }],\n' +
        '  "loadBalancingConfig": [{ "round_robbin": {} }],\n' +
        '  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1234 }\n}\n',
    );
    const run = await check(file);
    expect(run.code).toBe(1);
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.errors.map((e) => e.path)).toEqual(['methodConfig[0].timeout']);
    expect(report.warnings.map((w) => [w.kind, w.path, w.line])).toEqual([
      ['unknown-lb-policy', 'loadBalancingConfig', 3],
      ['ineffective-policy', 'retryThrottling.tokenRatio', 4],
    ]);
  });

  it('reports the error in the JSON report', async () => {
    const run = await check('test/fixtures/bad-service-config.json', '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).toMatchObject({
      valid: false,
      status: 'invalid',
      errors: [{ path: 'methodConfig[0].retryPolicy.maxAttempts', line: 6, column: 24 }],
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
    ['two config files', ['a.json', 'b.json'], 'unexpected argument "b.json"\n'],
    [
      'a proto after the config',
      ['a.json', 'protos/catalog_demo.proto'],
      'unexpected argument "protos/catalog_demo.proto"; did you mean --proto protos/catalog_demo.proto?',
    ],
    [
      'a proto as the config',
      ['protos/catalog_demo.proto'],
      '"protos/catalog_demo.proto" is a .proto file, not a service config; give the config first: check <config.json> --proto protos/catalog_demo.proto',
    ],
    ['an empty --proto', ['a.json', '--proto='], '--proto needs a value'],
    [
      'an unknown --jitter',
      ['a.json', '--jitter', 'random'],
      '--jitter must be one of a6, full, equal, decorrelated',
    ],
    ['--proto without a value', ['examples/service-config.json', '--proto'], '--proto needs a value'],
    ['a bad limit', ['examples/service-config.json', '--max-attempts-limit', '0'], 'integer >= 1'],
    ['a non-numeric limit', ['examples/service-config.json', '--max-attempts-limit=five'], 'integer >= 1'],
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

describe('check: file-system errors', () => {
  it('exits 1 with one line for a missing config file, and prints JSON with --json', async () => {
    const run = await check('test/fixtures/does-not-exist.json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.stderr).toMatch(
      /^check: cannot read the service config file test\/fixtures\/does-not-exist\.json: ENOENT/,
    );
    const json = await check('test/fixtures/does-not-exist.json', '--json');
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as CheckReport;
    expect(report).toMatchObject({
      valid: false,
      status: 'io-error',
      file: 'test/fixtures/does-not-exist.json',
    });
    expect(report.errors[0]?.message).toContain('cannot read the service config file');
  });

  it('prints JSON for a proto that cannot be loaded', async () => {
    const run = await check('examples/service-config.json', '--proto', 'nope.proto', '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.status).toBe('io-error');
    expect(report.errors).toEqual([
      {
        path: '',
        message: `cannot read the proto file nope.proto: not found in the working directory (${process.cwd()})`,
      },
    ]);
  });

  it('prints JSON for usage errors with --json, and exits 2', async () => {
    const run = await check('--json', '--bogus');
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).toMatchObject({ valid: false, status: 'usage-error', file: null });
    expect(report.errors).toEqual([{ path: '', message: 'unknown option --bogus' }]);
    expect(run.stderr).toBe('check: unknown option --bogus\n');
  });

  it('answers in JSON for a mistaken --json=1 too, naming the file it was given', async () => {
    const run = await check('examples/service-config.json', '--json=1');
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).toMatchObject({ status: 'usage-error', file: 'examples/service-config.json' });
    expect(report.errors).toEqual([{ path: '', message: '--json takes no value' }]);
  });

  it('names the range a negative --max-attempts-limit breaks, given as a separate argument', async () => {
    const run = await check('examples/service-config.json', '--max-attempts-limit', '-1');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^check: --max-attempts-limit must be an integer >= 1, got -1\n/);
  });
});

describe('check: --version', () => {
  it('prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const run = await check('--version');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${version}\n`);
  });
});

describe('check: proto include paths', () => {
  const lookupConfig = (): string => {
    const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        loadBalancingConfig: [{ round_robin: {} }],
        methodConfig: [
          {
            name: [{ service: 'fixture.api.Lookup', method: 'Find' }],
            hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s' },
          },
        ],
      }),
    );
    return file;
  };

  it('fails cleanly without the include path: one line, exit 1, no protobufjs warning leaked', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const run = await check(lookupConfig(), '--proto', `${FIXTURES}/protos/api/lookup.proto`);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        /^check: cannot load the proto file test\/cli\/fixtures\/protos\/api\/lookup\.proto: .*common\/ids\.proto.*add its directory with -I\)\n$/,
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it.each([
    ['-I', ['-I', `${FIXTURES}/protos`, '--proto', `${FIXTURES}/protos/api/lookup.proto`]],
    ['-Idir', [`-I${FIXTURES}/protos`, '--proto', `${FIXTURES}/protos/api/lookup.proto`]],
    [
      '--proto-path=dir',
      [`--proto-path=${FIXTURES}/protos`, '--proto', `${FIXTURES}/protos/api/lookup.proto`],
    ],
    [
      'a proto named relative to the include path',
      ['-I', `${FIXTURES}/protos`, '--proto', 'api/lookup.proto'],
    ],
  ])('loads an import from another folder with %s', async (_label, argv) => {
    const run = await check(lookupConfig(), ...argv, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as CheckReport).warnings).toEqual([]);
  });

  it('exits 1 with one line for a proto with a syntax error', async () => {
    const dir = mkdtempSync(join(SCRATCH, 'proto-'));
    writeFileSync(join(dir, 'broken.proto'), 'syntax = "proto3";\nservice S {\n  rpc M(\n}\n');
    const run = await check('examples/service-config.json', '--proto', join(dir, 'broken.proto'));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^check: cannot load the proto file .*broken\.proto: .+\n$/);
    expect(run.stderr.split('\n')).toHaveLength(2);
  });

  it('exits 1 with one line, and --json with its report, for an idempotency_level that names no level', async () => {
    const dir = mkdtempSync(join(SCRATCH, 'proto-'));
    const file = join(dir, 'level.proto');
    writeFileSync(
      file,
      'syntax = "proto3";\npackage bad.v1;\nmessage M {}\nservice S { rpc A(M) returns (M) { option idempotency_level = IDEMPOTNET; } }\n',
    );
    const message = `cannot use the proto file ${file}: bad.v1.S/A has idempotency_level "IDEMPOTNET", expected one of IDEMPOTENCY_UNKNOWN, NO_SIDE_EFFECTS, IDEMPOTENT`;
    const run = await check('examples/service-config.json', '--proto', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`check: ${message}\n`);
    const json = await check('examples/service-config.json', '--proto', file, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'io-error', error: { message } });
  });

  it('names the line and column of a type that does not resolve (protobufjs names neither)', async () => {
    const dir = mkdtempSync(join(SCRATCH, 'proto-'));
    const file = join(dir, 'typo.proto');
    writeFileSync(
      file,
      'syntax = "proto3";\nmessage Req {\n  Strnig id = 1;\n}\nservice S { rpc M(Req) returns (Req); }\n',
    );
    const run = await check('examples/service-config.json', '--proto', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `no such Type or Enum 'Strnig' in Type .Req, at ${file}:3:3: Strnig id = 1;\n`,
    );
  });

  it('exits 1 for an include path that does not exist', async () => {
    const run = await check('examples/service-config.json', '-I', 'no/such/dir', '--proto', PROTO);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('check: include path no/such/dir does not exist or is not a directory\n');
  });

  it('refuses -I without --proto as a usage error (an include path says where protos are)', async () => {
    const run = await check('examples/service-config.json', '-I', 'examples');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^check: -I\/--proto-path is used only with --proto/);
  });
});

describe('check: idempotency', () => {
  it('warns about every retried or hedged method its proto does not mark idempotent', async () => {
    const file = `${FIXTURES}/idempotency-config.json`;
    const run = await check(file, '--proto', DEMO_PROTO, '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.warnings).toEqual([
      {
        kind: 'not-idempotent',
        path: 'methodConfig[0].name[0]',
        line: 4,
        column: 16,
        message: expect.stringMatching(
          /^retryPolicy covers grpc_retry_hedging\.demo\.v1\.Items\/CreateItem, which its proto does not mark "option idempotency_level = IDEMPOTENT" or "NO_SIDE_EFFECTS"/,
        ),
      },
    ]);
    const text = await check(file, '--proto', DEMO_PROTO);
    expect(text.stdout).toContain(
      `${file}:4:16: warning: methodConfig[0].name[0]: retryPolicy covers grpc_retry_hedging.demo.v1.Items/CreateItem`,
    );
  });

  it('says nothing without --proto', async () => {
    const report = JSON.parse(
      (await check(`${FIXTURES}/idempotency-config.json`, '--json')).stdout,
    ) as CheckReport;
    expect(report.warnings).toEqual([]);
  });
});

describe('check: hedging behind one connection', () => {
  const write = (config: object): string => {
    const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
    writeFileSync(file, JSON.stringify(config, null, 2));
    return file;
  };
  const hedged = { name: [{ service: SERVICE }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' } };
  const retried = {
    name: [{ service: SERVICE, method: 'Unary' }],
    retryPolicy: {
      maxAttempts: 2,
      initialBackoff: '0.1s',
      maxBackoff: '1s',
      backoffMultiplier: 2,
      retryableStatusCodes: ['UNAVAILABLE'],
    },
  };

  const kinds = async (config: object) =>
    (JSON.parse((await check(write(config), '--json')).stdout) as CheckReport).warnings.map((w) => w.kind);

  it('warns for a hedging policy in a config without loadBalancingConfig', async () => {
    const file = write({ methodConfig: [retried, hedged] });
    const run = await check(file, '--json');
    expect(run.code).toBe(0);
    const warnings = (JSON.parse(run.stdout) as CheckReport).warnings;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      kind: 'hedging-one-connection',
      path: 'methodConfig[1].hedgingPolicy',
    });
    expect(warnings[0]?.message).toContain('no loadBalancingConfig, so grpc-js uses pick_first');
    expect(warnings[0]?.message).toContain('avoidTriedReplicas');
    expect((await check(file)).stdout).toContain(
      'warning: methodConfig[1].hedgingPolicy: the config has no loadBalancingConfig, so grpc-js uses pick_first,',
    );
  });

  it('warns when loadBalancingConfig names no policy grpc-js knows, and of the hedging under pick_first it means', async () => {
    const file = write({ loadBalancingConfig: [{ round_robbin: {} }], methodConfig: [hedged] });
    const run = await check(file, '--json');
    expect(run.code).toBe(0);
    const warnings = (JSON.parse(run.stdout) as CheckReport).warnings;
    expect(warnings.map((w) => [w.kind, w.path])).toEqual([
      ['unknown-lb-policy', 'loadBalancingConfig'],
      ['hedging-one-connection', 'methodConfig[0].hedgingPolicy'],
    ]);
    expect(warnings[0]?.message).toContain('"round_robbin" (did you mean round_robin?)');
    expect(warnings[1]?.message).toContain(
      'loadBalancingConfig names no policy grpc-js knows, so grpc-js uses pick_first',
    );
    expect(
      await kinds({ loadBalancingConfig: [{ grpclb: {} }, { round_robin: {} }], methodConfig: [hedged] }),
    ).toEqual([]);
  });

  it('warns for pick_first, not for round_robin or the replica-avoiding policy, nor for retries alone', async () => {
    expect(await kinds({ loadBalancingConfig: [{ pick_first: {} }], methodConfig: [hedged] })).toEqual([
      'hedging-one-connection',
    ]);
    expect(await kinds({ loadBalancingConfig: [{ round_robin: {} }], methodConfig: [hedged] })).toEqual([]);
    expect(
      await kinds({
        loadBalancingConfig: [{ 'grpc_retry_hedging.avoid_tried_replicas': {} }],
        methodConfig: [hedged],
      }),
    ).toEqual([]);
    expect(await kinds({ methodConfig: [retried] })).toEqual([]);
  });

  it('warns for the replica-avoiding policy around pick_first (one server to choose from), not around round_robin', async () => {
    const around = (child: object) => ({
      loadBalancingConfig: [{ 'grpc_retry_hedging.avoid_tried_replicas': { childPolicy: [child] } }],
      methodConfig: [hedged],
    });
    expect(await kinds(around({ pick_first: {} }))).toEqual(['hedging-one-connection']);
    expect(await kinds(around({ round_robin: {} }))).toEqual([]);
    const run = await check(write(around({ pick_first: {} })));
    expect(run.stdout).toContain('runs around pick_first (its childPolicy)');
  });
});

describe('check: timeouts and worst-case time', () => {
  const file = `${FIXTURES}/timeouts-config.json`;

  it('reports per-attempt timeouts, timeouts and the bounded worst case (a6 jitter)', async () => {
    const run = await check(file, '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    const [bounded, long, hedged, unbounded] = report.entries;
    // 4 attempts × 300 ms + (100 + 200 + 400) × 1.2 = 2040 ms, bounded by the 2 s timeout
    expect(bounded).toMatchObject({ timeoutMs: 2000, waitForReady: true, worstCaseMs: 2000 });
    expect(bounded?.policy).toMatchObject({ perAttemptTimeoutMs: 300, retryableStatusCodes: [] });
    // 3 × 1500 ms + (100 + 200) × 1.2 = 4860 ms, under the 10 s timeout
    expect(long).toMatchObject({ timeoutMs: 10000, worstCaseMs: 3 * 1500 + (100 + 200) * 1.2 });
    expect(hedged).toMatchObject({ timeoutMs: 5000, worstCaseMs: 5000 });
    expect(unbounded).toMatchObject({ worstCaseMs: null });
    expect(unbounded?.policy).toMatchObject({ perAttemptTimeoutMs: null });
    expect(bounded?.policy?.kind === 'retry' && bounded.policy.worstCaseWaitMs).toBe(840);
  });

  it('says when timeout and waitForReady apply, in the text report', async () => {
    const run = await check(file);
    expect(run.stdout).toContain(
      "timeout: 2 s (applied as the call's deadline when shorter than the caller's)",
    );
    expect(run.stdout).toContain('waitForReady: true (applied to every attempt');
    expect(run.stdout).toContain('per-attempt timeout: 300 ms (perAttemptRecvTimeout');
    expect(run.stdout).toContain('retryable codes: none (only attempts that exceed perAttemptRecvTimeout');
    expect(run.stdout).toContain(
      'worst-case time before the last attempt answers: 2 s (4 × 300 ms per attempt + 840 ms of backoff, bounded by the timeout)',
    );
    expect(run.stdout).toContain(
      'worst-case time before the last attempt answers: 4.86 s (3 × 1.5 s per attempt + 360 ms of backoff)',
    );
    expect(run.stdout).toContain('worst-case time: 5 s (the timeout; attempts have no timeout of their own)');
    expect(run.stdout).toContain('worst-case time: unbounded');
  });

  it.each([
    // full and equal jitter: at most the capped backoff; decorrelated: at most maxBackoff each
    ['full', 4 * 300 + (100 + 200 + 400), 3 * 1500 + (100 + 200)],
    ['equal', 4 * 300 + (100 + 200 + 400), 3 * 1500 + (100 + 200)],
    ['decorrelated', 2000, 3 * 1500 + 2 * 1000],
  ])('uses the worst case of --jitter %s', async (jitter, boundedMs, longMs) => {
    const report = JSON.parse((await check(file, '--json', '--jitter', jitter)).stdout) as CheckReport;
    expect(report.jitter).toBe(jitter);
    expect(report.entries[0]?.worstCaseMs).toBe(boundedMs);
    expect(report.entries[1]?.worstCaseMs).toBe(longMs);
  });
});

describe('check: the example of docs/cli.md', () => {
  it('prints exactly the output docs/cli.md shows for the file with many errors', async () => {
    const readme = readFileSync('docs/cli.md', 'utf8');
    const shown = /The last one prints every problem at once[\s\S]*?```text\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBeDefined();
    const run = await check('test/cli/fixtures/many-errors-config.json');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(shown);
  });
});

describe('check: unknown fields in a valid config', () => {
  it('warns at the key, exits 0, and reports them in JSON with kind unknown-field', async () => {
    const file = join(mkdtempSync(join(SCRATCH, 'config-')), 'config.json');
    writeFileSync(
      file,
      '{\n  "methodConfig": [{ "name": [{}], "retry_policy": {} }],\n  "retryThrottling": null\n}\n',
    );
    const run = await check(file);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${file}:2:36: warning: methodConfig[0].retry_policy: unknown field "retry_policy" is ignored; ` +
        'did you mean "retryPolicy"?',
    );
    expect(run.stdout).toContain('no retry or hedging policy');
    const report = JSON.parse((await check(file, '--json')).stdout) as CheckReport;
    expect(report.valid).toBe(true);
    expect(report.warnings).toEqual([
      {
        kind: 'unknown-field',
        path: 'methodConfig[0].retry_policy',
        line: 2,
        column: 36,
        message: 'unknown field "retry_policy" is ignored; did you mean "retryPolicy"?',
      },
    ]);
  });
});

describe('check: standard input', () => {
  function checkStdin(text: string | undefined, ...argv: string[]): Promise<CheckRun> {
    return captureRun(
      (io) => runCheck(['-', ...argv], io),
      text === undefined ? {} : { readStdin: async () => text },
    );
  }

  it('reads the config from - and names it <stdin> in the report and its diagnostics', async () => {
    const valid = await checkStdin(readFileSync('examples/service-config.json', 'utf8'));
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^<stdin>: valid service config/);
    const invalid = await checkStdin('{\n  "methodConfig": 5\n}\n');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^<stdin>:2:19: methodConfig: must be/);
    const json = JSON.parse((await checkStdin('{}', '--json')).stdout) as CheckReport;
    expect(json).toMatchObject({ file: '<stdin>', valid: true });
  });

  it('says so, with exit 1, where standard input cannot be read', async () => {
    const run = await checkStdin(undefined);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'check: cannot read the service config from standard input: standard input is not available here\n',
    );
  });
});

describe('check: --strict', () => {
  it('fails a valid config that has warnings, and passes one without', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grh-strict-'));
    try {
      const typo = join(dir, 'typo.json');
      writeFileSync(typo, '{"methodConfigs": []}');
      const lenient = await check(typo);
      expect(lenient.code).toBe(0);
      const strict = await check(typo, '--strict');
      expect(strict.code).toBe(1);
      expect(strict.stdout).toContain('valid service config');
      expect(strict.stderr).toBe('check: --strict: 1 warning\n');
      const json = await check(typo, '--strict', '--json');
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, warnings: [expect.anything()] });
      expect((await check('examples/service-config.json', '--strict')).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('labels a name that looks like a pattern as such (kind pattern-name), not as an unknown field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grh-pattern-'));
    try {
      const file = join(dir, 'wild.json');
      writeFileSync(
        file,
        JSON.stringify({ methodConfig: [{ name: [{ service: 'pkg.*' }], waitForReady: true }] }),
      );
      const run = await check(file, '--json');
      expect(JSON.parse(run.stdout).warnings).toEqual([
        expect.objectContaining({ kind: 'pattern-name', path: 'methodConfig[0].name[0].service' }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('check --json: the keys docs/cli.md lists are the keys it prints', () => {
  /** The bullets after "Its keys:" in docs/cli.md's --json paragraph: each bullet's leading `key` (and `key`). */
  function documented(): { top: string[]; diagnostic: string; bullets: string } {
    const cli = readFileSync('docs/cli.md', 'utf8');
    const start = cli.indexOf('`--json` always prints one JSON object, errors included. Its keys:');
    expect(start).toBeGreaterThan(0);
    const bullets = cli.slice(start, cli.indexOf('\n\n', cli.indexOf('\n- ', start)));
    const top = [...bullets.matchAll(/^- ((?:`\w+`(?: and )?)+):/gm)].flatMap((m) =>
      [...(m[1] ?? '').matchAll(/`(\w+)`/g)].map((k) => k[1] as string),
    );
    const diagnostic = /^- `errors` and `warnings`:[\s\S]*?(?=^- )/m.exec(bullets)?.[0] ?? '';
    return { top, diagnostic, bullets };
  }

  it('for every status, no key undocumented and none documented that none prints', async () => {
    const file = join(SCRATCH, 'json-keys.json');
    writeFileSync(
      file,
      JSON.stringify({
        methodConfig: [{ name: [{}], retryPolicy: { maxAttempts: 'x' } }],
        retryThrotling: {},
      }),
    );
    const runs = await Promise.all([
      check('--json', 'examples/service-config.json'),
      check('--json', file),
      check('--json', join(SCRATCH, 'no-such-file.json')),
      check('--json', '--no-such-option'),
    ]);
    const reports = runs.map((run) => JSON.parse(run.stdout) as Record<string, unknown>);
    expect(reports.map((r) => r.status)).toEqual(['valid', 'invalid', 'io-error', 'usage-error']);
    const printed = new Set(reports.flatMap((r) => Object.keys(r)));
    const { top, diagnostic } = documented();
    expect([...top].sort()).toEqual([...printed].sort());
    // every key of an error or a warning is named in their bullet
    const diagnostics = reports.flatMap((r) => [
      ...(r.errors as Record<string, unknown>[]),
      ...(r.warnings as Record<string, unknown>[]),
    ]);
    const diagnosticKeys = new Set(diagnostics.flatMap((d) => Object.keys(d)));
    expect([...diagnosticKeys].sort()).toEqual(['column', 'kind', 'line', 'message', 'path']);
    for (const key of diagnosticKeys) {
      expect(diagnostic).toContain(`\`${key}\``);
    }
  });

  it('line and column: present where an error is located in the file, absent from usage and read errors, as documented', async () => {
    const file = join(SCRATCH, 'json-located.json');
    writeFileSync(file, '{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": "x"}}]}');
    const invalid = JSON.parse((await check('--json', file)).stdout) as CheckReport;
    expect(invalid.errors[0]).toEqual(expect.objectContaining({ line: 1, column: expect.any(Number) }));
    for (const argv of [
      ['--json', join(SCRATCH, 'no-such-file.json')],
      ['--json', '--no-such-option'],
    ]) {
      const report = JSON.parse((await check(...argv)).stdout) as CheckReport;
      expect(report.errors).toHaveLength(1);
      expect(report.errors[0]).not.toHaveProperty('line');
      expect(report.errors[0]).not.toHaveProperty('column');
    }
    // the doc says so, rather than that every error has them
    expect(documented().diagnostic).toMatch(
      /`line` and\s+`column` \(1-based\) when it is located in the config file/,
    );
  });
});
