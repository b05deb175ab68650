/**
 * `grpc-retry-hedging flaky-server [--port N] [--host HOST] [--script FILE] [--proto FILE ...] [-I DIR ...]
 * [--quiet]`: runs the scripted flaky test server (FlakyTest and the services of the given protos) and logs one
 * line per attempt.
 */

import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import type { JsonPath } from '../config/json-path.js';
import { parseJsonSource } from '../config/json-source.js';
import { statusCodeName } from '../config/status-codes.js';
import {
  type AttemptScript,
  FlakyServer,
  type RecordedAttempt,
  validateAttemptScript,
  validateAttemptScripts,
} from '../testing/index.js';
import { errorMessage } from '../util/error-message.js';
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

/** Usage text of the flaky-server command. */
export const FLAKY_SERVER_USAGE = `Usage: grpc-retry-hedging flaky-server [--port N] [--host HOST] [--script FILE]
                                      [--proto FILE ...] [-I DIR ...] [--quiet]

Starts the scripted flaky test gRPC server (service grpc_retry_hedging.testing.v1.FlakyTest, protos/flaky_test.proto,
and every service of the --proto files) and logs one line per attempt until SIGINT/SIGTERM.

  --port N                port to listen on (default 0: pick a free port)
  --host HOST             host to bind (default 127.0.0.1)
  --script FILE           JSON object registered at start: {"<call id>": [AttemptScript, ...]} scripts the attempts
                          of a call id; {"pkg.Service/Method": [AttemptScript, ...]} those of a method
  --proto FILE            serve the services of this proto too, every method scriptable (repeatable)
  -I, --proto-path DIR    directory in which to look for protos and their imports, as protoc (repeatable)
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
  readonly quiet: boolean;
}

/** An unreadable or invalid script file: one line, exit 1. */
class ScriptFileError extends Error {}

function serverArgs(args: CommandArgs): FlakyServerArgs {
  const portText = stringOption(args, 'port') ?? '0';
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new UsageError(`--port must be an integer 0..65535, got "${portText}"`);
  }
  const protoFiles = stringListOption(args, 'proto');
  const includeDirs = stringListOption(args, 'proto-path');
  if (includeDirs.length > 0 && protoFiles.length === 0) {
    throw new UsageError('-I/--proto-path is used only with --proto (it says where to find the protos)');
  }
  return {
    port,
    host: stringOption(args, 'host') ?? '127.0.0.1',
    scriptFile: stringOption(args, 'script'),
    protoFiles,
    includeDirs,
    quiet: flagOption(args, 'quiet'),
  };
}

/**
 * Reads and checks the script file, reporting every problem at once, each as `file:line:col: problem` (as `check`
 * does for a config): a syntax error, or each entry that is not a valid script. A leading byte-order mark is
 * ignored.
 */
async function loadScriptFile(file: string): Promise<Record<string, AttemptScript[]>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ScriptFileError(`cannot read script file ${file}: ${errorMessage(error)}`);
  }
  const source = parseJsonSource(text);
  if (!source.ok) {
    throw new ScriptFileError(`${file}:${source.position.line}:${source.position.column}: ${source.problem}`);
  }
  const at = (path: JsonPath): string => {
    const { line, column } = source.locate(path);
    return `${file}:${line}:${column}`;
  };
  const value = source.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScriptFileError(
      `${at([])}: must be a JSON object mapping call ids (or methods, "pkg.Service/Method") to arrays of attempt scripts`,
    );
  }
  const scripts: Record<string, AttemptScript[]> = {};
  const problems: string[] = [];
  for (const [callId, script] of Object.entries(value)) {
    const where = `"${callId}"`;
    if (!Array.isArray(script) || script.length === 0) {
      try {
        validateAttemptScripts(script, where);
      } catch (error) {
        problems.push(`${at([callId])}: ${errorMessage(error)}`);
      }
      continue;
    }
    const checked: AttemptScript[] = [];
    script.forEach((entry: unknown, i) => {
      try {
        checked.push(validateAttemptScript(entry, `${where}[${i}]`));
      } catch (error) {
        problems.push(`${at([callId, i])}: ${errorMessage(error)}`);
      }
    });
    scripts[callId] = checked;
  }
  if (problems.length > 0) {
    throw new ScriptFileError(problems.join('\nflaky-server: '));
  }
  return scripts;
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
  if (/^cannot bind /.test(text) && args.port !== 0 && !/EADDRINUSE/.test(text)) {
    return `${text} (is another process listening on port ${args.port}?)`;
  }
  return text;
}

/**
 * A call-id key that is a served method's bare name (`"GetItem"`) was most likely meant to script the method: say
 * how to write that, once per such key. It still scripts the calls with that `x-flaky-call-id`.
 */
function callIdsNamedLikeMethods(callIds: readonly string[], servedMethods: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const callId of callIds) {
    const matches = servedMethods.filter(
      (path) => path.slice(path.lastIndexOf('/') + 1).toLowerCase() === callId.toLowerCase(),
    );
    if (matches.length > 0) {
      const written = matches.map((path) => JSON.stringify(path.slice(1))).join(' or ');
      warnings.push(
        `"${callId}" scripts the calls whose x-flaky-call-id is "${callId}", not a method; to script the method, write ${written}`,
      );
    }
  }
  return warnings;
}

/**
 * One log line for a finished (ended or cancelled) attempt. `stopping`: the server is shutting down, so an attempt
 * cancelled now was cut off by the shutdown, not by its client.
 */
export function formatAttemptLine(attempt: RecordedAttempt, stopping = false): string {
  const method = attempt.method.slice(attempt.method.lastIndexOf('/') + 1);
  const previous = attempt.previousRpcAttempts === undefined ? '-' : String(attempt.previousRpcAttempts);
  let outcome: string;
  if (attempt.cancelled) {
    outcome = stopping ? 'cut off by the server stopping' : 'CANCELLED by client';
  } else if (attempt.endedWith === undefined) {
    outcome = 'running';
  } else if (attempt.endedWith === grpc.status.OK) {
    outcome = `OK responses=${attempt.responsesSent}`;
  } else {
    outcome = `${statusCodeName(attempt.endedWith)} ${JSON.stringify(attempt.endedDetails ?? '')}`;
  }
  const took = attempt.endedAt === undefined ? '' : ` ${attempt.endedAt - attempt.arrivedAt}ms`;
  return (
    `${new Date(attempt.arrivedAt).toISOString()} call=${JSON.stringify(attempt.callId)} attempt=${attempt.attempt}` +
    ` ${method} previous-attempts=${previous} -> ${outcome}${took}\n`
  );
}

/**
 * The `grpc-retry-hedging flaky-server` command. `argv` holds the arguments after `flaky-server`. Resolves with the
 * exit code once the server stopped (SIGINT, SIGTERM or `io.signal`): 0; 1 when the script file cannot be read or
 * is invalid, or the server cannot start; 2 for usage errors.
 */
export async function runFlakyServerCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  let args: FlakyServerArgs;
  let scripts: Record<string, AttemptScript[]> = {};
  try {
    const parsed = parseCommandArgs(argv, FLAKY_SERVER_OPTIONS, 0);
    if (printedHelpOrVersion(parsed, FLAKY_SERVER_USAGE, io)) {
      return EXIT_CODE.ok;
    }
    args = serverArgs(parsed);
    if (args.scriptFile !== undefined) {
      scripts = await loadScriptFile(args.scriptFile);
    }
  } catch (error) {
    if (error instanceof ScriptFileError) {
      io.stderr(`flaky-server: ${error.message}\n`);
      return EXIT_CODE.failure;
    }
    if (!(error instanceof UsageError)) {
      throw error;
    }
    io.stderr(`flaky-server: ${error.message}\n\n${FLAKY_SERVER_USAGE}`);
    return EXIT_CODE.usage;
  }

  // Keys naming a method ("pkg.Service/Method") script that method; the others are call ids.
  const byCallId: Record<string, AttemptScript[]> = {};
  const byMethod: Record<string, AttemptScript[]> = {};
  for (const [key, script] of Object.entries(scripts)) {
    (/^\/?[\w.]+\/\w+$/.test(key) ? byMethod : byCallId)[key] = script;
  }
  let server: FlakyServer;
  // grpc-js logs its own line for an address it cannot bind ("E No address added ..."), before the error this
  // command prints; unless GRPC_VERBOSITY asks for its logs, keep them quiet while binding.
  const quietBinding = process.env.GRPC_VERBOSITY === undefined;
  let stopping = false;
  if (quietBinding) {
    grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  }
  try {
    server = await FlakyServer.start({
      port: args.port,
      host: args.host,
      scripts: byCallId,
      methodScripts: byMethod,
      proto: args.protoFiles,
      includeDirs: args.includeDirs,
      onAttemptEnd: args.quiet ? undefined : (attempt) => io.stdout(formatAttemptLine(attempt, stopping)),
    });
  } catch (error) {
    io.stderr(`flaky-server: ${startErrorMessage(errorMessage(error), args)}\n`);
    return EXIT_CODE.failure;
  } finally {
    if (quietBinding) {
      grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
    }
  }
  io.stdout(`flaky server listening on ${server.address}\n`);
  for (const warning of callIdsNamedLikeMethods(Object.keys(byCallId), server.servedMethods())) {
    io.stderr(`flaky-server: warning: ${warning}\n`);
  }
  if (args.protoFiles.length > 0 && !args.quiet) {
    const services = new Set(server.servedMethods().map((path) => path.slice(1, path.lastIndexOf('/'))));
    io.stdout(`serving ${[...services].join(', ')}\n`);
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
  stopping = true;
  await server.stop();
  if (!args.quiet) {
    io.stdout('flaky server stopped\n');
  }
  return EXIT_CODE.ok;
}
