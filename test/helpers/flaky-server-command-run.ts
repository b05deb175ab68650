/**
 * Runs the CLI's `flaky-server` command in the test process, capturing its output, and stops every run a test
 * started (call {@link stopRuns} in `afterEach`).
 */
import { runFlakyServerCommand } from '../../src/cli/flaky-server-command.js';

/** Captures the command's output and lets the test wait for a line. */
export class CapturedIo {
  out = '';
  err = '';
  readonly controller = new AbortController();
  readonly signal: AbortSignal = this.controller.signal;
  stdout = (s: string): void => {
    this.out += s;
  };
  stderr = (s: string): void => {
    this.err += s;
  };

  async waitForOut(pattern: RegExp, timeoutMs = 2000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.out.match(pattern);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in output:\n${this.out}\n${this.err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

export interface CommandRun {
  readonly io: CapturedIo;
  /** The command's exit code, once it has stopped. */
  readonly exit: Promise<number>;
}

const running: CommandRun[] = [];

/** Starts the command with `argv`. */
export function startCommand(argv: string[]): CommandRun {
  const io = new CapturedIo();
  const run = { io, exit: runFlakyServerCommand(argv, io) };
  running.push(run);
  return run;
}

/** Stops every run started since the last call (as a signal would) and waits for each to exit. */
export async function stopRuns(): Promise<void> {
  for (const { io, exit } of running.splice(0)) {
    io.controller.abort();
    await exit;
  }
}
