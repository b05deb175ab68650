import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cannotPin, pinProcess } from '../../bench/lib/pin-cores.js';

/** The cores each thread of process `pid` may run on, as /proc lists them ("1", "0-1"). */
function threadCores(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)?.[1] ?? '?';
  });
}

const whyNot = cannotPin();

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
    expect(threadCores(pid)).not.toEqual(threadCores(pid).map(() => '1'));
    pinProcess(pid, 1);
    const cores = threadCores(pid);
    expect(cores).toEqual(cores.map(() => '1'));
  });

  it.skipIf(whyNot !== undefined)('say which process and core when taskset fails', () => {
    // A pid above Linux's pid_max (4,194,304 at most) names no process.
    expect(() => pinProcess(99_999_999, 1)).toThrow(/could not pin process 99999999 to core 1 with taskset/);
  });

  it('say why a machine cannot pin, or nothing when it can', () => {
    if (process.platform !== 'linux') {
      expect(whyNot).toMatch(/needs Linux/);
    } else {
      expect(whyNot === undefined || /needs (two cores|taskset)/.test(whyNot)).toBe(true);
    }
  });
});
