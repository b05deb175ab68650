#!/usr/bin/env node
import { runCheck } from './check.js';
import type { CommandIo } from './command-io.js';
import { EXIT_CODE } from './command-io.js';
import { runFlakyServerCommand } from './flaky-server-command.js';
import { packageVersion } from './package-version.js';

const USAGE = `Usage: grpc-retry-hedging <command> [options]

Commands:
  check <config.json> [--proto file.proto ...] [-I dir ...] [--json] [--max-attempts-limit N] [--jitter S]
      Validate a gRPC service config, report every error with its line and column, and show the effective
      retry/hedging policy, timeouts and worst-case time of every entry.
  flaky-server [--port N] [--host 127.0.0.1] [--script file.json] [--quiet]
      Run the scripted flaky test server, to exercise your own client's retry configuration.

Options:
  -h, --help     show this help (or a command's: grpc-retry-hedging check --help)
  --version      print the package version

Exit codes: 0 ok, 1 invalid input or unreadable file, 2 usage error.
`;

const io: CommandIo = {
  stdout: (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  stderr: (text: string) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'check':
      return runCheck(rest, io);
    case 'flaky-server':
      return runFlakyServerCommand(rest, io);
    case '--version':
      io.stdout(`${packageVersion()}\n`);
      return EXIT_CODE.ok;
    case '--help':
    case '-h':
    case 'help':
      io.stdout(USAGE);
      return EXIT_CODE.ok;
    case undefined:
      io.stderr(USAGE);
      return EXIT_CODE.usage;
    default:
      io.stderr(`grpc-retry-hedging: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      return EXIT_CODE.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `grpc-retry-hedging: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = EXIT_CODE.failure;
  },
);
