/**
 * `grpc-retry-hedging check <config.json> [--proto a.proto ...] [-I dir ...] [--json] [--max-attempts-limit N]
 * [--jitter <kind>]`: validates a service config and explains what each policy does.
 */

import { parseJsonSource } from '../config/json-source.js';
import { DEFAULT_MAX_ATTEMPTS_LIMIT } from '../config/types.js';
import { validate } from '../config/validate-service-config.js';
import { findAvoidPolicyProblems } from '../lb/avoid-tried-config.js';
import { isPolicyKnownToGrpcJs } from '../lb/known-to-grpc-js.js';
import { JITTER_STRATEGIES } from '../retry/backoff.js';
import { errorMessage } from '../util/error-message.js';
import { renderInvalid, renderReport } from './check-render.js';
import {
  type CheckDiagnostic,
  type CheckReport,
  failedReport,
  invalidReport,
  type ReportInput,
  validReport,
  withLoadBalancingErrors,
} from './check-report.js';
import {
  type CommandArgs,
  flagOption,
  parseCommandArgs,
  printedHelpOrVersion,
  protoOptionHint,
  stringListOption,
  stringOption,
  UsageError,
} from './command-args.js';
import { type CommandIo, EXIT_CODE } from './command-io.js';
import { escapeControlCharacters } from './format.js';
import { type LoadedProtos, loadProtos, ProtoLoadError } from './proto-services.js';
import {
  InputTooLargeError,
  MAX_INPUT_BYTES,
  readFileCapped,
  readStreamCapped,
  tooLargeMessage,
} from './read-input.js';

export type {
  CheckDiagnostic,
  CheckReport,
  CheckStatus,
  EntryReport,
  HedgingPolicyReport,
  RetryPolicyReport,
  ThrottlingReport,
} from './check-report.js';

/**
 * Exit codes of the check command: 0 valid (warnings allowed, unless `--strict`), 1 invalid config, unreadable
 * file or (with `--strict`) a warning, 2 usage.
 */
export const CHECK_EXIT = {
  valid: EXIT_CODE.ok,
  invalid: EXIT_CODE.failure,
  usage: EXIT_CODE.usage,
} as const;

/** Usage text of the check command. */
export const CHECK_USAGE = `Usage: grpc-retry-hedging check <config.json | -> [options]

Validates a gRPC service config (methodConfig retryPolicy / hedgingPolicy, timeout, waitForReady,
retryThrottling; gRPC proposal A6), reports every error at once as file:line:col, warns about unknown fields,
and explains what each policy does.

Options:
  --proto <file.proto>          warn about config names that match no service or method of this proto, and about
                                retried or hedged methods it does not mark idempotent (repeatable)
  -I, --proto-path <dir>        directory in which to look for protos and their imports, as protoc (repeatable)
  --json                        print one JSON object (errors included) instead of the report
  --strict                      exit 1 on warnings too (unknown fields, names that match nothing), for CI
  --max-attempts-limit <n>      client-side cap on maxAttempts, an integer >= 1 (default ${DEFAULT_MAX_ATTEMPTS_LIMIT})
  --jitter <strategy>           backoff jitter of your interceptor: ${JITTER_STRATEGIES.join(', ')} (default a6)
  -h, --help                    show this help
  --version                     print the package version

Exit status: 0 valid (warnings allowed unless --strict), 1 invalid config, unreadable file or (--strict) a
warning, 2 usage error.
`;

const CHECK_OPTIONS = {
  proto: { type: 'string', multiple: true },
  'proto-path': { type: 'string', short: 'I', multiple: true },
  json: { type: 'boolean' },
  strict: { type: 'boolean' },
  'max-attempts-limit': { type: 'string' },
  jitter: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

interface CheckOptions extends ReportInput {
  readonly file: string;
  readonly protoFiles: readonly string[];
  readonly includePaths: readonly string[];
  readonly json: boolean;
  /** Warnings fail the check too. */
  readonly strict: boolean;
}

/**
 * Runs the `check` command.
 *
 * @param argv The arguments after `check`.
 * @param io Output sinks.
 * @returns The exit code: 0 valid (even with warnings), 1 invalid config or a file that cannot be read or loaded,
 *   2 usage error.
 */
export async function runCheck(argv: readonly string[], io: CommandIo): Promise<number> {
  // Read before parsing, so that a usage error is JSON too when --json (or a mistaken --json=1) was asked for.
  const wantsJson = argv.some((arg) => arg === '--json' || arg.startsWith('--json='));
  let args: CommandArgs;
  let options: CheckOptions;
  try {
    args = parseCommandArgs(argv, CHECK_OPTIONS, 1);
    if (printedHelpOrVersion(args, CHECK_USAGE, io)) {
      return CHECK_EXIT.valid;
    }
    options = checkOptions(args);
  } catch (error) {
    if (!(error instanceof UsageError)) {
      throw error;
    }
    if (wantsJson) {
      const file = argv.find((arg) => !arg.startsWith('-') && arg.endsWith('.json')) ?? null;
      const input = { file, maxAttemptsLimit: DEFAULT_MAX_ATTEMPTS_LIMIT, jitter: 'a6' as const };
      io.stdout(toJson(failedReport(input, 'usage-error', error.message)));
      io.stderr(`check: ${escapeControlCharacters(error.message)}\n`);
    } else {
      io.stderr(`check: ${escapeControlCharacters(error.message)}\n\n${CHECK_USAGE}`);
    }
    return CHECK_EXIT.usage;
  }
  const report = await buildReport(options, io);
  if (options.json) {
    io.stdout(toJson(report));
  }
  if (report.status === 'io-error') {
    io.stderr(`check: ${escapeControlCharacters(report.error?.message ?? 'cannot read the input')}\n`);
    return EXIT_CODE.failure;
  }
  if (!report.valid) {
    if (!options.json) {
      io.stderr(renderInvalid(report));
    }
    return CHECK_EXIT.invalid;
  }
  if (!options.json) {
    io.stdout(renderReport(report));
  }
  if (options.strict && report.warnings.length > 0) {
    if (!options.json) {
      io.stderr(
        `check: --strict: ${report.warnings.length === 1 ? '1 warning' : `${report.warnings.length} warnings`}\n`,
      );
    }
    return CHECK_EXIT.invalid;
  }
  return CHECK_EXIT.valid;
}

/** How a config read from standard input (`check -`) is named in the report and its diagnostics. */
const STDIN_NAME = '<stdin>';

/** Standard input's text: read as a stream with the byte cap when the host gives one, else whole. */
async function readStdin(io: CommandIo): Promise<string> {
  if (io.stdin !== undefined) {
    return readStreamCapped(io.stdin, MAX_CONFIG_BYTES);
  }
  if (io.readStdin === undefined) {
    throw new Error('standard input is not available here');
  }
  const text = await io.readStdin();
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_CONFIG_BYTES) {
    throw new InputTooLargeError(size, MAX_CONFIG_BYTES);
  }
  return text;
}

function checkOptions(args: CommandArgs): CheckOptions {
  const given = args.positionals[0];
  if (given === undefined) {
    throw new UsageError('missing the service config file argument (or - for standard input)');
  }
  if (protoOptionHint(given, CHECK_OPTIONS) !== '') {
    throw new UsageError(
      `"${given}" is a .proto file, not a service config; give the config first: check <config.json> --proto ${given}`,
    );
  }
  const file = given === '-' ? STDIN_NAME : given;
  const limitText = stringOption(args, 'max-attempts-limit');
  let maxAttemptsLimit = DEFAULT_MAX_ATTEMPTS_LIMIT;
  if (limitText !== undefined) {
    maxAttemptsLimit = /^\d+$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!Number.isSafeInteger(maxAttemptsLimit) || maxAttemptsLimit < 1) {
      throw new UsageError(`--max-attempts-limit must be an integer >= 1, got ${limitText}`);
    }
  }
  const jitterText = stringOption(args, 'jitter') ?? 'a6';
  const jitter = JITTER_STRATEGIES.find((strategy) => strategy === jitterText);
  if (jitter === undefined) {
    throw new UsageError(`--jitter must be one of ${JITTER_STRATEGIES.join(', ')}, got ${jitterText}`);
  }
  const protoFiles = stringListOption(args, 'proto');
  const includePaths = stringListOption(args, 'proto-path');
  if (includePaths.length > 0 && protoFiles.length === 0) {
    throw new UsageError('-I/--proto-path is used only with --proto (it says where to find the protos)');
  }
  return {
    file,
    protoFiles,
    includePaths,
    json: flagOption(args, 'json'),
    strict: flagOption(args, 'strict'),
    maxAttemptsLimit,
    jitter,
  };
}

/** The largest config `check` reads: {@link MAX_INPUT_BYTES} (64 MiB). */
export const MAX_CONFIG_BYTES = MAX_INPUT_BYTES;

/** The config's text, or why it cannot be read. */
async function readConfigText(options: CheckOptions, io: CommandIo): Promise<string> {
  try {
    return options.file === STDIN_NAME
      ? await readStdin(io)
      : await readFileCapped(options.file, MAX_CONFIG_BYTES);
  } catch (error) {
    if (error instanceof InputTooLargeError) {
      throw new Error(tooLargeMessage(error, 'check', 'a service config'));
    }
    throw error;
  }
}

async function buildReport(options: CheckOptions, io: CommandIo): Promise<CheckReport> {
  let text: string;
  try {
    text = await readConfigText(options, io);
  } catch (error) {
    return failedReport(
      options,
      'io-error',
      `cannot read the service config ${options.file === STDIN_NAME ? 'from standard input' : `file ${options.file}`}: ${errorMessage(error)}`,
    );
  }
  let protos: LoadedProtos | undefined;
  if (options.protoFiles.length > 0) {
    try {
      protos = loadProtos(options.protoFiles, options.includePaths);
    } catch (error) {
      if (!(error instanceof ProtoLoadError)) {
        throw error;
      }
      return failedReport(options, 'io-error', error.message);
    }
  }
  const result = validate(text, true);
  const source = parseJsonSource(text);
  const warnings: readonly CheckDiagnostic[] = result.warnings;
  // What createChannelOptions would reject besides (the replica-avoiding policy's childPolicy) is an error too.
  const errors = withLoadBalancingErrors(
    result.errors,
    source.ok ? source : undefined,
    findAvoidPolicyProblems,
  );
  if (result.config === undefined || errors.length > 0) {
    return invalidReport(
      options,
      errors,
      warnings,
      isPolicyKnownToGrpcJs,
      protos,
      source.ok ? source : undefined,
    );
  }
  return validReport(
    options,
    result.config,
    warnings,
    protos,
    source.ok ? source : undefined,
    isPolicyKnownToGrpcJs,
  );
}

function toJson(report: CheckReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
