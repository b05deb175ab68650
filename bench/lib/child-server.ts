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
