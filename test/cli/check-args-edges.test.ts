/**
 * Edges of `check`'s command line and output streams: the --max-attempts-limit values it takes, the file a usage
 * error's JSON names, a config whose name merely contains ".proto", what --json keeps off stderr, the --strict count,
 * standard input at exactly the size cap, and an error that is no usage mistake.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECK_USAGE, type CheckReport, MAX_CONFIG_BYTES, runCheck } from '../../src/cli/check.js';
import { captureRun, check } from '../helpers/check-run.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-args-edges-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const EXAMPLE = 'examples/service-config.json';

describe('check --max-attempts-limit', () => {
  it('takes 1, the lowest limit', async () => {
    const run = await check(EXAMPLE, '--max-attempts-limit', '1');
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('valid service config (2 methodConfig entries, attempt limit 1, jitter a6)');
  });

  it('takes a limit of more than one digit', async () => {
    const run = await check(EXAMPLE, '--max-attempts-limit', '10');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('attempt limit 10,');
    expect(run.stdout).toContain('attempts: 4 (1 initial + up to 3 retries)');
  });

  it.each(['+5', '1e3', '5.0', '0x10', ' 5', '5 '])(
    'refuses %j, which is a number but not written as a plain integer (exit 2)',
    async (limit) => {
      const run = await check(EXAMPLE, `--max-attempts-limit=${limit}`);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `check: --max-attempts-limit must be an integer >= 1, got ${limit}\n\n${CHECK_USAGE}`,
      );
    },
  );
});

describe('check --json, for a usage error', () => {
  it('names the .json argument as the file, not the value of an option before it', async () => {
    const run = await check('--json', '--max-attempts-limit', 'five', 'my-config.json');
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report).toMatchObject({ status: 'usage-error', file: 'my-config.json' });
    expect(run.stderr).toBe('check: --max-attempts-limit must be an integer >= 1, got five\n');
  });

  it('does not take an option whose value ends in .json for the file', async () => {
    const run = await check('--jitter=random.json', 'my-config.json', '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'usage-error', file: 'my-config.json' });
  });

  it('names no file when no argument ends in .json', async () => {
    const run = await check('-', '--json', '--max-attempts-limit', '0');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'usage-error', file: null });
  });
});

describe('check of a config whose name contains .proto before its extension', () => {
  it('reads it as the config', async () => {
    const path = join(SCRATCH, 'service.proto.json');
    writeFileSync(path, '{}');
    const run = await check(path);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/: valid service config \(0 methodConfig entries/);
  });
});

describe('check --json keeps stderr empty', () => {
  it('for an invalid config: the errors are in the JSON only', async () => {
    const run = await check('test/fixtures/bad-service-config.json', '--json');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ valid: false, status: 'invalid' });
  });

  it('for a valid config that --strict fails on its warnings', async () => {
    const run = await check(EXAMPLE, '--max-attempts-limit', '1', '--strict', '--json');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect((JSON.parse(run.stdout) as CheckReport).warnings).toHaveLength(2);
  });
});

describe('check --strict', () => {
  it('counts the warnings it fails on in the plural', async () => {
    const run = await check(EXAMPLE, '--max-attempts-limit', '1', '--strict');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('2 warnings');
    expect(run.stderr).toBe('check: --strict: 2 warnings\n');
  });
});

describe('check - (standard input read whole)', () => {
  it('reads a config of exactly the 64 MiB cap', async () => {
    const text = `{}${' '.repeat(MAX_CONFIG_BYTES - 2)}`;
    const { code, stdout, stderr } = await captureRun((io) => runCheck(['-'], io), {
      readStdin: async () => text,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^<stdin>: valid service config/);
  });
});

describe('check, when writing its output fails', () => {
  it('passes the error on rather than reporting it as a usage error', async () => {
    let stderr = '';
    const failure = new Error('stdout is gone');
    const run = runCheck(['--help'], {
      stdout: () => {
        throw failure;
      },
      stderr: (s) => {
        stderr += s;
      },
    });
    await expect(run).rejects.toBe(failure);
    expect(stderr).toBe('');
  });
});
