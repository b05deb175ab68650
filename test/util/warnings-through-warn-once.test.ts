/**
 * Every process warning of the package goes through src/util/warn-once.ts, so that the same code and text is given
 * once per process (docs/api.md, "Warnings"). Five warnings once called `process.emitWarning` directly and repeated
 * per channel-options call, interceptor or server; this keeps a new one from doing so.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsFilesUnder } from '../helpers/ts-files.js';

const SRC = join(import.meta.dirname, '../../src');

describe('process warnings', () => {
  it('are emitted only by src/util/warn-once.ts', () => {
    const callers = tsFilesUnder(SRC)
      .filter((file) => /process\.emitWarning\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(callers).toEqual(['util/warn-once.ts']);
  });
});
