/** Describes the machine and versions a benchmark ran on. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';

const require = createRequire(import.meta.url);

export function grpcJsVersion(): string {
  try {
    const pkgPath = require.resolve('@grpc/grpc-js/package.json');
    return (JSON.parse(readFileSync(pkgPath, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface MachineInfo {
  node: string;
  grpcJs: string;
  cores: number;
  cpu: string;
  platform: string;
  date: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    grpcJs: grpcJsVersion(),
    cores: os.availableParallelism?.() ?? cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/**
 * One line for the head of a results file. `pinned`: the client and the server each ran on a core of its own
 * (bench/lib/pin-cores.ts), not on all of them.
 */
export function machineLine(info: MachineInfo = machineInfo(), pinned = false): string {
  return (
    `Node ${info.node}, @grpc/grpc-js ${info.grpcJs}, ${info.cores} cores (${info.cpu}), ${info.platform}; ` +
    `client and server processes ${pinned ? 'run on a core each' : 'share these cores'}. Run ${info.date}.`
  );
}

/** Busy and total CPU time of the whole machine so far, in ms (all cores summed). */
export interface CpuSnapshot {
  busyMs: number;
  totalMs: number;
  /** This process's user+system CPU time, ms. */
  selfMs: number;
}

export function cpuSnapshot(): CpuSnapshot {
  let busyMs = 0;
  let totalMs = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    const total = t.user + t.nice + t.sys + t.idle + t.irq;
    totalMs += total;
    busyMs += total - t.idle;
  }
  const self = process.cpuUsage();
  return { busyMs, totalMs, selfMs: (self.user + self.system) / 1000 };
}

/**
 * CPU use between two snapshots, in cores: the whole machine, and the machine minus this process and
 * `otherOwnMs` (CPU time of our own child processes over the same interval).
 */
export function cpuBetween(
  a: CpuSnapshot,
  b: CpuSnapshot,
  wallMs: number,
  otherOwnMs = 0,
): { machineCores: number; foreignCores: number } {
  const machineCores = (b.busyMs - a.busyMs) / wallMs;
  const ownCores = (b.selfMs - a.selfMs + otherOwnMs) / wallMs;
  return { machineCores, foreignCores: Math.max(0, machineCores - ownCores) };
}

/** Busy share of the machine (0..1) over the next `ms` milliseconds, used to warn about a busy machine. */
export async function sampleMachineBusy(ms = 1000): Promise<number> {
  const a = cpuSnapshot();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuSnapshot();
  return b.totalMs > a.totalMs ? (b.busyMs - a.busyMs) / (b.totalMs - a.totalMs) : 0;
}

/** CPU use over an interval, in cores (1.0 = one core fully busy). */
export interface CpuUse {
  client: number;
  server: number;
  /** Everything else on the machine: other processes (e.g. other benchmarks) and kernel threads. */
  other: number;
  machine: number;
}

/**
 * Watches machine CPU over a run so that results can say whether something else was competing for the cores.
 * `childCpuMs` reads the CPU time of our server child (see the `cpu` control command).
 */
export class CpuWatch {
  private readonly start: CpuSnapshot;
  private readonly startWall = Date.now();
  private constructor(
    private readonly childCpuMs: () => Promise<number>,
    private readonly childStart: number,
    /** Busy share of the machine (0..1) in the second before the start; NaN when not sampled. */
    readonly busyBefore: number,
  ) {
    this.start = cpuSnapshot();
  }

  /** Samples the machine for one second, then starts watching. */
  static async begin(childCpuMs: () => Promise<number>): Promise<CpuWatch> {
    const busyBefore = await sampleMachineBusy(1000);
    return new CpuWatch(childCpuMs, await childCpuMs(), busyBefore);
  }

  /** Starts watching at once (for short intervals such as one round). */
  static async mark(childCpuMs: () => Promise<number>): Promise<CpuWatch> {
    return new CpuWatch(childCpuMs, await childCpuMs(), Number.NaN);
  }

  /** CPU use since the start, in cores. */
  async measure(): Promise<CpuUse> {
    const end = cpuSnapshot();
    const childMs = (await this.childCpuMs()) - this.childStart;
    const wall = Math.max(1, Date.now() - this.startWall);
    const { machineCores, foreignCores } = cpuBetween(this.start, end, wall, childMs);
    return {
      client: (end.selfMs - this.start.selfMs) / wall,
      server: childMs / wall,
      other: foreignCores,
      machine: machineCores,
    };
  }

  /** One sentence describing CPU use during the run. */
  async describe(): Promise<string> {
    const use = await this.measure();
    const before = Number.isFinite(this.busyBefore)
      ? `; machine ${(this.busyBefore * 100).toFixed(0)}% busy just before the start`
      : '';
    return (
      `CPU during the run: bench client ${use.client.toFixed(2)} cores, server ${use.server.toFixed(2)} cores, ` +
      `everything else (other processes, kernel threads) ${use.other.toFixed(2)} cores ` +
      `(machine ${use.machine.toFixed(2)} of ${os.cpus().length})${before}.`
    );
  }
}
