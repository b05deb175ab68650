import { describe, expect, it } from 'vitest';
import { numericArgs, parseArgs } from '../../bench/lib/args.js';

const DEFAULTS = { rate: 200, offsetMs: 0 };

describe('a bench option given as --name value', () => {
  it('reads the next argument as its value, as --name=value does', () => {
    expect(numericArgs(DEFAULTS, { argv: ['--rate', '50'] })).toEqual({ rate: 50, offsetMs: 0 });
    const parsed = parseArgs(DEFAULTS, { argv: ['--sweep', 'burst'], others: ['sweep'] });
    expect(parsed.values.get('sweep')).toBe('burst');
  });

  it('reads a negative number as the value', () => {
    expect(numericArgs(DEFAULTS, { argv: ['--offset-ms', '-1'] }).offsetMs).toBe(-1);
    expect(numericArgs(DEFAULTS, { argv: ['--offset-ms=-2.5'] }).offsetMs).toBe(-2.5);
  });

  it('does not take the next option as the value', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate', '--offset-ms=1'] })).toThrow(
      '--rate needs a value',
    );
    expect(() => parseArgs(DEFAULTS, { argv: ['--rate', '--', '5'], operands: true })).toThrow(
      '--rate needs a value',
    );
  });

  it('says each option given in one argument, --name=value, to pass it on', () => {
    const parsed = parseArgs(DEFAULTS, { argv: ['--rate', '50', '--sweep', 'burst'], others: ['sweep'] });
    expect(parsed.given).toEqual([
      { name: 'rate', arg: '--rate=50' },
      { name: 'sweep', arg: '--sweep=burst' },
    ]);
  });
});
