import { describe, expect, it } from 'vitest';
import { numericArgs } from '../../bench/lib/args.js';

const DEFAULTS = { rate: 200, learnCalls: 300, noiseMs: 0 };

describe("the benchmarks' numeric options", () => {
  it('reads --kebab-case=number over the defaults, and leaves the rest at theirs', () => {
    expect(numericArgs(DEFAULTS, { argv: ['--learn-calls=20', '--noise-ms=2.5'] })).toEqual({
      rate: 200,
      learnCalls: 20,
      noiseMs: 2.5,
    });
    expect(numericArgs(DEFAULTS, { argv: [] })).toEqual(DEFAULTS);
  });

  it('refuses an option it does not know, naming it and the known ones', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['--noise-burst=20'] })).toThrow(
      'unknown option --noise-burst (known: --rate, --learn-calls, --noise-ms)',
    );
  });

  it('lets through the options read elsewhere, and refuses other unknown ones', () => {
    expect(numericArgs(DEFAULTS, { argv: ['--trace=/tmp/t.csv'], others: ['trace'] })).toEqual(DEFAULTS);
    expect(() => numericArgs(DEFAULTS, { argv: ['--out=x'], others: ['trace'] })).toThrow(
      'unknown option --out (known: --rate, --learn-calls, --noise-ms, --trace)',
    );
  });

  it('refuses a value that is not a number', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate=fast'] })).toThrow(
      '--rate must be a number, got "fast"',
    );
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate='] })).toThrow('--rate must be a number, got ""');
  });

  it('refuses one of its options given with no value at all, which would leave the default in force', () => {
    expect(() => numericArgs(DEFAULTS, { argv: ['--rate'] })).toThrow('--rate needs a value');
    expect(() => numericArgs(DEFAULTS, { argv: ['--trace'], others: ['trace'] })).toThrow(
      '--trace needs a value',
    );
  });

  it('answers --help with every option and its default', () => {
    const said: string[] = [];
    const opts = numericArgs(DEFAULTS, { argv: ['-h'], others: ['trace'], help: (text) => said.push(text) });
    expect(said).toEqual(['--rate=200\n--learn-calls=300\n--noise-ms=0\n--trace=…']);
    expect(opts).toEqual(DEFAULTS);
  });
});
