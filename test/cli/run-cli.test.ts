import { describe, expect, it } from 'vitest';
import { CLI_USAGE, runCli } from '../../src/cli/run-cli.js';

function capture() {
  const io = {
    out: '',
    err: '',
    stdout: (s: string) => {
      io.out += s;
    },
    stderr: (s: string) => {
      io.err += s;
    },
  };
  return io;
}

describe('the grpc-retry-hedging CLI', () => {
  it('with no arguments prints its help to stdout and exits 0, as --help does', async () => {
    const bare = capture();
    expect(await runCli([], bare)).toBe(0);
    expect(bare.out).toBe(CLI_USAGE);
    expect(bare.err).toBe('');
    const help = capture();
    expect(await runCli(['--help'], help)).toBe(0);
    expect(help.out).toBe(bare.out);
  });

  it('names the closest command for a misspelled one, and exits 2', async () => {
    const io = capture();
    expect(await runCli(['chek', 'config.json'], io)).toBe(2);
    expect(io.err).toMatch(/^grpc-retry-hedging: unknown command "chek"; did you mean "check"\?\n/);
    expect(io.out).toBe('');
    const far = capture();
    expect(await runCli(['deploy'], far)).toBe(2);
    expect(far.err).toMatch(/^grpc-retry-hedging: unknown command "deploy"\n/);
    const flaky = capture();
    await runCli(['flaky-sever'], flaky);
    expect(flaky.err).toMatch(/did you mean "flaky-server"\?/);
  });
});
