/**
 * `grpc-retry-hedging flaky-server [--port N] [--host HOST] [--script FILE] [--proto FILE ...] [-I DIR ...]
 * [--keep-case] [--no-flaky-test] [--max-receive-message-size BYTES] [--quiet]`: runs the scripted flaky test server (FlakyTest and
 * the services of the given protos) and logs one line per attempt.
 */

import * as grpc from '@grpc/grpc-js';
import { formatJsonPath, type JsonPath } from '../config/json-path.js';
import { duplicateKeyMessage, parseJsonSource } from '../config/json-source.js';
import { statusLabel } from '../config/status-codes.js';
import {
  markCallIdHintsShown,
  methodLikeCallId,
  quotedAlternatives,
  unservedMethodKey,
} from '../testing/call-id-resemblance.js';
import { servedServices } from '../testing/flaky-server.js';
import {
  type AttemptScript,
  FLAKY_TEST_SERVICE,
  FlakyServer,
  type RecordedAttempt,
  validateAttemptScript,
  validateAttemptScripts,
} from '../testing/index.js';
import { formatResponsePath, responseKeyProblems } from '../testing/response-fields.js';
import { scriptFitProblem } from '../testing/script-method-fit.js';
import type { ServedMethod, ServedService } from '../testing/served-services.js';
import { errorMessage } from '../util/error-message.js';
import { portInHost } from '../util/host-port.js';
import {
  type CommandArgs,
  flagOption,
  parseCommandArgs,
  printedHelpOrVersion,
  stringListOption,
  stringOption,
  UsageError,
} from './command-args.js';
import { type CommandIo, EXIT_CODE } from './command-io.js';
import { escapeControlCharacters } from './format.js';
import { InputTooLargeError, MAX_INPUT_BYTES, readFileCapped, tooLargeMessage } from './read-input.js';

/** Usage text of the flaky-server command. */
export const FLAKY_SERVER_USAGE = `Usage: grpc-retry-hedging flaky-server [--port N] [--host HOST] [--script FILE]
                                      [--proto FILE ...] [-I DIR ...] [--keep-case] [--no-flaky-test]
                                      [--max-receive-message-size BYTES] [--quiet]

Starts the scripted flaky test gRPC server (service grpc_retry_hedging.testing.v1.FlakyTest, protos/flaky_test.proto,
and every service of the --proto files) and logs one line per attempt until SIGINT/SIGTERM.

  --port N                port to listen on (default 0: pick a free port)
  --host HOST             host to bind (default 127.0.0.1)
  --script FILE           JSON object registered at start: {"pkg.Service/Method": [AttemptScript, ...]} scripts the
                          attempts of a served method; any other key is a call id, {"<call id>": [...]} scripts
                          the attempts of calls sending it in x-flaky-call-id
  --proto FILE            serve the services of this proto too, every method scriptable (repeatable)
  -I, --proto-path DIR    directory in which to look for protos and their imports, as protoc (repeatable)
  --keep-case             load --proto files with the proto's field names (order_id), as a client loaded with
                          proto-loader's keepCase: true; default camelCase (orderId)
  --no-flaky-test         serve the --proto files' services alone, without FlakyTest
  --max-receive-message-size BYTES
                          largest request message the server accepts (default grpc-js's, 4 MiB)
  -q, --quiet             do not log attempts
  -h, --help              show this help
  --version               print the package version

Exit status: 0 stopped, 1 unreadable or invalid script file or the server cannot start, 2 usage error.
`;

const FLAKY_SERVER_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  script: { type: 'string' },
  proto: { type: 'string', multiple: true },
  'proto-path': { type: 'string', short: 'I', multiple: true },
  'keep-case': { type: 'boolean' },
  'no-flaky-test': { type: 'boolean' },
  'max-receive-message-size': { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

interface FlakyServerArgs {
  readonly port: number;
  readonly host: string;
  readonly scriptFile: string | undefined;
  readonly protoFiles: readonly string[];
  readonly includeDirs: readonly string[];
  readonly keepCase: boolean;
  readonly serveFlakyTest: boolean;
  readonly maxReceiveMessageSize: number | undefined;
  readonly quiet: boolean;
}

/** An unreadable or invalid script file: one line per problem, exit 1. */
class ScriptFileError extends Error {
  constructor(
    /** One line each, taken from the file: printed with their control characters escaped. */
    readonly problems: readonly string[],
    /** The file's warnings, shown with its errors so that one run reports everything. */
    readonly warnings: readonly string[] = [],
  ) {
    super(problems.join('\n'));
  }
}

function serverArgs(args: CommandArgs): FlakyServerArgs {
  const portText = stringOption(args, 'port') ?? '0';
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new UsageError(`--port must be an integer 0..65535, got "${portText}"`);
  }
  const host = stringOption(args, 'host') ?? '127.0.0.1';
  const portWritten = portInHost(host);
  if (portWritten !== undefined) {
    throw new UsageError(
      `--host takes a host name or address without a port, got ${JSON.stringify(host)}: give the port with --port${portWritten === '' ? '' : ` (--port ${portWritten})`}`,
    );
  }
  const protoFiles = stringListOption(args, 'proto');
  const includeDirs = stringListOption(args, 'proto-path');
  if (includeDirs.length > 0 && protoFiles.length === 0) {
    throw new UsageError('-I/--proto-path is used only with --proto (it says where to find the protos)');
  }
  const keepCase = flagOption(args, 'keep-case');
  if (keepCase && protoFiles.length === 0) {
    throw new UsageError('--keep-case is used only with --proto (it says how to load the protos)');
  }
  const serveFlakyTest = !flagOption(args, 'no-flaky-test');
  if (!serveFlakyTest && protoFiles.length === 0) {
    throw new UsageError(
      '--no-flaky-test needs --proto: without FlakyTest, the server serves the protos alone',
    );
  }
  const sizeText = stringOption(args, 'max-receive-message-size');
  const maxReceiveMessageSize =
    sizeText === undefined ? undefined : /^\d+$/.test(sizeText) ? Number(sizeText) : -1;
  if (
    maxReceiveMessageSize !== undefined &&
    !(maxReceiveMessageSize >= 0 && maxReceiveMessageSize <= 2 ** 31 - 1)
  ) {
    throw new UsageError(
      `--max-receive-message-size must be a number of bytes 0..2147483647, got "${sizeText}"`,
    );
  }
  return {
    port,
    host,
    scriptFile: stringOption(args, 'script'),
    protoFiles,
    includeDirs,
    keepCase,
    serveFlakyTest,
    maxReceiveMessageSize,
    quiet: flagOption(args, 'quiet'),
  };
}

/** The script file's scripts, split into call ids and methods, and what looks like a mistake in it. */
interface ScriptFile {
  readonly byCallId: Record<string, AttemptScript[]>;
  readonly byMethod: Record<string, AttemptScript[]>;
  /** Call-id keys that look like a served method or service, each placed in the file. */
  readonly warnings: readonly string[];
}

/**
 * Reads and checks the script file, reporting every problem at once, each as `file:line:col: problem` (as `check`
 * does for a config): a syntax error, each entry that is not a valid script, each method key no service serves,
 * each `response` key that is not a field of its method's response message. A key is a method key when it names
 * a served method (with or without the leading `/`); one written as a method of a package
 * (`pkg.Service/Method`), or as a served service's method without its package, that no service serves is a
 * problem; every other key is a call id, with a warning when it looks like a served method or service. A leading
 * byte-order mark is ignored.
 */
async function loadScriptFile(file: string, services: readonly ServedService[]): Promise<ScriptFile> {
  let text: string;
  try {
    text = await readFileCapped(file, MAX_INPUT_BYTES);
  } catch (error) {
    const why =
      error instanceof InputTooLargeError
        ? tooLargeMessage(error, 'flaky-server', 'a script file')
        : errorMessage(error);
    throw new ScriptFileError([`cannot read script file ${file}: ${why}`]);
  }
  const source = parseJsonSource(text);
  if (!source.ok) {
    throw new ScriptFileError([
      `${file}:${source.position.line}:${source.position.column}: ${source.problem}`,
    ]);
  }
  const at = (path: JsonPath, target: 'value' | 'key' = 'value'): string => {
    const { line, column } = source.locate(path, target);
    return `${file}:${line}:${column}`;
  };
  const value = source.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScriptFileError([
      `${at([])}: must be a JSON object mapping call ids (or methods, "pkg.Service/Method") to arrays of attempt scripts`,
    ]);
  }
  const methods = new Map<string, ServedMethod>();
  for (const service of services) {
    for (const { method } of service.methods) {
      methods.set(method.path, method);
    }
  }
  const served = new Set(methods.keys());
  const byCallId: Record<string, AttemptScript[]> = {};
  const byMethod: Record<string, AttemptScript[]> = {};
  const problems: string[] = [];
  // A key written twice in one object: a warning at the one that counts (the last), as `check` gives it.
  const warnings: string[] = source
    .duplicateKeys()
    .sort((a, b) => a.last.offset - b.last.offset)
    .map(
      ({ path, ignored, last }) =>
        `${file}:${last.line}:${last.column}: ${formatJsonPath(path)}: ${duplicateKeyMessage(ignored)}`,
    );
  /** The key each method is scripted under: one method written twice (with and without its `/`) is one key. */
  const methodKeys = new Map<string, string>();
  for (const [key, script] of Object.entries(value)) {
    const where = `"${key}"`;
    const path = key.startsWith('/') ? key : `/${key}`;
    const method = methods.get(path);
    const sameMethod = method === undefined ? undefined : methodKeys.get(path);
    if (method !== undefined && sameMethod !== undefined) {
      // JSON.parse keeps keys in the order written: this one comes later, and would replace the other at start.
      const first = source.locate([sameMethod], 'key');
      warnings.push(
        `${at([key], 'key')}: ${JSON.stringify(key)} scripts the same method as ${JSON.stringify(sameMethod)} (line ${first.line}, column ${first.column}): only the last one is used, so the one at line ${first.line} is ignored`,
      );
      delete byMethod[sameMethod];
    }
    if (method !== undefined) {
      methodKeys.set(path, key);
    }
    const keyProblem =
      key === ''
        ? 'an empty key names no call id and no method: calls sent without x-flaky-call-id play their method\'s script, under a "pkg.Service/Method" key'
        : method === undefined
          ? unservedMethodKey(key, served)
          : undefined;
    if (keyProblem !== undefined) {
      problems.push(`${at([key], 'key')}: ${keyProblem}`);
    }
    if (!Array.isArray(script) || script.length === 0) {
      try {
        validateAttemptScripts(script, where);
      } catch (error) {
        problems.push(`${at([key])}: ${errorMessage(error)}`);
      }
      continue;
    }
    const checked: AttemptScript[] = [];
    script.forEach((entry: unknown, i) => {
      try {
        const attempt = validateAttemptScript(entry, `${where}[${i}]`);
        checked.push(attempt);
        const misfit = method === undefined ? undefined : scriptFitProblem(attempt, method);
        if (misfit !== undefined) {
          problems.push(`${at([key, i])}: ${where}[${i}]: ${misfit}`);
        }
        if (method?.response !== undefined && attempt.response !== undefined) {
          for (const problem of responseKeyProblems(attempt.response, method.response, method.path)) {
            const place = at([key, i, 'response', ...problem.path], 'key');
            problems.push(`${place}: ${where}[${i}].${formatResponsePath(problem.path)}: ${problem.message}`);
          }
        }
      } catch (error) {
        for (const problem of attemptProblems(entry, `${where}[${i}]`, errorMessage(error), method)) {
          const place = problem.field === undefined ? at([key, i]) : at([key, i, problem.field], 'key');
          problems.push(`${place}: ${problem.text}`);
        }
      }
    });
    if (method !== undefined) {
      byMethod[key] = checked;
    } else {
      byCallId[key] = checked;
      // a key already refused as a method needs no warning that it resembles one
      const resemblance = keyProblem === undefined ? methodLikeCallId(key, served) : undefined;
      if (resemblance !== undefined) {
        const hint =
          resemblance.kind === 'method'
            ? resemblance.methods === undefined
              ? `to script the method, write ${JSON.stringify(resemblance.method)}`
              : `several served methods fit it: to script one, write its key, ${quotedAlternatives(resemblance.methods)}`
            : `a key scripts one method: to script the methods of ${resemblance.services?.join(' or ') ?? resemblance.service}, write one key per method, such as ${JSON.stringify(resemblance.example)}`;
        warnings.push(
          `${at([key], 'key')}: ${JSON.stringify(key)} scripts the calls whose x-flaky-call-id is ${JSON.stringify(key)}, not a method; ${hint}`,
        );
      }
    }
  }
  if (problems.length > 0) {
    throw new ScriptFileError(problems, warnings);
  }
  return { byCallId, byMethod, warnings };
}

/**
 * Every problem of an attempt script that failed its check (`first` is what the check said), so that one run
 * names them all: each field checked alone, placed at the field, and the fields the method's kind would ignore.
 * The whole attempt's first problem is kept when no field alone has it (a problem of fields together).
 */
function attemptProblems(
  entry: unknown,
  where: string,
  first: string,
  method: ServedMethod | undefined,
): Array<{ field?: string; text: string }> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return [{ text: first }];
  }
  const problems: Array<{ field?: string; text: string }> = [];
  const { status } = entry as { status?: unknown };
  // retryInfoMs is judged with the entry's own status (it needs a failed one), when that status is good alone.
  const statusAlone = status === undefined || attemptProblem({ status }, where) === undefined;
  for (const [field, value] of Object.entries(entry)) {
    const alone =
      field === 'retryInfoMs' && statusAlone ? { status, retryInfoMs: value } : { [field]: value };
    const problem = attemptProblem(alone, where);
    if (problem !== undefined) {
      problems.push({ field, text: problem });
    }
  }
  if (!problems.some((problem) => problem.text === first)) {
    problems.unshift({ text: first });
  }
  const misfit = method === undefined ? undefined : scriptFitProblem(entry as AttemptScript, method);
  if (misfit !== undefined) {
    problems.push({ text: `${where}: ${misfit}` });
  }
  return problems;
}

/** What the attempt-script check says of `script`, or undefined when it passes. */
function attemptProblem(script: object, where: string): string | undefined {
  try {
    validateAttemptScript(script, where);
    return undefined;
  } catch (error) {
    return errorMessage(error);
  }
}

/**
 * The library's error for a server that did not start, in the command's words: without the `FlakyServer...:`
 * prefix (the command prints its own), with a method-script problem placed in the script file, and with the likely
 * cause of an address that cannot be bound.
 * @internal exported for tests
 */
export function startErrorMessage(
  message: string,
  args: Pick<FlakyServerArgs, 'scriptFile' | 'port'>,
): string {
  const methodScripts = /^FlakyServer\.start: methodScripts: /;
  if (methodScripts.test(message) && args.scriptFile !== undefined) {
    return message.replace(methodScripts, `${args.scriptFile}: `);
  }
  const text = message.replace(/^FlakyServer(\.\w+)?: /, '');
  // The hint only when grpc-js says it could not listen on what the host resolved to ("No address added") and
  // names no cause: not when the cause is written (EADDRINUSE, EADDRNOTAVAIL, EACCES...), nor when the host did not
  // resolve or parse ("Name resolution failed", "Failed to parse DNS address"), where no process is to blame.
  if (
    /^cannot bind /.test(text) &&
    args.port !== 0 &&
    /\bNo address added\b/.test(text) &&
    !/\bE[A-Z]{3,}\b/.test(text)
  ) {
    return `${text} (is another process listening on port ${args.port}?)`;
  }
  return text;
}

/**
 * Whether a cancelled attempt ended once its deadline (the client's `grpc-timeout`) had passed: grpc-js ended it
 * then, not the client (the clock's 1 ms steps allowed for).
 */
function deadlinePassed(attempt: RecordedAttempt): boolean {
  return (
    attempt.deadline !== undefined && attempt.endedAt !== undefined && attempt.endedAt >= attempt.deadline - 1
  );
}

/**
 * One log line for a finished (ended or cancelled) attempt. An attempt the server's stop cut off says so
 * (`cutOffByStop`); one its client cancelled, or whose deadline passed, while the server was stopping says that.
 */
export function formatAttemptLine(attempt: RecordedAttempt): string {
  // the method as a script file's key names it: two services may share a method name
  const method = attempt.method.replace(/^\//, '');
  const previous = attempt.previousRpcAttempts === undefined ? '-' : String(attempt.previousRpcAttempts);
  let outcome: string;
  if (attempt.cancelled) {
    outcome =
      attempt.cutOffByStop === true
        ? 'cut off by the server stopping'
        : deadlinePassed(attempt)
          ? 'DEADLINE_EXCEEDED (its deadline passed)'
          : 'CANCELLED by client';
  } else if (attempt.endedWith === undefined) {
    outcome = 'running';
  } else if (attempt.endedWith === grpc.status.OK) {
    outcome = `OK responses=${attempt.responsesSent}`;
  } else {
    outcome = `${statusLabel(attempt.endedWith)} ${JSON.stringify(attempt.endedDetails ?? '')}`;
  }
  const took = attempt.endedAt === undefined ? '' : ` ${attempt.endedAt - attempt.arrivedAt}ms`;
  // the call id, method and details come from the client and the script: one line, whatever they hold
  const line =
    `${new Date(attempt.arrivedAt).toISOString()} call=${attempt.callId === '' ? '-' : JSON.stringify(attempt.callId)} attempt=${attempt.attempt}` +
    ` ${method} previous-attempts=${previous} -> ${outcome}${took}`;
  return `${escapeControlCharacters(line)}\n`;
}

/**
 * The `grpc-retry-hedging flaky-server` command. `argv` holds the arguments after `flaky-server`. Resolves with the
 * exit code once the server stopped (SIGINT, SIGTERM or `io.signal`): 0; 1 when the script file cannot be read or
 * is invalid, or the server cannot start; 2 for usage errors.
 */
export async function runFlakyServerCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  let args: FlakyServerArgs;
  try {
    const parsed = parseCommandArgs(argv, FLAKY_SERVER_OPTIONS, 0);
    if (printedHelpOrVersion(parsed, FLAKY_SERVER_USAGE, io)) {
      return EXIT_CODE.ok;
    }
    args = serverArgs(parsed);
  } catch (error) {
    if (!(error instanceof UsageError)) {
      throw error;
    }
    io.stderr(`flaky-server: ${error.message}\n\n${FLAKY_SERVER_USAGE}`);
    return EXIT_CODE.usage;
  }
  // The protos are loaded once, before the script file, so that its method keys and responses are checked against
  // the methods served, with their place in the file.
  let services: ServedService[];
  try {
    services = servedServices({
      proto: args.protoFiles,
      includeDirs: args.includeDirs,
      keepCase: args.keepCase,
      services: [],
      serveFlakyTest: args.serveFlakyTest,
    });
  } catch (error) {
    io.stderr(`flaky-server: ${escapeControlCharacters(startErrorMessage(errorMessage(error), args))}\n`);
    return EXIT_CODE.failure;
  }
  // Never empty: --no-flaky-test needs --proto (a usage error above), and a proto file that declares no service is
  // refused by name when it is loaded.
  let scripts: ScriptFile = { byCallId: {}, byMethod: {}, warnings: [] };
  if (args.scriptFile !== undefined) {
    try {
      scripts = await loadScriptFile(args.scriptFile, services);
    } catch (error) {
      if (!(error instanceof ScriptFileError)) {
        throw error;
      }
      for (const problem of error.problems) {
        io.stderr(`flaky-server: ${escapeControlCharacters(problem)}\n`);
      }
      for (const warning of error.warnings) {
        io.stderr(`flaky-server: warning: ${escapeControlCharacters(warning)}\n`);
      }
      return EXIT_CODE.failure;
    }
  }

  let server: FlakyServer;
  // grpc-js logs its own line for an address it cannot bind ("E No address added ..."), before the error this
  // command prints; unless GRPC_VERBOSITY asks for its logs, keep them quiet while binding.
  const quietBinding = process.env.GRPC_VERBOSITY === undefined;
  if (quietBinding) {
    grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  }
  try {
    server = await FlakyServer.start(
      // the script file's call ids that resemble a method were warned of above, placed in the file
      markCallIdHintsShown({
        port: args.port,
        host: args.host,
        scripts: scripts.byCallId,
        methodScripts: scripts.byMethod,
        // the services of the protos, as loaded above (FlakyTest, when served, by this option)
        services: services
          .filter((service) => !args.serveFlakyTest || service.name !== FLAKY_TEST_SERVICE)
          .map((service) => service.definition),
        serveFlakyTest: args.serveFlakyTest,
        serverOptions:
          args.maxReceiveMessageSize === undefined
            ? undefined
            : { 'grpc.max_receive_message_length': args.maxReceiveMessageSize },
        onAttemptEnd: args.quiet ? undefined : (attempt) => io.stdout(formatAttemptLine(attempt)),
      }),
    );
  } catch (error) {
    io.stderr(`flaky-server: ${escapeControlCharacters(startErrorMessage(errorMessage(error), args))}\n`);
    return EXIT_CODE.failure;
  } finally {
    if (quietBinding) {
      grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
    }
  }
  io.stdout(`flaky server listening on ${server.address}\n`);
  for (const warning of scripts.warnings) {
    io.stderr(`flaky-server: warning: ${escapeControlCharacters(warning)}\n`);
  }
  if (args.protoFiles.length > 0 && !args.quiet) {
    const services = new Set(server.servedMethods().map((path) => path.slice(1, path.lastIndexOf('/'))));
    io.stdout(`serving ${escapeControlCharacters([...services].join(', '))}\n`);
  }

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (io.signal?.aborted) {
      stop();
    } else {
      io.signal?.addEventListener('abort', stop, { once: true });
    }
  });
  await server.stop();
  if (!args.quiet) {
    io.stdout('flaky server stopped\n');
  }
  return EXIT_CODE.ok;
}
