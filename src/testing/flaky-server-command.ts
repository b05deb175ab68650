import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import type { AttemptScript, RecordedAttempt } from './flaky-script.js';
import { FlakyServer, validateAttemptScripts } from './flaky-server.js';

/** Where the command writes, and how a host (or a test) can stop it without a process signal. */
export interface FlakyServerCommandIo {
  /** Receives whole lines, each ending with `\n`. */
  stdout(s: string): void;
  /** Receives whole lines, each ending with `\n`. */
  stderr(s: string): void;
  /** Aborting it stops the server like SIGINT does. */
  signal?: AbortSignal;
}

export const FLAKY_SERVER_USAGE = `usage: grpc-retry-hedging flaky-server [--port N] [--host HOST] [--script FILE] [--quiet]

Starts the scripted flaky test gRPC server (service grpc_retry_hedging.testing.v1.FlakyTest, protos/flaky_test.proto)
and logs one line per attempt until SIGINT/SIGTERM.

  --port N        port to listen on (default 0: pick a free port)
  --host HOST     host to bind (default 127.0.0.1)
  --script FILE   JSON object {"<call id>": [AttemptScript, ...], ...} registered at start
  --quiet         do not log attempts
  --help          show this help
`;

interface ParsedArgs {
  port: number;
  host: string;
  scriptFile: string | undefined;
  quiet: boolean;
  help: boolean;
}

class UsageError extends Error {}

function parseArgs(argv: readonly string[]): ParsedArgs {
  const parsed: ParsedArgs = { port: 0, host: '127.0.0.1', scriptFile: undefined, quiet: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const value = (): string => {
      if (eq !== -1) return arg.slice(eq + 1);
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      i++;
      return next;
    };
    const noValue = (): void => {
      if (eq !== -1) throw new UsageError(`${name} takes no value`);
    };
    switch (name) {
      case '--port': {
        const text = value();
        const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
        if (!(port >= 0 && port <= 65535))
          throw new UsageError(`--port must be an integer 0..65535, got "${text}"`);
        parsed.port = port;
        break;
      }
      case '--host': {
        const host = value();
        if (host === '') throw new UsageError('--host must not be empty');
        parsed.host = host;
        break;
      }
      case '--script':
        parsed.scriptFile = value();
        if (parsed.scriptFile === '') throw new UsageError('--script must not be empty');
        break;
      case '--quiet':
      case '-q':
        noValue();
        parsed.quiet = true;
        break;
      case '--help':
      case '-h':
        noValue();
        parsed.help = true;
        break;
      default:
        throw new UsageError(arg.startsWith('-') ? `unknown option ${name}` : `unexpected argument "${arg}"`);
    }
  }
  return parsed;
}

async function loadScriptFile(file: string): Promise<Record<string, AttemptScript[]>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read script file ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${file}: must be a JSON object mapping call ids to arrays of attempt scripts`);
  }
  const scripts: Record<string, AttemptScript[]> = {};
  for (const [callId, script] of Object.entries(value)) {
    try {
      scripts[callId] = validateAttemptScripts(script, `${file}: "${callId}"`);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  }
  return scripts;
}

function statusName(code: number): string {
  const name = (grpc.status as unknown as Record<number, string | undefined>)[code];
  return name ?? String(code);
}

/** One log line for a finished (ended or cancelled) attempt. */
export function formatAttemptLine(attempt: RecordedAttempt): string {
  const method = attempt.method.slice(attempt.method.lastIndexOf('/') + 1);
  const previous = attempt.previousRpcAttempts === undefined ? '-' : String(attempt.previousRpcAttempts);
  let outcome: string;
  if (attempt.cancelled) {
    outcome = 'CANCELLED by client';
  } else if (attempt.endedWith === undefined) {
    outcome = 'running';
  } else if (attempt.endedWith === grpc.status.OK) {
    outcome = `OK responses=${attempt.responsesSent}`;
  } else {
    outcome = `${statusName(attempt.endedWith)} ${JSON.stringify(attempt.endedDetails ?? '')}`;
  }
  const took = attempt.endedAt === undefined ? '' : ` ${attempt.endedAt - attempt.arrivedAt}ms`;
  return (
    `${new Date(attempt.arrivedAt).toISOString()} call=${JSON.stringify(attempt.callId)} attempt=${attempt.attempt}` +
    ` ${method} previous-attempts=${previous} -> ${outcome}${took}\n`
  );
}

/**
 * The `grpc-retry-hedging flaky-server` command. `argv` holds the arguments after `flaky-server`. Resolves with the
 * exit code once the server stopped (SIGINT, SIGTERM or `io.signal`): 0, or 2 for usage errors (including an
 * unreadable or invalid script file), 1 when the server cannot start.
 */
export async function runFlakyServerCommand(
  argv: readonly string[],
  io: FlakyServerCommandIo,
): Promise<number> {
  let args: ParsedArgs;
  let scripts: Record<string, AttemptScript[]> = {};
  try {
    args = parseArgs(argv);
    if (args.help) {
      io.stdout(FLAKY_SERVER_USAGE);
      return 0;
    }
    if (args.scriptFile !== undefined) scripts = await loadScriptFile(args.scriptFile);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`flaky-server: ${err.message}\n`);
    io.stderr(FLAKY_SERVER_USAGE);
    return 2;
  }

  let server: FlakyServer;
  try {
    server = await FlakyServer.start({
      port: args.port,
      host: args.host,
      scripts,
      onAttemptEnd: args.quiet ? undefined : (attempt) => io.stdout(formatAttemptLine(attempt)),
    });
  } catch (err) {
    io.stderr(`flaky-server: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  io.stdout(`flaky server listening on ${server.address}\n`);

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener('abort', stop, { once: true });
  });
  await server.stop();
  if (!args.quiet) io.stdout('flaky server stopped\n');
  return 0;
}
