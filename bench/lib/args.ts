/**
 * Command lines of the bench scripts: one parser for all of them, so that they read their options alike and refuse
 * mistakes alike, before a run of minutes starts (and overwrites committed results with its defaults).
 *
 * - An option is `--kebab-name=value` or `--kebab-name value`. In the second form the next argument is the value
 *   unless it starts with `--`, so `--offset -1` reads -1.
 * - A switch (an option whose value is 0 or 1) is `--json`, `--json=1` or `--json=0` (`true` and `false` too), and
 *   `--json 0` reads the 0 as its value.
 * - `--help` or `-h` prints the usage and exits 0.
 * - Anything else is an error: an unknown option (`--quick`, `-n`), a value that is not a number or is out of its
 *   range, an empty value, and an argument without `--` unless the script takes operands (file names); after `--`
 *   every argument is an operand.
 *
 * Scripts call {@link scriptArgs}, which prints a mistake as one line prefixed with the script's npm name, then a
 * hint to run it with --help, and exits 2 ({@link usageExit}); the parser itself ({@link parseArgs}) only throws a
 * {@link UsageError}. Relative paths in arguments are the user's: {@link userPath} resolves them against the
 * directory `npm run` was started from.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/** A mistake in the command line, or in a file it names: said in one line, exit code 2, no stack. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Bounds of a numeric option, all optional (whatever its bounds, a value must be a finite number). */
export interface Limit {
  readonly integer?: boolean;
  /** The least value allowed. */
  readonly min?: number;
  /** Values must be above this one. */
  readonly above?: number;
  /** The greatest value allowed. */
  readonly max?: number;
}

/** A whole number, 0 or more. */
export const COUNT: Limit = { integer: true, min: 0 };
/** A whole number, 1 or more. */
export const POSITIVE_COUNT: Limit = { integer: true, min: 1 };
/** A number above 0. */
export const POSITIVE: Limit = { above: 0 };
/** A number, 0 or more. */
export const NON_NEGATIVE: Limit = { min: 0 };
/** A number from 0 to 1. */
export const FRACTION: Limit = { min: 0, max: 1 };

/** What a script says about itself in its --help and its error messages. */
export interface Script {
  /** Its npm script name (`bench:tail`): the prefix of its error messages. */
  readonly name: string;
  /** One line: what it does, and which results file it writes, if any. */
  readonly about: string;
  /** How it is run, when not with `npm run <name> --`. */
  readonly command?: string;
  /** What follows `[options]` in its usage line, when it takes operands (`[trace.csv ...]`). */
  readonly operands?: string;
  /** Lines printed after the options. */
  readonly footer?: string;
}

/** How {@link parseArgs} reads a command line besides its numeric options' defaults. */
export interface ArgSettings<T extends Record<string, number>> {
  readonly argv?: readonly string[];
  /** Options that take a value the script reads itself (a path, a list), by kebab name: `trace`, `static-delays`. */
  readonly others?: readonly string[];
  /** Keys of the defaults that are switches: 0 or 1. */
  readonly switches?: readonly (keyof T & string)[];
  /** Bounds of numeric options, by key. */
  readonly limits?: { readonly [K in keyof T]?: Limit };
  /** Whether the script takes operands (arguments without `--`, such as file names). */
  readonly operands?: boolean;
  /** A few words about an option for --help, by key of the defaults or name among `others`. */
  readonly notes?: Readonly<Record<string, string>>;
  /**
   * What `--help` does with the options, one per line with its default: by default prints them and exits. If it
   * returns, the rest is parsed as usual.
   */
  readonly help?: (options: string) => void;
}

/** One option as given on the command line. */
export interface GivenOption {
  /** Its kebab name. */
  readonly name: string;
  /** It again, as `--name=value` in one argument: to pass it on. */
  readonly arg: string;
}

/** A command line, read. */
export interface ParsedArgs<T> {
  /** The numeric options: the defaults, with the values given over them. */
  readonly options: T;
  /** The values given to the options among `others`, by name. */
  readonly values: ReadonlyMap<string, string>;
  readonly operands: readonly string[];
  /** Every option given, in order. */
  readonly given: readonly GivenOption[];
}

const SWITCH_VALUES: Readonly<Record<string, number>> = { '1': 1, true: 1, '0': 0, false: 0 };

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const isHelp = (arg: string): boolean => arg === '--help' || arg === '-h';

/**
 * Reads a command line (see the module's comment). The numeric options are the keys of `defaults`, camelCase, in
 * kebab case: `learnCalls` is `--learn-calls`. Throws a {@link UsageError} at the first mistake.
 */
export function parseArgs<T extends Record<string, number>>(
  defaults: T,
  settings: ArgSettings<T> = {},
): ParsedArgs<T> {
  const { argv = process.argv.slice(2), others = [], switches = [] } = settings;
  const limits: Readonly<Record<string, Limit | undefined>> = settings.limits ?? {};
  const keyOf = new Map(Object.keys(defaults).map((key) => [kebab(key), key]));
  const known = [...keyOf.keys(), ...others];
  const endOfOptions = argv.indexOf('--') === -1 ? argv.length : argv.indexOf('--');
  if (argv.slice(0, endOfOptions).some(isHelp)) {
    (settings.help ?? printOptionsAndExit)(optionList(defaults, settings));
  }

  const options: Record<string, number> = { ...defaults };
  const values = new Map<string, string>();
  const operands: string[] = [];
  const given: GivenOption[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (i >= endOfOptions) {
      if (i > endOfOptions) operands.push(arg);
      continue;
    }
    if (isHelp(arg)) continue;
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    if (match === null) {
      if (arg.startsWith('-') && arg !== '-')
        throw new UsageError(`unknown option ${arg}${knownList(known)}`);
      operands.push(arg);
      continue;
    }
    const name = match[1] as string;
    const inline = match[2];
    const key = keyOf.get(name);
    /** The value given in the next argument, which must not be an option. */
    const nextValue = (): string => {
      const next = argv[i + 1];
      if (i + 1 >= endOfOptions || next === undefined || next.startsWith('--')) {
        throw new UsageError(`--${name} needs a value: --${name}=… or --${name} …`);
      }
      i++;
      return next;
    };
    if (key !== undefined && (switches as readonly string[]).includes(key)) {
      const next = argv[i + 1];
      const raw =
        inline ?? (next !== undefined && next in SWITCH_VALUES && i + 1 < endOfOptions ? argv[++i] : '1');
      const value = SWITCH_VALUES[raw as string];
      if (value === undefined) {
        throw new UsageError(
          `--${name} is a switch: --${name}, --${name}=1 or --${name}=0, got ${JSON.stringify(raw)}`,
        );
      }
      options[key] = value;
      given.push({ name, arg: `--${name}=${value}` });
    } else if (key !== undefined) {
      const raw = inline ?? nextValue();
      options[key] = readNumber(`--${name}`, raw, limits[key]);
      given.push({ name, arg: `--${name}=${raw}` });
    } else if (others.includes(name)) {
      const raw = inline ?? nextValue();
      if (raw === '') throw new UsageError(`--${name} needs a value, got an empty one`);
      values.set(name, raw);
      given.push({ name, arg: `--${name}=${raw}` });
    } else {
      throw new UsageError(`unknown option --${name}${knownList(known)}`);
    }
  }
  if (operands.length > 0 && !settings.operands) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(operands[0])}: this script takes only options, --name=value`,
    );
  }
  return { options: options as T, values, operands, given };
}

/** The numeric options of a command line (see {@link parseArgs}), with their defaults. */
export function numericArgs<T extends Record<string, number>>(defaults: T, settings: ArgSettings<T> = {}): T {
  return parseArgs(defaults, settings).options;
}

/** `raw` as a number within `limit`; otherwise a {@link UsageError} that names it `label`. */
export function readNumber(label: string, raw: string, limit: Limit = {}): number {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value)) throw new UsageError(`${label} must be a number, got ${JSON.stringify(raw)}`);
  const { integer = false, min, above, max } = limit;
  const within =
    (!integer || Number.isInteger(value)) &&
    (min === undefined || value >= min) &&
    (above === undefined || value > above) &&
    (max === undefined || value <= max);
  if (!within) throw new UsageError(`${label} must be ${describeLimit(limit)}, got ${raw}`);
  return value;
}

/** A comma-separated list of numbers within `limit` (`5,10,20`); otherwise a {@link UsageError}. */
export function readNumberList(label: string, raw: string, limit: Limit = {}): number[] {
  if (raw === '') throw new UsageError(`${label} must be a comma-separated list of numbers, got ""`);
  return raw.split(',').map((item, i) => readNumber(`${label}'s item ${i + 1}`, item, limit));
}

/** "a whole number, 1 or more", "above 0", "from 0 to 1"... */
export function describeLimit({ integer, min, above, max }: Limit): string {
  const range =
    min !== undefined && max !== undefined
      ? `from ${min} to ${max}`
      : above !== undefined
        ? `above ${above}`
        : min !== undefined
          ? `${min} or more`
          : max !== undefined
            ? `${max} or less`
            : undefined;
  return [integer ? 'a whole number' : undefined, range].filter((part) => part !== undefined).join(', ');
}

/**
 * A path given on the command line, absolute: a relative one is the user's, read from the directory they ran
 * `npm run` in (npm sets INIT_CWD to it and runs the script from the package root).
 */
export function userPath(path: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return resolve(env.INIT_CWD ?? cwd, path);
}

/** {@link userPath} for a file the script will write: a {@link UsageError} names `label` if it is a directory. */
export function userOutputPath(label: string, path: string, env: NodeJS.ProcessEnv = process.env): string {
  const absolute = userPath(path, env);
  if (existsSync(absolute) && statSync(absolute).isDirectory()) {
    throw new UsageError(`${label}: ${absolute} is a directory; give a file name`);
  }
  return absolute;
}

/** `read()`, whose {@link UsageError} exits as a mistake of `script`'s command line ({@link usageExit}). */
export function orUsageExit<T>(script: Script, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof UsageError) usageExit(script, error.message);
    throw error;
  }
}

/**
 * {@link parseArgs} for `script`'s own command line: `--help` prints its usage and exits 0, and a mistake exits 2
 * through {@link usageExit}.
 */
export function scriptArgs<T extends Record<string, number>>(
  script: Script,
  defaults: T,
  settings: Omit<ArgSettings<T>, 'help'> = {},
): ParsedArgs<T> {
  return orUsageExit(script, () =>
    parseArgs(defaults, { ...settings, help: (options) => printUsageAndExit(script, options) }),
  );
}

/** The usage text of `script` with its options (as {@link ArgSettings.help} receives them). */
export function usageText(script: Script, options: string): string {
  const operands = script.operands === undefined ? '' : ` ${script.operands}`;
  return [
    `Usage: ${commandOf(script)} [options]${operands}`,
    script.about,
    '',
    'Options (defaults shown; --name=value or --name value):',
    options.replace(/^/gm, '  '),
    ...(script.footer === undefined ? [] : ['', script.footer]),
    '',
  ].join('\n');
}

/** Says `message` as a mistake of `script`'s command line, with a hint to run it with --help, and exits 2. */
export function usageExit(script: Script, message: string): never {
  process.stderr.write(`${script.name}: ${message}\nRun \`${commandOf(script)} --help\` for its usage.\n`);
  process.exit(2);
}

/**
 * The end of a script's `main().catch(...)`: a {@link UsageError} exits 2 as {@link usageExit} says it; anything
 * else is unexpected, printed with its stack, exit code 1.
 */
export function failure(script: Script): (error: unknown) => void {
  return (error) => {
    if (error instanceof UsageError) usageExit(script, error.message);
    console.error(error);
    process.exitCode = 1;
  };
}

function commandOf(script: Script): string {
  return script.command ?? `npm run ${script.name} --`;
}

function knownList(known: readonly string[]): string {
  return known.length === 0
    ? ' (this script has no options)'
    : ` (known: ${known.map((k) => `--${k}`).join(', ')})`;
}

/** The options with their defaults, one per line, each with its note, if any. */
function optionList<T extends Record<string, number>>(defaults: T, settings: ArgSettings<T>): string {
  const { others = [], switches = [], notes = {} } = settings;
  const rows = [
    ...Object.entries(defaults).map(([key, value]) => {
      const isSwitch = (switches as readonly string[]).includes(key);
      const note = notes[key] ?? (isSwitch ? '' : undefined);
      return [`--${kebab(key)}=${value}`, isSwitch ? `${note} (a switch: 0 or 1)`.trim() : note] as const;
    }),
    ...others.map((name) => [`--${name}=…`, notes[name]] as const),
  ];
  const width = Math.max(...rows.map(([option]) => option.length));
  return rows
    .map(([option, note]) => (note === undefined ? option : `${option.padEnd(width)}  ${note}`))
    .join('\n');
}

function printOptionsAndExit(options: string): never {
  process.stdout.write(`Options (defaults shown):\n${options}\n`);
  process.exit(0);
}

function printUsageAndExit(script: Script, options: string): never {
  process.stdout.write(usageText(script, options));
  process.exit(0);
}
