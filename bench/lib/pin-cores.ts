/**
 * Pinning a bench's client and server processes each to a core of their own, for benchmarks whose variants run one
 * after another and are compared by their tail latency.
 *
 * Unpinned, the client and the server share both cores with each other's threads (V8's compiler and GC helpers,
 * libuv's pool), and the scheduler moves them about: a call whose client or server thread waits behind the other
 * process's work takes longer, whatever its hedging delay, and it falls on one variant and not on the next. On a
 * 2-core AMD EPYC VM, the best static delay of `bench:adaptive` run a second time (the control) was more than ×1.15
 * off its first run's p99 in 5 and 9 phases of 21 (two series of seven runs) unpinned, and in 1 of 24 (eight runs,
 * ×1.16) pinned (BENCHMARKS.md, "A core each").
 *
 * Linux only, with `taskset` (util-linux): `taskset -a -p -c CORE PID` sets the CPU affinity of every thread the
 * process has, and the threads it starts later inherit it.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** The cores a pinned run uses: the client's and the server's. */
export interface PinnedCores {
  readonly client: number;
  readonly server: number;
}

/**
 * Why this machine cannot pin the bench's processes, or undefined if it can: it must run Linux, have at least two
 * cores this process may use, and have `taskset`.
 */
export function cannotPin(): string | undefined {
  if (os.platform() !== 'linux') {
    return `pinning needs Linux (this is ${os.platform()})`;
  }
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  if (cores < 2) {
    return `pinning needs two cores (this process may use ${cores})`;
  }
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return 'pinning needs taskset (util-linux), which did not run';
  }
  return undefined;
}

/**
 * Pins every thread of process `pid` to core `core`, and checks that the process now runs there. Throws an Error
 * naming the process and the core if `taskset` fails or the process is gone (`taskset -a` alone says nothing of a
 * process with no threads to pin).
 */
export function pinProcess(pid: number, core: number): void {
  let affinity: string;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    affinity = execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    throw new Error(`could not pin process ${pid} to core ${core} with taskset: ${(error as Error).message}`);
  }
  const list = /affinity list:\s*(\S+)/.exec(affinity)?.[1];
  if (list !== String(core)) {
    throw new Error(`could not pin process ${pid} to core ${core} with taskset: it runs on ${list ?? '?'}`);
  }
}

/**
 * Pins this process to one core and the server process `serverPid` to another (the client on core 0, the server
 * on core 1), and returns which.
 */
export function pinClientAndServer(serverPid: number): PinnedCores {
  const cores: PinnedCores = { client: 0, server: 1 };
  pinProcess(process.pid, cores.client);
  pinProcess(serverPid, cores.server);
  return cores;
}
