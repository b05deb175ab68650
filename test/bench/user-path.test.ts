import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userOutputPath, userPath } from '../../bench/lib/args.js';

describe('a path given to a bench script', () => {
  it('is read from the directory npm run was started in (INIT_CWD), not from the package root', () => {
    expect(userPath('seed-101.csv', { INIT_CWD: '/home/me/traces' }, '/repo')).toBe(
      '/home/me/traces/seed-101.csv',
    );
    expect(userPath('../out.csv', { INIT_CWD: '/home/me/traces' }, '/repo')).toBe('/home/me/out.csv');
  });

  it('is read from the working directory when the script runs without npm', () => {
    expect(userPath('t.csv', {}, '/repo/bench')).toBe('/repo/bench/t.csv');
  });

  it('stays as it is when absolute', () => {
    expect(userPath('/tmp/t.csv', { INIT_CWD: '/home/me' }, '/repo')).toBe('/tmp/t.csv');
  });

  it('is refused as a file to write when it is a directory', () => {
    const here = import.meta.dirname;
    expect(() => userOutputPath('--out', '.', { INIT_CWD: here })).toThrow(
      `--out: ${resolve(here)} is a directory`,
    );
    expect(userOutputPath('--out', 'new.csv', { INIT_CWD: here })).toBe(join(here, 'new.csv'));
  });
});
