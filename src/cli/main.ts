#!/usr/bin/env node
import { runFlakyServerCommand } from '../testing/flaky-server-command.js';
import { runCheck } from './check.js';

const USAGE = `Usage: grpc-retry-hedging <command> [options]

Commands:
  check <config.json> [--proto file.proto ...] [--json] [--max-attempts-limit N]
      Validate a gRPC service config and show the effective retry/hedging policy of every entry.
  flaky-server [--port N] [--host 127.0.0.1] [--script file.json] [--quiet]
      Run the scripted flaky test server, to exercise your own client's retry configuration.

Exit codes: 0 ok, 1 invalid config, 2 usage error.
`;

const io = {
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
    case '--help':
    case '-h':
    case 'help':
      io.stdout(USAGE);
      return 0;
    case undefined:
      io.stderr(USAGE);
      return 2;
    default:
      io.stderr(`grpc-retry-hedging: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      return 2;
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
    process.exitCode = 1;
  },
);
