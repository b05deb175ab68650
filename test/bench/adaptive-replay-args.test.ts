import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs `npm run replay:adaptive`'s script with `args` from the package root, as npm would, with `env` added. */
function replay(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/adaptive-replay.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, INIT_CWD: ROOT, ...env },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Scratch directories made by a test, removed after it. */
const scratchDirs: string[] = [];

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'replay-args-'));
  scratchDirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of scratchDirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('replay:adaptive on a command-line mistake', () => {
  it('answers --help with its usage', () => {
    const run = replay(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: npm run replay:adaptive -- [options] [trace.csv|directory ...]');
    expect(run.stdout).toContain('--learn-outcomes=300');
  });

  it('names an unknown option, a missing trace and a bad count in one line, with exit code 2', () => {
    const unknown = replay(['--learn', 'bench/traces']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe(
      'replay:adaptive: unknown option --learn (known: --learn-outcomes)',
    );
    expect(unknown.stderr.split('\n')[1]).toContain('npm run replay:adaptive -- --help');
    const missing = replay(['no-such-trace.csv']);
    expect(missing.status).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe(
      `replay:adaptive: no trace at ${join(ROOT, 'no-such-trace.csv')} (the argument "no-such-trace.csv")`,
    );
    const count = replay(['--learn-outcomes=-1']);
    expect(count.status).toBe(2);
    expect(count.stderr).toContain('--learn-outcomes must be a whole number, 0 or more, got -1');
  });

  it('reads --learn-outcomes N, and a relative trace from where npm run was started', () => {
    const run = replay(['--learn-outcomes', '300', 'seed-101.csv'], {
      INIT_CWD: join(ROOT, 'bench', 'traces'),
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/\| bench\/traces\/seed-101\.csv +\| +a1 \|/);
  });

  it('refuses a file that is not a trace, or holds no outcome, in one line with exit code 2', () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'garbage.csv'), 'hello,world\n1,2\n');
    writeFileSync(join(dir, 'empty.csv'), '');
    writeFileSync(join(dir, 'header-only.csv'), 'ms,phase,delayUsedMs,latencyMs,superseded\n');
    const garbage = replay(['garbage.csv'], { INIT_CWD: dir });
    expect(garbage.status).toBe(2);
    expect(garbage.stderr.split('\n')[0]).toMatch(
      /^replay:adaptive: not a trace: .*garbage\.csv:1: expected the header/,
    );
    const empty = replay([join(dir, 'empty.csv')]);
    expect(empty.status).toBe(2);
    expect(empty.stderr.split('\n')[0]).toMatch(/^replay:adaptive: not a trace: .*empty\.csv: no header/);
    const headerOnly = replay([join(dir, 'header-only.csv')]);
    expect(headerOnly.status).toBe(2);
    expect(headerOnly.stderr.split('\n')[0]).toMatch(/header-only\.csv: a trace with no outcome$/);
  });

  it('replays every trace under a directory, and refuses one with none', () => {
    const run = replay(['bench/traces/in-bench']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/\| bench\/traces\/in-bench\/\S+\.csv /);
    const dir = scratchDir();
    mkdirSync(join(dir, 'nothing'));
    const none = replay(['nothing'], { INIT_CWD: dir });
    expect(none.status).toBe(2);
    expect(none.stderr.split('\n')[0]).toBe(
      `replay:adaptive: no .csv trace under ${join(dir, 'nothing')} (the argument "nothing")`,
    );
  });
});
