/**
 * The output sinks shared by every command of the `grpc-retry-hedging` CLI.
 */

import type { Readable } from 'node:stream';

/** Where a command writes, and how a host (or a test) can stop a long-running command without a signal. */
export interface CommandIo {
  /** Receives complete text, each piece ending in a newline. */
  stdout(text: string): void;
  /** Receives complete text, each piece ending in a newline. */
  stderr(text: string): void;
  /** Aborting it stops a long-running command (the flaky server) like SIGINT does. */
  readonly signal?: AbortSignal;
  /**
   * Standard input as a stream, for a file argument of `-`: read a chunk at a time, and destroyed once the input
   * passes the command's byte cap (`check`: 64 MiB). Preferred to {@link CommandIo.readStdin} when both are given.
   */
  readonly stdin?: Readable;
  /**
   * The whole of standard input, for a file argument of `-`, when {@link CommandIo.stdin} is absent (absent too:
   * such an argument cannot be read). Read whole, it is checked against the byte cap only once read: a host should
   * give `stdin` instead.
   */
  readStdin?(): Promise<string>;
}

/** Exit codes of every command. */
export const EXIT_CODE = {
  /** Success (warnings allowed). */
  ok: 0,
  /** Invalid input (a config or script that does not validate), or a file that cannot be read or loaded. */
  failure: 1,
  /** Bad command line. */
  usage: 2,
} as const;
