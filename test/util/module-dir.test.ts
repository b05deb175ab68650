/**
 * `moduleDir`: the directory the running module is in, as each build reads it. Bundled with esbuild (as tsup builds
 * dist/) and run in a child Node: the ESM build, the CJS build, and the ESM source bundled into CommonJS.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'grh-module-dir-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bundle(format: 'esm' | 'cjs', outfile: string): string {
  const path = join(dir, outfile);
  buildSync({
    entryPoints: ['src/util/module-dir.ts'],
    bundle: true,
    platform: 'node',
    format,
    outfile: path,
    logLevel: 'silent',
  });
  return path;
}

/** What `node -e <code>` prints, run from another directory than the module's. */
function nodeEval(code: string): string {
  const run = spawnSync(process.execPath, ['-e', code], { cwd: tmpdir(), encoding: 'utf8' });
  expect(run.stderr).toBe('');
  return run.stdout.trim();
}

describe('moduleDir', () => {
  it("is the ESM build's directory when imported from `node -e`, whose CommonJS eval sets a global __dirname of '.'", () => {
    const url = pathToFileURL(bundle('esm', 'module-dir.mjs')).href;
    expect(nodeEval(`import(${JSON.stringify(url)}).then((m) => console.log(m.moduleDir()))`)).toBe(dir);
  });

  it("is the CJS build's directory, and that of the ESM source bundled into CommonJS (an empty import.meta)", () => {
    const cjs = bundle('cjs', 'module-dir.cjs');
    expect(nodeEval(`console.log(require(${JSON.stringify(cjs)}).moduleDir())`)).toBe(dir);
  });
});
