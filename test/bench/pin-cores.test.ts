import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { allowedCores, coresToPin, parseCoreList, pinProcess } from '../../bench/lib/pin-cores.js';

/** The cores each thread of process `pid` may run on, as /proc lists them ("1", "0-1"). */
function threadCores(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)?.[1] ?? '?';
  });
}

const toPin = coresToPin();
const whyNot = typeof toPin === 'string' ? toPin : undefined;

describe("bench:adaptive's pinned cores", () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
  });

  it.skipIf(whyNot !== undefined)('pin every thread of a process to the core asked for', async () => {
    child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const pid = child.pid as number;
    // Node starts its V8 and libuv threads before it runs the script; wait until it has more than one.
    for (let i = 0; i < 100 && readdirSync(`/proc/${pid}/task`).length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(threadCores(pid).length).toBeGreaterThan(1);
    const core = allowedCores()[1] as number;
    expect(threadCores(pid)).not.toEqual(threadCores(pid).map(() => String(core)));
    pinProcess(pid, core);
    const cores = threadCores(pid);
    expect(cores).toEqual(cores.map(() => String(core)));
  });

  it.skipIf(whyNot !== undefined)('say which process and core when taskset fails', () => {
    // A pid above Linux's pid_max (4,194,304 at most) names no process.
    expect(() => pinProcess(99_999_999, 1)).toThrow(/could not pin process 99999999 to core 1 with taskset/);
  });

  it('read the CPU lists Linux writes, and name a list that is not one', () => {
    expect(parseCoreList('0-1')).toEqual([0, 1]);
    expect(parseCoreList('2,3')).toEqual([2, 3]);
    expect(parseCoreList('0-3,6\n')).toEqual([0, 1, 2, 3, 6]);
    expect(parseCoreList('5')).toEqual([5]);
    expect(() => parseCoreList('0-1,x')).toThrow('not a CPU list: "0-1,x"');
    expect(() => parseCoreList('')).toThrow(/not a CPU list/);
  });

  it.skipIf(whyNot !== undefined)("take a process's cores from taskset, as /proc lists them", () => {
    const listed = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
    expect(allowedCores()).toEqual(parseCoreList(listed));
    expect(allowedCores().length).toBeGreaterThanOrEqual(2);
  });

  it('say why a machine cannot pin, or which two cores it pins to', () => {
    if (process.platform !== 'linux') {
      expect(whyNot).toMatch(/needs Linux/);
    } else {
      expect(whyNot === undefined || /needs (two cores|taskset)/.test(whyNot)).toBe(true);
    }
    if (whyNot === undefined) {
      const [client, server] = allowedCores();
      expect(toPin).toEqual({ client, server });
    }
  });
});
