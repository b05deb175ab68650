#!/usr/bin/env node
import type { CommandIo } from './command-io.js';
import { EXIT_CODE } from './command-io.js';
import { runCli } from './run-cli.js';

const io: CommandIo = {
  stdout: (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  stderr: (text: string) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) {
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  },
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
