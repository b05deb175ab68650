import { runCheck } from '../../src/cli/check.js';

/** What one `check` run printed, and its exit code. */
export interface CheckRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `check` with `argv`, capturing what it prints. */
export async function check(...argv: string[]): Promise<CheckRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCheck(argv, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr };
}
