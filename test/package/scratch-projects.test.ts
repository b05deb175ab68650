import { describe, expect, it } from 'vitest';
import { lockfileClosure, wrapInAsyncMain } from './scratch-projects.js';

describe('lockfileClosure', () => {
  const repoLock = {
    packages: {
      '': { name: 'repo' },
      'node_modules/a': { version: '1.0.0', dev: true, dependencies: { b: '^2', c: '^1' } },
      'node_modules/a/node_modules/b': { version: '2.1.0', dependencies: { c: '^1' } },
      'node_modules/b': { version: '9.0.0' },
      'node_modules/c': { version: '1.2.0', optional: true },
      'node_modules/unrelated': { version: '3.0.0' },
    },
  };

  it('keeps the roots and what node would load for them, nested copies included, without dev flags', () => {
    const { manifest, lock } = lockfileClosure(repoLock, ['a']);
    expect(manifest.dependencies).toEqual({ a: '1.0.0' });
    expect(Object.keys(lock.packages).sort()).toEqual([
      '',
      'node_modules/a',
      'node_modules/a/node_modules/b',
      'node_modules/c',
    ]);
    expect(lock.packages['node_modules/a']).toEqual({ version: '1.0.0', dependencies: { b: '^2', c: '^1' } });
    expect(lock.packages['node_modules/c']).toEqual({ version: '1.2.0' });
  });

  it('names a root the lockfile lacks', () => {
    expect(() => lockfileClosure(repoLock, ['missing'])).toThrow('package-lock.json has no missing');
  });
});

describe('wrapInAsyncMain', () => {
  it('moves everything but the imports, multi-line ones included, into an async main', () => {
    const wrapped = wrapInAsyncMain("import {\n  x,\n} from 'x';\nimport 'y';\nawait x();\n");
    expect(wrapped.split('\n').slice(0, 8)).toEqual([
      'import {',
      '  x,',
      "} from 'x';",
      "import 'y';",
      '',
      'async function main(): Promise<void> {',
      '  await x();',
      '  ',
    ]);
    expect(wrapped).toContain('main().catch((error: unknown) => {');
  });
});
