import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A FlakyServer in a child process (test/fixtures/flaky-server-process.ts): it answers while the test's own event
 * loop is stalled.
 */
export interface ServerProcess {
  address: string;
  script(callId: string, attempts: { delayMs?: number }[]): Promise<void>;
  /** Attempts the server has seen for `callId`. */
  attempts(callId: string): Promise<number>;
  /** Holds the server's event loop for `ms` (a GC pause of the server); resolves once it is over. */
  stall(ms: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startServerProcess(): Promise<ServerProcess> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('../fixtures/flaky-server-process.ts', import.meta.url)),
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const address = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`flaky-server-process exited (${code}) before it was ready`)),
    );
    child.once('message', (m) => resolve((m as { address: string }).address));
  });
  child.removeAllListeners('exit');
  let exited: Error | undefined;
  const failPending = new Set<(error: Error) => void>();
  child.once('exit', (code, signal) => {
    exited = new Error(`flaky-server-process exited (${code ?? signal})`);
    for (const fail of failPending) fail(exited);
  });
  let nextId = 1;
  const request = <T>(message: Record<string, unknown>): Promise<T> => {
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      if (exited) {
        reject(exited);
        return;
      }
      const onMessage = (raw: unknown) => {
        const reply = raw as { id: number; result: T };
        if (reply.id !== id) return;
        child.off('message', onMessage);
        failPending.delete(reject);
        resolve(reply.result);
      };
      failPending.add(reject);
      child.on('message', onMessage);
      child.send({ id, ...message });
    });
  };
  return {
    address,
    script: (callId, attempts) => request<boolean>({ op: 'script', callId, attempts }).then(() => undefined),
    attempts: (callId) => request<number>({ op: 'attempts', callId }),
    stall: (ms) => request<boolean>({ op: 'stall', ms }).then(() => undefined),
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await request<boolean>({ op: 'stop' });
      await gone;
    },
  };
}

/** Resolves once the server has seen an attempt of `callId` (polled every millisecond, for at most about a second). */
export async function untilServerHas(server: ServerProcess, callId: string): Promise<void> {
  for (let waited = 0; (await server.attempts(callId)) === 0; waited++) {
    if (waited > 1000) throw new Error(`${callId} never reached the server`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Holds the event loop for `ms`, as a GC pause or a busy handler does. */
export function stallEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}
