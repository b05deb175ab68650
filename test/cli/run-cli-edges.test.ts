/**
 * Edges of the top-level dispatch: `--version` alone, the short `-h`, and `help` with more than a command name.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECK_USAGE } from '../../src/cli/check.js';
import { CLI_USAGE, runCli } from '../../src/cli/run-cli.js';
import { type CheckRun, captureRun } from '../helpers/check-run.js';

const cli = (...argv: string[]): Promise<CheckRun> => captureRun((io) => runCli(argv, io));

describe('grpc-retry-hedging at the top level', () => {
  it('prints the package version and a newline for --version alone, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await cli('--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('prints the help for -h, as for --help', async () => {
    expect(await cli('-h')).toEqual({ code: 0, stdout: CLI_USAGE, stderr: '' });
    expect(await cli('-h', 'check')).toEqual({ code: 0, stdout: CHECK_USAGE, stderr: '' });
  });

  it('refuses help for a command followed by more words, naming all of them', async () => {
    const run = await cli('help', 'check', 'now');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`grpc-retry-hedging: no help for "check now"\n\n${CLI_USAGE}`);
    const other = await cli('--help', 'flaky', 'server');
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^grpc-retry-hedging: no help for "flaky server"/);
  });
});
