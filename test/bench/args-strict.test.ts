import { describe, expect, it } from 'vitest';
import { numericArgs, parseArgs, UsageError } from '../../bench/lib/args.js';

const DEFAULTS = { rate: 200, write: 1 };

describe('a bench command line refuses what it would otherwise ignore', () => {
  it('refuses an unknown option without a value, which used to run the whole benchmark', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['--quick'] })).toThrow(
      'unknown option --quick (known: --rate, --write)',
    );
  });

  it('refuses short options, with or without a value', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['-n', '5'] })).toThrow('unknown option -n');
    expect(() => numericArgs(DEFAULTS, { argv: ['-x'] })).toThrow(UsageError);
  });

  it('refuses an argument without -- in a script that takes none', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['200'] })).toThrow('unexpected argument "200"');
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate=5', 'results.md'] })).toThrow(
      'unexpected argument "results.md"',
    );
  });

  it('hands the arguments without -- to a script that takes operands, and every one after --', () => {
    const parsed = parseArgs(DEFAULTS, { argv: ['a.csv', '--rate=5', '--', '--b.csv'], operands: true });
    expect(parsed.operands).toEqual(['a.csv', '--b.csv']);
    expect(parsed.options.rate).toBe(5);
  });

  it('refuses an empty value for an option read elsewhere', () => {
    expect(() => parseArgs(DEFAULTS, { argv: ['--out='], others: ['out'] })).toThrow(
      '--out needs a value, got an empty one',
    );
  });

  it('refuses a value out of its bounds, naming the bounds', () => {
    const limits = { rate: { above: 0 } };
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate=0'], limits })).toThrow(
      '--rate must be above 0, got 0',
    );
    expect(() =>
      numericArgs({ jobs: 2 }, { argv: ['--jobs=1.5'], limits: { jobs: { integer: true, min: 1 } } }),
    ).toThrow('--jobs must be a whole number, 1 or more, got 1.5');
  });
});
