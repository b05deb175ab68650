/**
 * Running a benchmark server in its own process.
 *
 * Parent side: {@link spawnBenchServer} starts `node --import tsx <script>`, reads the `PORT <n>` line the child
 * prints on stdout, and talks to it over the IPC channel ({@link BenchServerProcess.request}).
 * Child side: {@link serveControl} answers those requests and exits when the parent goes away.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Root of the package (two levels above bench/lib). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface ControlRequest {
  id: number;
  cmd: string;
  args?: unknown;
}

interface ControlReply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export interface BenchServerProcess {
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly pid: number;
  /** Sends a control command to the child and resolves with its answer. */
  request<T = unknown>(cmd: string, args?: unknown): Promise<T>;
  /** Asks the child to shut down and waits for it to exit (kills it after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `script` (a path relative to the package root) in a child Node process with tsx, and resolves once it
 * printed `PORT <n>` on stdout. Other stdout lines are forwarded to our stderr with a prefix.
 */
export function spawnBenchServer(
  script: string,
  args: readonly string[] = [],
  { startTimeoutMs = 20_000, nodeArgs = [] as readonly string[] } = {},
): Promise<BenchServerProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', ...nodeArgs, resolve(PACKAGE_ROOT, script), ...args],
    { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let exited = false;
  const exitPromise = new Promise<void>((done) => {
    child.once('exit', (code, signal) => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`bench server exited (${code ?? signal})`));
      pending.clear();
      done();
    });
  });
  child.on('message', (raw: unknown) => {
    const reply = raw as ControlReply;
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.result);
    else p.reject(new Error(reply.error ?? 'bench server error'));
  });

  return new Promise<BenchServerProcess>((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill();
      rejectStart(new Error(`${script}: no PORT line within ${startTimeoutMs} ms`));
    }, startTimeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      rejectStart(new Error(`${script} exited with ${code} before printing its port`));
    });
    const lines = createInterface({ input: child.stdout! });
    let port: number | undefined;
    lines.on('line', (line) => {
      const match = /^PORT (\d+)$/.exec(line.trim());
      if (port === undefined && match) {
        port = Number(match[1]);
        clearTimeout(timer);
        const server: BenchServerProcess = {
          port,
          address: `127.0.0.1:${port}`,
          pid: child.pid ?? -1,
          request<T>(cmd: string, args?: unknown): Promise<T> {
            if (exited) return Promise.reject(new Error('bench server has exited'));
            const id = nextId++;
            return new Promise<T>((res, rej) => {
              pending.set(id, { resolve: res as (v: unknown) => void, reject: rej });
              child.send({ id, cmd, args } satisfies ControlRequest);
            });
          },
          async stop(graceMs = 3000): Promise<void> {
            if (exited) return;
            try {
              child.send({ id: nextId++, cmd: 'exit' } satisfies ControlRequest);
            } catch {
              // channel already closed
            }
            const timeout = setTimeout(() => child.kill('SIGKILL'), graceMs);
            await exitPromise;
            clearTimeout(timeout);
          },
        };
        resolveStart(server);
      } else {
        process.stderr.write(`[${script}] ${line}\n`);
      }
    });
  });
}

/** Handler of one control command in the child; may be async. */
export type ControlHandler = (args: unknown) => unknown;

/**
 * Child side: prints `PORT <port>` on stdout, answers IPC control requests with `handlers`, and on `exit` (or when
 * the parent disconnects) calls `shutdown` and exits.
 */
export function serveControl(
  port: number,
  handlers: Record<string, ControlHandler>,
  shutdown: () => Promise<void> | void,
): void {
  let leaving = false;
  const leave = async (): Promise<void> => {
    if (leaving) return;
    leaving = true;
    try {
      await Promise.race([shutdown(), new Promise((r) => setTimeout(r, 1000))]);
    } finally {
      process.exit(0);
    }
  };
  process.on('message', async (raw: unknown) => {
    const request = raw as ControlRequest;
    if (request.cmd === 'exit') {
      void leave();
      return;
    }
    const handler = request.cmd === 'cpu' ? cpuHandler : handlers[request.cmd];
    let reply: ControlReply;
    try {
      if (!handler) throw new Error(`unknown command ${request.cmd}`);
      reply = { id: request.id, ok: true, result: await handler(request.args) };
    } catch (error) {
      reply = { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    process.send?.(reply);
  });
  process.on('disconnect', () => void leave());
  process.stdout.write(`PORT ${port}\n`);
}

/** Built-in control command `cpu`: this process's user+system CPU time so far, in ms. */
const cpuHandler: ControlHandler = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** The path given as `--name=PATH` in argv, resolved from the package root; undefined when there is none. */
export function pathArg(name: string, argv = process.argv.slice(2)): string | undefined {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? undefined : resolve(PACKAGE_ROOT, arg.slice(name.length + 3));
}

/**
 * Reads `--name=value` options from argv (numbers only), with defaults: each key of `defaults`, camelCase, is the
 * option in kebab case (`learnCalls`: `--learn-calls=300`). An option given that is neither one of them nor among
 * `others` (options read elsewhere, such as `--trace=FILE`) is an error naming it and the known ones: a mistyped
 * option would otherwise leave its default in force and say nothing. So is one of them given without `=value`
 * (`--seed 5` would run with the default seed). Other arguments without `--name=` pass. `--help` (or `-h`) hands
 * `help` the known options with their defaults, one per line; by default it prints them and exits.
 */
export function numericArgs<T extends Record<string, number>>(
  defaults: T,
  {
    argv = process.argv.slice(2),
    others = [],
    help = printOptionsAndExit,
  }: { argv?: readonly string[]; others?: readonly string[]; help?: (options: string) => void } = {},
): T {
  const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const known = [...Object.keys(defaults).map(kebab), ...others];
  const out: Record<string, number> = { ...defaults };
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') {
      help(
        [
          ...Object.entries(defaults).map(([key, value]) => `--${kebab(key)}=${value}`),
          ...others.map((name) => `--${name}=…`),
        ].join('\n'),
      );
      continue;
    }
    const match = /^--([\w-]+)=(.*)$/.exec(arg);
    if (!match) {
      const bare = /^--([\w-]+)$/.exec(arg)?.[1];
      if (bare !== undefined && known.includes(bare)) {
        throw new Error(`--${bare} needs a value: --${bare}=…, in one argument`);
      }
      continue;
    }
    const name = match[1] as string;
    const key = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (key in out) {
      const value = Number(match[2]);
      if (match[2] === '' || !Number.isFinite(value))
        throw new Error(`--${name} must be a number, got ${JSON.stringify(match[2])}`);
      out[key] = value;
    } else if (!others.includes(name)) {
      throw new Error(`unknown option --${name} (known: ${known.map((k) => `--${k}`).join(', ')})`);
    }
  }
  return out as T;
}

/** `numericArgs`' answer to `--help`: the options and their defaults on stdout, then exit. */
function printOptionsAndExit(options: string): never {
  process.stdout.write(`options (defaults shown):\n${options}\n`);
  process.exit(0);
}
