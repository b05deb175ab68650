import { packageVersion } from '../util/package-version.js';
import type { CommandIo } from './command-io.js';
/**
 * Argument parsing for the CLI commands, on `node:util`'s `parseArgs`, with short, uniform error messages.
 */

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closestName } from '../util/closest-name.js';
import { errorMessage } from '../util/error-message.js';

/** A command-line mistake: the command prints it with its usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Option declarations, as `parseArgs` takes them. */
export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Parsed values (strings, booleans, or arrays for `multiple` options) and positionals. */
export interface CommandArgs {
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses `argv` strictly: unknown options, missing values, values for flags and an option that takes one value
 * given twice are {@link UsageError}s.
 *
 * @param argv The arguments after the command name.
 * @param options The command's options.
 * @param maxPositionals How many positional arguments the command takes.
 * @throws UsageError naming the offending argument.
 */
export function parseCommandArgs(
  argv: readonly string[],
  options: OptionSpec,
  maxPositionals: number,
): CommandArgs {
  let parsed: CommandArgs & { readonly tokens: readonly ParseToken[] };
  try {
    parsed = parseArgs({
      args: joinNegativeValues(shortOptionsWithEquals(argv, options), options),
      options,
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(describeParseError(error, options));
  }
  // Node before 18.7 gives no tokens: the check is skipped there, and the last value wins.
  rejectRepeatedOptions(parsed.tokens ?? [], options);
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) {
    throw new UsageError(`unexpected argument "${extra}"${protoOptionHint(extra, options)}`);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/** What `parseArgs` says it read, argument by argument. */
type ParseToken =
  | { readonly kind: 'option'; readonly name: string; readonly rawName: string }
  | { readonly kind: 'positional' | 'option-terminator' };

/**
 * An option that takes one value given twice (`--port 0 --port 1`) is a {@link UsageError}: `parseArgs` would keep
 * the last one silently, and which one the user meant is anyone's guess. Repeatable options and flags may repeat.
 */
function rejectRepeatedOptions(tokens: readonly ParseToken[], options: OptionSpec): void {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option') {
      continue;
    }
    const spec = options[token.name];
    if (spec?.type !== 'string' || spec.multiple === true) {
      continue;
    }
    const earlier = seen.get(token.name);
    if (earlier !== undefined) {
      const both = earlier === token.rawName ? `${earlier} twice` : `${earlier} and then ${token.rawName}`;
      throw new UsageError(`--${token.name} takes one value, but was given ${both}; give it once`);
    }
    seen.set(token.name, token.rawName);
  }
}

/** `; did you mean --proto x.proto?` for a .proto file given where the command takes none, if it has --proto. */
export function protoOptionHint(argument: string, options: OptionSpec): string {
  return 'proto' in options && /\.proto$/i.test(argument) ? `; did you mean --proto ${argument}?` : '';
}

/** The value of a single string option, or `undefined`; an empty value is a {@link UsageError}. */
export function stringOption(args: CommandArgs, name: string): string | undefined {
  const value = args.values[name];
  if (typeof value !== 'string') {
    return undefined;
  }
  if (value === '') {
    throw new UsageError(`--${name} needs a value`);
  }
  return value;
}

/** Every value of a `multiple` string option; empty values are a {@link UsageError}. */
export function stringListOption(args: CommandArgs, name: string): string[] {
  const value = args.values[name];
  const list = Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  if (list.includes('')) {
    throw new UsageError(`--${name} needs a value`);
  }
  return list;
}

/** Whether a boolean flag was given. */
export function flagOption(args: CommandArgs, name: string): boolean {
  return args.values[name] === true;
}

/**
 * `--help` prints the command's usage and `--version` the package version, both to stdout. Returns whether one of
 * them was asked for (the command then exits with success).
 */
export function printedHelpOrVersion(args: CommandArgs, usage: string, io: CommandIo): boolean {
  if (flagOption(args, 'help')) {
    io.stdout(usage);
    return true;
  }
  if (flagOption(args, 'version')) {
    io.stdout(`${packageVersion()}\n`);
    return true;
  }
  return false;
}

/**
 * `--port -1` as `--port=-1`: parseArgs takes an argument that starts with a dash for an option, so a negative
 * number after an option that takes a value would read as a missing value, not as the value the range check
 * should name.
 */
function joinNegativeValues(argv: readonly string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (next !== undefined && /^-\d/.test(next) && takesValue(arg, options)) {
      // A long option takes `--name=value`; a short one its value attached (`-p-1`).
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i += 1;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * `-I=protos` as `--proto-path=protos`, the way protoc reads it (its tutorial writes `protoc -I=$SRC_DIR`): Node's
 * parseArgs reads `-I=protos` as the value `=protos`, and `-q=1` as the flags `-q`, `-=` and `-1`. A flag written
 * so is then refused as taking no value. Nothing after `--` is changed. (One written as another option's value,
 * `--script -I=x`, is refused either way: parseArgs takes no value that starts with a dash.)
 */
function shortOptionsWithEquals(argv: readonly string[], options: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const written = /^-([A-Za-z])=(.*)$/s.exec(arg);
    const long = written === null ? undefined : optionWithShort(written[1] as string, options);
    out.push(written !== null && long !== undefined ? `--${long}=${written[2]}` : arg);
  }
  return out;
}

function takesValue(arg: string, options: OptionSpec): boolean {
  if (arg.startsWith('--') && !arg.includes('=')) {
    return options[arg.slice(2)]?.type === 'string';
  }
  if (/^-[A-Za-z]$/.test(arg)) {
    const long = optionWithShort(arg.slice(1), options);
    return long !== undefined && options[long]?.type === 'string';
  }
  return false;
}

/**
 * The long name of a short option (`-I` → `--proto-path`), as Node names it in most of its messages but not all
 * (`-I -h` is "ambiguous", and named by its short form alone); anything else as it is (a short form is one letter,
 * so only `-X` can be one).
 */
function longName(name: string, options: OptionSpec): string {
  const long = optionWithShort(name.slice(1), options);
  return long === undefined ? name : `--${long}`;
}

/** The (long) name of the option whose short form is `-letter`, if one is. */
function optionWithShort(letter: string, options: OptionSpec): string | undefined {
  return Object.entries(options).find(([, spec]) => spec.short === letter)?.[0];
}

function describeParseError(error: unknown, options: OptionSpec): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = errorMessage(error);
  const option = /'(-[^' ,]*)(?:, (--[^' ]+))?/.exec(message);
  const name = option?.[2] ?? longName(option?.[1] ?? '', options);
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const known = Object.keys(options).map((key) => `--${key}`);
      const match = name.startsWith('--') ? closestName(name.split('=')[0] as string, known) : undefined;
      return `unknown option ${name}${match === undefined ? '' : `; did you mean ${match}?`}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(message) ? `${name} takes no value` : `${name} needs a value`;
    default:
      return message;
  }
}
