import { describe, expect, it } from 'vitest';
import {
  flagOption,
  type OptionSpec,
  parseCommandArgs,
  stringListOption,
  stringOption,
  UsageError,
} from '../../src/cli/command-args.js';

const OPTIONS: OptionSpec = {
  name: { type: 'string' },
  include: { type: 'string', short: 'I', multiple: true },
  port: { type: 'string', short: 'p' },
  json: { type: 'boolean' },
};

function usageMessage(argv: string[], maxPositionals = 1): string {
  try {
    parseCommandArgs(argv, OPTIONS, maxPositionals);
  } catch (error) {
    if (error instanceof UsageError) {
      return error.message;
    }
    throw error;
  }
  throw new Error('expected a UsageError');
}

describe('parseCommandArgs', () => {
  it('parses values, repeated options, short options with attached values and positionals', () => {
    const args = parseCommandArgs(
      ['file', '--name=x', '-Ia', '-I', 'b', '--include', 'c', '--json'],
      OPTIONS,
      1,
    );
    expect(args.positionals).toEqual(['file']);
    expect(stringOption(args, 'name')).toBe('x');
    expect(stringListOption(args, 'include')).toEqual(['a', 'b', 'c']);
    expect(flagOption(args, 'json')).toBe(true);
    expect(stringOption(args, 'port')).toBeUndefined();
    expect(parseCommandArgs(['--', '--json'], OPTIONS, 1).positionals).toEqual(['--json']);
  });

  it.each<[string[], string]>([
    [['--nope'], 'unknown option --nope; did you mean --name?'],
    [['--verbose'], 'unknown option --verbose'],
    [['-x'], 'unknown option -x'],
    [['--name'], '--name needs a value'],
    [['--name', '--json'], '--name needs a value'],
    [['-p'], '--port needs a value'],
    // Node calls these "ambiguous" and names the option by its short form alone.
    [['-p', '-x'], '--port needs a value'],
    [['-I', '--json'], '--include needs a value'],
    [['-p', '-I', 'a'], '--port needs a value'],
    [['--json=1'], '--json takes no value'],
    [['a', 'b'], 'unexpected argument "b"'],
    [['--jsn'], 'unknown option --jsn; did you mean --json?'],
    [['--prot=8'], 'unknown option --prot; did you mean --port?'],
  ])('%j: %s', (argv, message) => {
    expect(usageMessage(argv)).toBe(message);
  });

  it('reads a negative number after an option that takes a value as its value (for the range check to name)', () => {
    expect(stringOption(parseCommandArgs(['--port', '-1'], OPTIONS, 0), 'port')).toBe('-1');
    expect(stringOption(parseCommandArgs(['-p', '-2.5'], OPTIONS, 0), 'port')).toBe('-2.5');
    expect(stringListOption(parseCommandArgs(['-I', '-3'], OPTIONS, 0), 'include')).toEqual(['-3']);
    // Not after a flag, nor an option-looking word.
    expect(usageMessage(['--json', '-1'])).toBe('unknown option -1');
    expect(usageMessage(['--name', '-x'])).toBe('--name needs a value');
  });

  it('reads -I=dir as protoc does: the value after the equals sign', () => {
    const args = parseCommandArgs(['-I=protos', '-p=-1', '-I=a=b', 'file'], OPTIONS, 1);
    expect(stringListOption(args, 'include')).toEqual(['protos', 'a=b']);
    expect(stringOption(args, 'port')).toBe('-1');
    expect(args.positionals).toEqual(['file']);
    expect(() => stringListOption(parseCommandArgs(['-I='], OPTIONS, 0), 'include')).toThrow(
      '--include needs a value',
    );
    // A flag so written is refused by its long name; an unknown short option is named as written.
    expect(usageMessage(['-j=1'])).toBe('unknown option -j');
    const withFlag = { ...OPTIONS, quiet: { type: 'boolean', short: 'q' } } as const;
    expect(() => parseCommandArgs(['-q=1'], withFlag, 0)).toThrow('--quiet takes no value');
    // After `--` it is left as written, as is an argument that only holds the pattern; as another option's value
    // it is refused either way (parseArgs takes no value that starts with a dash).
    expect(parseCommandArgs(['--', '-I=x'], OPTIONS, 1).positionals).toEqual(['-I=x']);
    expect(parseCommandArgs(['a.json', '--', '-I=x'], OPTIONS, 2).positionals).toEqual(['a.json', '-I=x']);
    expect(parseCommandArgs(['cfg-I=1.json'], OPTIONS, 1).positionals).toEqual(['cfg-I=1.json']);
    expect(usageMessage(['--name', '-I=x'])).toBe('--name needs a value');
  });

  it('rejects empty values', () => {
    expect(() => stringOption(parseCommandArgs(['--name='], OPTIONS, 0), 'name')).toThrow(
      '--name needs a value',
    );
    expect(() => stringListOption(parseCommandArgs(['-I', ''], OPTIONS, 0), 'include')).toThrow(
      '--include needs a value',
    );
  });

  it('rejects positionals for a command that takes none', () => {
    expect(usageMessage(['extra'], 0)).toBe('unexpected argument "extra"');
  });

  it('suggests --proto for a .proto file given as an argument, when the command has --proto', () => {
    const withProto = { ...OPTIONS, proto: { type: 'string', multiple: true } } as const;
    expect(() => parseCommandArgs(['svc.PROTO'], withProto, 0)).toThrow(
      'unexpected argument "svc.PROTO"; did you mean --proto svc.PROTO?',
    );
    expect(usageMessage(['svc.proto'], 0)).toBe('unexpected argument "svc.proto"');
  });
});
