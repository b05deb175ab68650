#!/usr/bin/env node
import type { CommandIo } from './command-io.js';
import { EXIT_CODE } from './command-io.js';
import { runCli } from './run-cli.js';

/**
 * Writes lines to `stream` until its reader goes away. A reader that stops early (`check big.json | head -1`) closes
 * the pipe, and the next write fails with EPIPE: an 'error' event with no listener, which crashed the command with a
 * stack trace and exit code 1 (the code of an invalid config). The rest of the output is dropped instead, and the
 * command ends with its own exit code. Any other stream error is thrown, as Node would.
 */
function lineWriter(stream: NodeJS.WriteStream): (text: string) => void {
  let readerGone = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') {
      throw error;
    }
    readerGone = true;
  });
  return (text) => {
    if (!readerGone) {
      stream.write(text.endsWith('\n') ? text : `${text}\n`);
    }
  };
}

const io: CommandIo = {
  stdout: lineWriter(process.stdout),
  stderr: lineWriter(process.stderr),
  // Read a chunk at a time, and no further than the command's byte cap (`yes | check -` is refused at 64 MiB).
  stdin: process.stdin,
};

runCli(process.argv.slice(2), io).then(
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
