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

  it("prints a command's own help for help <command> and --help <command>", async () => {
    const own = capture();
    expect(await runCli(['check', '--help'], own)).toBe(0);
    for (const argv of [
      ['help', 'check'],
      ['--help', 'check'],
    ]) {
      const io = capture();
      expect(await runCli(argv, io)).toBe(0);
      expect(io.out).toBe(own.out);
      expect(io.out).not.toBe(CLI_USAGE);
    }
    const unknown = capture();
    expect(await runCli(['help', 'chek'], unknown)).toBe(2);
    expect(unknown.err).toMatch(/^grpc-retry-hedging: no help for "chek"; did you mean "check"\?\n/);
  });

  it('calls a leading dash an unknown option, not a command, and refuses arguments after --version', async () => {
    const option = capture();
    expect(await runCli(['--json', 'config.json'], option)).toBe(2);
    expect(option.err).toMatch(/^grpc-retry-hedging: unknown option --json \(options go after the command/);
    const version = capture();
    expect(await runCli(['--version', '--bogus'], version)).toBe(2);
    expect(version.err).toMatch(/^grpc-retry-hedging: unexpected argument "--bogus" after --version\n/);
    expect(version.out).toBe('');
  });
});
