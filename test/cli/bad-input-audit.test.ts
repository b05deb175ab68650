/**
 * `check` reports what the validator reports (an over-long timeout, duplicate keys, what createChannelOptions
 * rejects), fast on large invalid input, refuses a file too large to be a config, and every command refuses an
 * option that takes one value given twice.
 */
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/cli/check.js';
import { parseCommandArgs } from '../../src/cli/command-args.js';
import { runFlakyServerCommand } from '../../src/cli/flaky-server-command.js';
import { check } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-check-bad-input-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(SCRATCH, name);
  writeFileSync(path, text);
  return path;
}

const { retryPolicy } = RETRY_UNAVAILABLE_POLICY;

describe('check on large invalid JSON', () => {
  it('20 MB of spaces is reported quickly, at the end of the text', async () => {
    const path = file('spaces.json', ' '.repeat(20e6));
    const started = performance.now();
    const { code, stderr } = await check(path);
    expect(performance.now() - started).toBeLessThan(3000); // was 14.8 s and 957 MB
    expect(code).toBe(1);
    expect(stderr).toContain(
      `${path}:1:20000001: invalid JSON at line 1, column 20000001 (position 20000000): expected a value`,
    );
  });

  it('a file over 64 MiB is refused before it is read', async () => {
    const path = join(SCRATCH, 'huge.json');
    closeSync(openSync(path, 'w'));
    truncateSync(path, 64 * 1024 * 1024 + 1); // sparse: nothing is written
    const { code, stderr } = await check(path);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `check: cannot read the service config file ${path}: it is 67108865 bytes, over the 67108864 (64 MiB) that check reads: a service config is a few kilobytes, is this the right file?\n`,
    );
  });
});

describe('check warns of', () => {
  it('a timeout longer than a grpc-js server can time (kind timeout-over-limit; --strict fails)', async () => {
    const path = file(
      'long-timeout.json',
      JSON.stringify({ methodConfig: [{ name: [{ service: 'a.S' }], timeout: '3000000s' }] }),
    );
    const report = JSON.parse((await check(path, '--json')).stdout) as CheckReport;
    expect(report.valid).toBe(true);
    expect(report.warnings).toEqual([
      {
        path: 'methodConfig[0].timeout',
        message:
          'is longer than a grpc-js server can time (2147482647 ms, about 24.8 days) and is held at that: calls under this entry time out after 2147482647 ms, not 3000000000 ms',
        line: 1,
        column: 56,
        kind: 'timeout-over-limit',
      },
    ]);
    expect((await check(path, '--strict')).code).toBe(1);
  });

  it('a key written twice (kind duplicate-key), naming both lines', async () => {
    const path = file(
      'duplicate.json',
      '{\n  "methodConfig": [{"name": [{}], "timeout": "1s"}],\n  "methodConfig": []\n}\n',
    );
    const { code, stdout } = await check(path);
    expect(code).toBe(0);
    expect(stdout).toContain(
      `${path}:3:3: warning: methodConfig: is written more than once in its object (first at line 2, column 3): JSON keeps only the last one, so the one at line 2 is ignored`,
    );
    const report = JSON.parse((await check(path, '--json')).stdout) as CheckReport;
    expect(report.warnings.map((w) => w.kind)).toEqual(['duplicate-key']);
  });

  it('an entry without a name, once (as the validator does)', async () => {
    const path = file('noname.json', JSON.stringify({ methodConfig: [{ retryPolicy }] }));
    const report = JSON.parse((await check(path, '--json')).stdout) as CheckReport;
    expect(report.warnings).toEqual([
      expect.objectContaining({ path: 'methodConfig[0].name', kind: 'ineffective-policy' }),
    ]);
    expect(report.warnings[0]?.message).toMatch(/^is missing, so the entry matches no call/);
  });
});

describe('check fails what createChannelOptions rejects', () => {
  it.each([
    ['{"loadBalancingConfig": "round_robin"}', 'loadBalancingConfig', 1, 25],
    ['{"loadBalancingConfig": [{"round_robin": {}, "pick_first": {}}]}', 'loadBalancingConfig[0]', 1, 26],
    [
      '{"methodConfig": [{"name": [{}], "maxRequestMessageBytes": "99999999999999999999999"}]}',
      'methodConfig[0].maxRequestMessageBytes',
      1,
      60,
    ],
  ])('%s', async (text, path, line, column) => {
    const file_ = file('lb.json', text);
    const { code } = await check(file_, '--strict');
    expect(code).toBe(1);
    const report = JSON.parse((await check(file_, '--json')).stdout) as CheckReport;
    expect(report.errors).toEqual([expect.objectContaining({ path, line, column })]);
  });
});

describe('an option that takes one value, given twice', () => {
  const OPTIONS = {
    port: { type: 'string', short: 'p' },
    proto: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  } as const;

  it('is a usage error naming the option', () => {
    expect(() => parseCommandArgs(['--port', '0', '--port', '1'], OPTIONS, 0)).toThrow(
      '--port takes one value, but was given --port twice; give it once',
    );
    expect(() => parseCommandArgs(['-p', '0', '--port=1'], OPTIONS, 0)).toThrow(
      '--port takes one value, but was given -p and then --port; give it once',
    );
    expect(() => parseCommandArgs(['--port', '-1', '-p', '-2'], OPTIONS, 0)).toThrow(
      /--port takes one value/,
    );
  });

  it('repeatable options and flags may repeat', () => {
    const args = parseCommandArgs(
      ['--proto', 'a', '--proto', 'b', '--json', '--json', '--port', '1'],
      OPTIONS,
      0,
    );
    expect(args.values).toEqual({ proto: ['a', 'b'], json: true, port: '1' });
  });

  it('check and flaky-server exit 2', async () => {
    const path = file('ok.json', '{}');
    const { code, stderr } = await check(path, '--jitter', 'full', '--jitter', 'a6');
    expect(code).toBe(2);
    expect(stderr).toMatch(/^check: --jitter takes one value, but was given --jitter twice; give it once/);
    let err = '';
    const exit = await runFlakyServerCommand(['--port', '0', '--port', '1'], {
      stdout: () => {},
      stderr: (s) => {
        err += s;
      },
    });
    expect(exit).toBe(2);
    expect(err).toContain('--port takes one value, but was given --port twice; give it once');
  });
});
