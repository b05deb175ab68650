import type { CommandIo } from './command-io.js';
import { packageVersion } from './package-version.js';
/**
 * Argument parsing for the CLI commands, on `node:util`'s `parseArgs`, with short, uniform error messages.
 */

import { type ParseArgsConfig, parseArgs } from 'node:util';
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
 * Parses `argv` strictly: unknown options, missing values and values for flags are {@link UsageError}s.
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
  let parsed: CommandArgs;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(describeParseError(error));
  }
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) {
    throw new UsageError(`unexpected argument "${extra}"`);
  }
  return parsed;
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

function describeParseError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = errorMessage(error);
  const option = /'(-[^' ,]*)(?:, (--[^' ]+))?/.exec(message);
  const name = option?.[2] ?? option?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${name}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(message) ? `${name} takes no value` : `${name} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${/'([^']*)'/.exec(message)?.[1] ?? ''}"`;
    default:
      return message;
  }
}
