/**
 * The output sinks shared by every command of the `grpc-retry-hedging` CLI.
 */

/** Where a command writes, and how a host (or a test) can stop a long-running command without a signal. */
export interface CommandIo {
  /** Receives complete text, each piece ending in a newline. */
  stdout(text: string): void;
  /** Receives complete text, each piece ending in a newline. */
  stderr(text: string): void;
  /** Aborting it stops a long-running command (the flaky server) like SIGINT does. */
  readonly signal?: AbortSignal;
  /** The whole of standard input, for a file argument of `-` (absent: such an argument cannot be read). */
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
