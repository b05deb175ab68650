import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined; // not a git checkout (e.g. an unpacked tarball): nothing to check
  }
}

describe('.gitignore', () => {
  it.skipIf(git(['rev-parse', '--git-dir']) === undefined)('ignores no tracked file', () => {
    expect(git(['ls-files', '--cached', '--ignored', '--exclude-standard'])).toBe('');
  });
});
