/**
 * A connection torn down under hedged streams (client closed, server shut down at once) must leave a process that
 * exits. Node's HTTP/2 never returns from a reset of one stream made inside the teardown of another's session, so
 * the losing hedges are cancelled on the next turn (src/retry/status-callback.ts). The scenario runs in a child
 * process: a spinning event loop would never let this one time out.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('hedged streams, then client.close() and server.forceShutdown(): the process exits on its own', async () => {
  const child = fork(fileURLToPath(new URL('../fixtures/hedged-streams-teardown.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | string | null>((resolve) =>
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? signal)),
  );
  clearTimeout(killer);
  expect(code).toBe(0);
  expect(output).toContain('exited');
}, 30_000);
