/**
 * Edges of the argument parsing: which argument a negative number is taken as the value of, and the messages of
 * the mistakes around it.
 */
import { describe, expect, it } from 'vitest';
import {
  type CommandArgs,
  type OptionSpec,
  parseCommandArgs,
  UsageError,
} from '../../src/cli/command-args.js';

const OPTIONS: OptionSpec = {
  name: { type: 'string' },
  port: { type: 'string', short: 'p' },
  verbose: { type: 'boolean', short: 'v' },
};

/** The parse of `argv`, or the message of the UsageError it is refused with. */
function parse(argv: string[], maxPositionals = 1): CommandArgs | string {
  try {
    return parseCommandArgs(argv, OPTIONS, maxPositionals);
  } catch (error) {
    if (error instanceof UsageError) {
      return error.message;
    }
    throw error;
  }
}

describe('a negative number after an argument', () => {
  it('is an unknown option after an unknown long option, which is the one named', () => {
    expect(parse(['--verbos', '-1'])).toBe('unknown option --verbos; did you mean --verbose?');
    expect(parse(['--colour', '-1'])).toBe('unknown option --colour');
  });

  it('is not the value of a short flag (one that takes no value), even when another short option takes one', () => {
    expect(parse(['-v', '-1'])).toBe('unknown option -1');
  });

  it('is not glued to a two-letter positional that ends in the letter of a short option', () => {
    expect(parse(['xp', '-1'])).toBe('unknown option -1');
  });

  it('is the value of a short option that takes one', () => {
    expect(parse(['-p', '-1'])).toMatchObject({ values: { port: '-1' }, positionals: [] });
  });
});

describe('an option that takes a value followed by an option', () => {
  it('needs a value even when that option holds a dash and digit further on', () => {
    expect(parse(['--name', '--retry-2'])).toBe('--name needs a value');
  });
});
