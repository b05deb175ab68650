import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locateProtoFile } from '../../src/util/proto-files.js';

const cwd = process.cwd();
let dir: string | undefined;

afterEach(() => {
  process.chdir(cwd);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A working directory holding `files` (relative paths), made the process's for the test. */
function workdir(files: string[]): string {
  dir = mkdtempSync(join(tmpdir(), 'proto-files-'));
  for (const file of files) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), 'syntax = "proto3";\n');
  }
  process.chdir(dir);
  return dir;
}

describe('locateProtoFile', () => {
  it('names the include directory left out when the file is below the working directory', () => {
    workdir(['protos/acme/billing.proto', 'node_modules/x/acme/billing.proto']);
    expect(locateProtoFile('acme/billing.proto', [])).toEqual({
      problem: `not found in the working directory (${process.cwd()}); it is under protos: add that directory to the include directories (-I protos on the command line, includeDirs: ["protos"] in code)`,
    });
  });

  it('quotes a directory with a space in the -I it suggests, so that the command line takes it whole', () => {
    workdir(['my protos/shop.proto', "it's here/a.proto"]);
    expect(locateProtoFile('shop.proto', [])).toEqual({
      problem: `not found in the working directory (${process.cwd()}); it is under my protos: add that directory to the include directories (-I 'my protos' on the command line, includeDirs: ["my protos"] in code)`,
    });
    expect(locateProtoFile('a.proto', [])).toMatchObject({
      problem: expect.stringContaining(`(-I 'it'\\''s here' on the command line,`),
    });
  });

  it('looks three levels down, not into node_modules or hidden directories, and says nothing when not found', () => {
    workdir(['a/b/c/deep.proto', 'node_modules/only.proto', '.git/hidden.proto', 'a/b/c/d/too-deep.proto']);
    expect(locateProtoFile('deep.proto', ['x'])).toMatchObject({
      problem: expect.stringContaining('; it is under a/b/c: add that directory'),
    });
    for (const file of ['only.proto', 'hidden.proto', 'too-deep.proto', 'none.proto']) {
      expect(locateProtoFile(file, [])).toEqual({
        problem: `not found in the working directory (${process.cwd()})`,
      });
    }
  });

  it('finds the file as given, then under the include directories', () => {
    const root = workdir(['protos/acme/billing.proto']);
    expect(locateProtoFile('protos/acme/billing.proto', [])).toEqual({
      path: join(root, 'protos/acme/billing.proto'),
    });
    expect(locateProtoFile('acme/billing.proto', ['protos'])).toEqual({
      path: join(root, 'protos/acme/billing.proto'),
    });
  });
});
