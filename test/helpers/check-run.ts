import { runCheck } from '../../src/cli/check.js';
import type { CommandIo } from '../../src/cli/command-io.js';

/** What one command run printed, and its exit code. */
export interface CheckRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command (`runCheck`, `runCli`, ...) with an io that captures what it prints; `extra` adds to that io. */
export async function captureRun(
  run: (io: CommandIo) => Promise<number>,
  extra: Partial<CommandIo> = {},
): Promise<CheckRun> {
  let stdout = '';
  let stderr = '';
  const code = await run({
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    ...extra,
  });
  return { code, stdout, stderr };
}

/** Runs `check` with `argv`, capturing what it prints. */
export function check(...argv: string[]): Promise<CheckRun> {
  return captureRun((io) => runCheck(argv, io));
}
