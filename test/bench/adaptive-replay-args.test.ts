import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs `npm run replay:adaptive`'s script with `args`, as npm would, from the package root. */
function replay(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/adaptive-replay.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('replay:adaptive on a command-line mistake', () => {
  it('answers --help with its usage', () => {
    const run = replay('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('usage: npm run replay:adaptive');
    expect(run.stdout).toContain('--learn-outcomes=N');
  });

  it('names an unknown option, a missing trace and a bad count in one line, with exit code 2', () => {
    const unknown = replay('--learn', 'bench/traces');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('replay:adaptive: unknown option --learn');
    const missing = replay('no-such-trace.csv');
    expect(missing.status).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe(
      `replay:adaptive: no trace at ${join(ROOT, 'no-such-trace.csv')} (the argument "no-such-trace.csv")`,
    );
    const count = replay('--learn-outcomes=-1');
    expect(count.status).toBe(2);
    expect(count.stderr).toContain('--learn-outcomes must be a whole number of outcomes, 0 or more');
  });
});
