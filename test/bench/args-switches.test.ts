import { describe, expect, it } from 'vitest';
import { numericArgs } from '../../bench/lib/args.js';

const DEFAULTS = { json: 0, write: 1, rate: 200 };
const read = (...argv: string[]) => numericArgs(DEFAULTS, { argv, switches: ['json', 'write'] });

describe('a bench switch', () => {
  it('is on when given alone, and takes 1, 0, true and false', () => {
    expect(read('--json')).toMatchObject({ json: 1 });
    expect(read('--json=1', '--write=0')).toMatchObject({ json: 1, write: 0 });
    expect(read('--json=true', '--write=false')).toMatchObject({ json: 1, write: 0 });
  });

  it('takes its value from the next argument only when it is one of those', () => {
    expect(read('--write', '0', '--rate', '5')).toEqual({ json: 0, write: 0, rate: 5 });
    expect(read('--json', '--write=0')).toMatchObject({ json: 1, write: 0 });
    expect(() => read('--json', '2')).toThrow('unexpected argument "2"');
  });

  it('refuses any other value, which used to count as on', () => {
    expect(() => read('--json=2')).toThrow('--json is a switch: --json, --json=1 or --json=0, got "2"');
    expect(() => read('--write=yes')).toThrow('--write is a switch');
    expect(() => read('--write=')).toThrow('--write is a switch');
  });
});
