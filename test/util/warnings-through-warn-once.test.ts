/**
 * Every process warning of the package goes through src/util/warn-once.ts, so that the same code and text is given
 * once per process (docs/api.md, "Warnings"). Five warnings once called `process.emitWarning` directly and repeated
 * per channel-options call, interceptor or server; this keeps a new one from doing so.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('process warnings', () => {
  it('are emitted only by src/util/warn-once.ts', () => {
    const callers = sourceFiles(SRC)
      .filter((file) => /process\.emitWarning\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(callers).toEqual(['util/warn-once.ts']);
  });
});
