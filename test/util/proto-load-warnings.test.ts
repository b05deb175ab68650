/** `loadWithWarningsFolded`: a load's process warnings go into its error, on one line, and are never printed. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadWithWarningsFolded } from '../../src/util/proto-load-warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('loadWithWarningsFolded', () => {
  it('returns what a load returns, drops its warnings, and gives process.emitWarning back', () => {
    const original = process.emitWarning;
    const emitted = vi.fn();
    process.emitWarning = emitted as unknown as typeof process.emitWarning;
    try {
      const value = loadWithWarningsFolded(() => {
        process.emitWarning('dep.proto not found');
        return 42;
      }, 'add -I');
      expect(value).toBe(42);
      expect(emitted).not.toHaveBeenCalled();
      expect(process.emitWarning).toBe(emitted);
    } finally {
      process.emitWarning = original;
    }
  });

  it('folds the warnings, trimmed, and the hint into the error, on one line', () => {
    const original = process.emitWarning;
    expect(() =>
      loadWithWarningsFolded(() => {
        process.emitWarning('  missing/dep.proto not found in any of the include paths  ');
        process.emitWarning(new Error('\nsecond warning\n'));
        throw new Error('ENOENT: no such file,\n   open "missing/dep.proto"');
      }, 'add its directory with -I'),
    ).toThrow(
      new Error(
        'ENOENT: no such file, open "missing/dep.proto" (missing/dep.proto not found in any of the include paths; second warning; add its directory with -I)',
      ),
    );
    expect(process.emitWarning).toBe(original);
  });

  it('gives the error alone, on one line, when the load warned of nothing; a thrown string too', () => {
    expect(() =>
      loadWithWarningsFolded(() => {
        throw new Error('  bad syntax\n  at line 3  ');
      }, 'hint'),
    ).toThrow(new Error('bad syntax at line 3'));
    expect(() =>
      loadWithWarningsFolded(() => {
        throw 'plain text';
      }, 'hint'),
    ).toThrow(new Error('plain text'));
  });
});
