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
 * The cores in a CPU list as Linux writes it (`taskset -c -p`, /proc's `Cpus_allowed_list`): "0-1", "2,3",
 * "0-3,6". Throws an Error quoting the list if it is not one.
 */
export function parseCoreList(list: string): number[] {
  const cores: number[] = [];
  for (const part of list.trim().split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range === null) {
      throw new Error(`not a CPU list: "${list}"`);
    }
    const first = Number(range[1]);
    const last = range[2] === undefined ? first : Number(range[2]);
    for (let core = first; core <= last; core++) {
      cores.push(core);
    }
  }
  return cores;
}

/** The cores process `pid` may run on, as `taskset` reports them. Throws if `taskset` fails. */
export function allowedCores(pid: number = process.pid): number[] {
  const out = execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8', stdio: 'pipe' });
  const list = /affinity list:\s*(\S+)/.exec(out)?.[1];
  if (list === undefined) {
    throw new Error(`taskset said nothing of process ${pid}'s cores: "${out.trim()}"`);
  }
  return parseCoreList(list);
}

/**
 * The cores to pin the client and the server to, the first two this process may use (core 0 and core 1 on most
 * machines); or why this machine cannot pin: it must run Linux and have `taskset`, and this process must be
 * allowed at least two cores.
 */
export function coresToPin(): PinnedCores | string {
  if (os.platform() !== 'linux') {
    return `pinning needs Linux (this is ${os.platform()})`;
  }
  let cores: number[];
  try {
    cores = allowedCores();
  } catch {
    return 'pinning needs taskset (util-linux), which did not run';
  }
  const [client, server] = cores;
  if (client === undefined || server === undefined) {
    return `pinning needs two cores (this process may use ${cores.join(', ')})`;
  }
  return { client, server };
}

/**
 * Pins every thread of process `pid` to core `core`, and checks that the process now runs there. Throws an Error
 * naming the process and the core if `taskset` fails or the process is gone (`taskset -a` alone says nothing of a
 * process with no threads to pin).
 */
export function pinProcess(pid: number, core: number): void {
  let cores: number[];
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    cores = allowedCores(pid);
  } catch (error) {
    throw new Error(`could not pin process ${pid} to core ${core} with taskset: ${(error as Error).message}`);
  }
  if (cores.length !== 1 || cores[0] !== core) {
    throw new Error(
      `could not pin process ${pid} to core ${core} with taskset: it runs on ${cores.join(', ')}`,
    );
  }
}

/** Pins this process to `cores.client` and the server process `serverPid` to `cores.server`. */
export function pinClientAndServer(serverPid: number, cores: PinnedCores): void {
  pinProcess(process.pid, cores.client);
  pinProcess(serverPid, cores.server);
}
