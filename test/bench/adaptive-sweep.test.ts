import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../bench/lib/args.js';
import { ADAPTIVE_SIM_DEFAULTS, ADAPTIVE_SIM_SETTINGS } from '../../bench/sim/adaptive-sim-options.js';
import { type SimulatedPhase, SWEEPS, tallySweep } from '../../bench/sim/adaptive-sweep-tally.js';

const run = promisify(execFile);
const SIMULATOR = fileURLToPath(new URL('../../bench/adaptive-sim.ts', import.meta.url));

function phase(overrides: Partial<SimulatedPhase>): SimulatedPhase {
  return {
    phase: 'B',
    args: ['--seed=1'],
    adaptiveP99Ms: 10,
    bestStaticMs: 10,
    bestStaticP99Ms: 10,
    adaptiveExtraLoad: 0.05,
    afterShift: true,
    timeToAdaptS: 0,
    pairedTimeToAdaptS: 0,
    refused: 0,
    ...overrides,
  };
}

describe('the tally of a simulate:adaptive sweep', () => {
  it('counts a phase against each target as the report prints it', () => {
    const tally = tallySweep([
      phase({ adaptiveP99Ms: 11.54 }), // ×1.154 prints ×1.15: met
      phase({ adaptiveP99Ms: 11.56 }), // ×1.16
      phase({ adaptiveExtraLoad: 0.0604 }), // prints 0.060: met
      phase({ adaptiveExtraLoad: 0.0612 }),
      phase({ timeToAdaptS: 2.04 }), // prints 2.0: met
      phase({ timeToAdaptS: 2.1, pairedTimeToAdaptS: null }),
    ]);
    expect(tally).toMatchObject({
      phases: 6,
      p99Misses: 1,
      loadMisses: 1,
      timeToAdaptMisses: 1,
      pairedMisses: 1,
    });
    expect(tally.missed.map((m) => m.targets)).toEqual([
      ['p99'],
      ['extra load'],
      ['time to adapt', 'time to adapt, paired'],
    ]);
    expect(tally.worstRatio).toBe(1.16);
    expect(tally.meanRatio).toBeCloseTo((1.15 + 1.16 + 4) / 6, 10);
    expect(tally.meanExtraLoad).toBeCloseTo((0.05 * 4 + 0.0604 + 0.0612) / 6, 10);
  });

  it("does not hold regime A's learning against the time to adapt", () => {
    const tally = tallySweep([
      phase({ phase: 'A', afterShift: false, timeToAdaptS: null, pairedTimeToAdaptS: null }),
    ]);
    expect(tally.missed).toEqual([]);
  });

  it('counts a phase where no static delay qualified as a p99 miss, out of the mean ratio', () => {
    const tally = tallySweep([
      phase({ bestStaticMs: null, bestStaticP99Ms: null }),
      phase({ adaptiveP99Ms: 9 }),
    ]);
    expect(tally.p99Misses).toBe(1);
    expect(tally.meanRatio).toBeCloseTo(0.9, 10);
  });

  it('holds the sweeps BENCHMARKS.md names, each run once', () => {
    const runs = Object.fromEntries(Object.entries(SWEEPS).map(([name, sweep]) => [name, sweep.runs.length]));
    // Three phases a run: 96, 96, 72, 72 and 96 phases.
    expect(runs).toEqual({
      main: 32,
      burst: 32,
      'client-stalls': 24,
      'server-stalls': 24,
      'long-server-stalls': 32,
    });
    for (const sweep of Object.values(SWEEPS)) {
      expect(new Set(sweep.runs.map((r) => r.join(' '))).size).toBe(sweep.runs.length);
    }
    for (const argv of Object.values(SWEEPS).flatMap((sweep) => sweep.runs)) {
      // Each run, a command line simulate:adaptive takes, given as it passes its options on (--name=value).
      expect(
        parseArgs(ADAPTIVE_SIM_DEFAULTS, { ...ADAPTIVE_SIM_SETTINGS, argv }).given.map((o) => o.arg),
      ).toEqual(argv);
    }
    expect(SWEEPS['server-stalls']?.runs.every((r) => r.includes('--server-stall=1'))).toBe(true);
    expect(SWEEPS['client-stalls']?.runs.some((r) => r.includes('--server-stall=1'))).toBe(false);
  });
});

describe('simulate:adaptive --json=1', () => {
  const small = ['--learn-calls=100', '--measured-calls=400', '--seed=3', '--noise-ms=5'];

  it('prints its three phases as one JSON line', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', SIMULATOR, ...small, '--json=1']);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const phases = JSON.parse(stdout) as SimulatedPhase[];
    expect(phases.map((p) => [p.phase, p.afterShift])).toEqual([
      ['A', false],
      ['B', true],
      ['A again', true],
    ]);
    expect(phases[0]?.args).toEqual(small);
    for (const p of phases) {
      expect(p.adaptiveExtraLoad).toBeGreaterThan(0);
      expect(p.adaptiveP99Ms).toBeGreaterThan(0);
    }
    // Regime B's fast path is 20 ms: no static delay under it qualifies.
    expect(phases[1]?.bestStaticMs).toBeGreaterThanOrEqual(20);
  }, 60_000);

  it('takes other static delays, and the superseded attempts read exactly, and changes what it reports', async () => {
    const read = async (extra: string[]): Promise<SimulatedPhase[]> =>
      JSON.parse(
        (await run(process.execPath, ['--import', 'tsx', SIMULATOR, ...small, ...extra, '--json=1'])).stdout,
      );
    const [plain, fine, exact] = await Promise.all([
      read([]),
      read(['--static-delays=6,7,8,9,100']),
      read(['--superseded-exact=1']),
    ]);
    expect(plain[0]?.bestStaticMs).toBe(10);
    expect([6, 7, 8, 9]).toContain(fine[0]?.bestStaticMs);
    // Knowing the noisy attempts a hedge superseded, the delay no longer counts them with the slow mode.
    expect(exact.map((p) => p.adaptiveExtraLoad)).not.toEqual(plain.map((p) => p.adaptiveExtraLoad));
  }, 60_000);

  it('refuses phases shorter than the 1 s window of the time to adapt, which read as "never" for every variant', async () => {
    // 150 calls at 200 calls/s: 0.75 s a phase, no window fits, and every variant, the best static delay's
    // included, "never" adapted (null, counted as a miss by the sweeps).
    await expect(
      run(process.execPath, [
        '--import',
        'tsx',
        SIMULATOR,
        '--learn-calls=0',
        '--measured-calls=150',
        '--json=1',
      ]),
    ).rejects.toThrow(
      'simulate:adaptive: --learn-calls 0 + --measured-calls 150 at --rate 200 make phases of 0.75 s, shorter than the 1 s window the time to adapt is measured over: a phase must hold more than 200 calls',
    );
  }, 60_000);

  it('refuses static delays that are not positive numbers', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', SIMULATOR, '--static-delays=5,x', '--json=1']),
    ).rejects.toThrow('--static-delays must be a comma-separated list of positive ms, got "5,x"');
  }, 60_000);
});
