/**
 * The `grpc-retry-hedging` command line: dispatches to a command, prints help, names a mistyped command.
 */

import { closestName } from '../util/closest-name.js';
import { packageVersion } from '../util/package-version.js';
import { runCheck } from './check.js';
import { type CommandIo, EXIT_CODE } from './command-io.js';
import { runFlakyServerCommand } from './flaky-server-command.js';

/** Help of the whole CLI (printed for `--help`, and with no arguments). */
export const CLI_USAGE = `Usage: grpc-retry-hedging <command> [options]

Commands:
  check <config.json | -> [--proto file.proto ...] [-I dir ...] [--json] [--strict] [--max-attempts-limit N]
        [--jitter S]
      Validate a gRPC service config, report every error with its line and column, and show the effective
      retry/hedging policy, timeouts and worst-case time of every entry.
  flaky-server [--port N] [--host 127.0.0.1] [--script file.json] [--proto file.proto ...] [-I dir ...]
        [--keep-case] [--no-flaky-test] [--max-receive-message-size BYTES] [-q]
      Run the scripted flaky test server (FlakyTest, and the services of your protos), to exercise your own
      client's retry configuration.

Options:
  -h, --help     show this help (or a command's: grpc-retry-hedging check --help, or help check)
  --version      print the package version

Exit codes: 0 ok, 1 invalid input or unreadable file, 2 usage error.
`;

const COMMANDS = ['check', 'flaky-server'] as const;

/**
 * Runs the CLI on `argv` (the arguments after the program name) and resolves with the exit code. With no
 * arguments it prints the help to stdout and exits 0, as `--help` does; an unknown command is a usage error (2)
 * naming the closest command.
 */
export async function runCli(argv: readonly string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'check':
      return runCheck(rest, io);
    case 'flaky-server':
      return runFlakyServerCommand(rest, io);
    case '--version':
      if (rest.length > 0) {
        return usageError(`unexpected argument ${JSON.stringify(rest[0])} after --version`, io);
      }
      io.stdout(`${packageVersion()}\n`);
      return EXIT_CODE.ok;
    case undefined:
    case '--help':
    case '-h':
    case 'help': {
      // `help check` (or `--help check`) is the command's own help.
      const [topic, ...extra] = rest;
      if (topic === undefined) {
        io.stdout(CLI_USAGE);
        return EXIT_CODE.ok;
      }
      if (extra.length === 0 && isCommand(topic)) {
        return runCli([topic, '--help'], io);
      }
      return usageError(`no help for ${JSON.stringify(rest.join(' '))}${commandHint(topic)}`, io);
    }
    default:
      if (command.startsWith('-')) {
        return usageError(
          `unknown option ${command} (options go after the command: <command> [options])`,
          io,
        );
      }
      return usageError(`unknown command ${JSON.stringify(command)}${commandHint(command)}`, io);
  }
}

function isCommand(name: string): name is (typeof COMMANDS)[number] {
  return (COMMANDS as readonly string[]).includes(name);
}

function commandHint(name: string): string {
  const match = closestName(name, COMMANDS);
  return match === undefined ? '' : `; did you mean "${match}"?`;
}

function usageError(message: string, io: CommandIo): number {
  io.stderr(`grpc-retry-hedging: ${message}\n\n${CLI_USAGE}`);
  return EXIT_CODE.usage;
}
