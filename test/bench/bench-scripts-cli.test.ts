import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** Every npm script of bench/, its file, and one mistake it must refuse before it starts its run. */
const SCRIPTS: readonly { name: string; file: string; mistake: string[]; says: string }[] = [
  {
    name: 'bench:tail',
    file: 'tail.ts',
    mistake: ['--rounds=abc'],
    says: '--rounds must be a number, got "abc"',
  },
  {
    name: 'bench:overhead',
    file: 'overhead.ts',
    mistake: ['--variants=bare,bogus'],
    says: 'no variant "bogus"',
  },
  { name: 'bench:storm', file: 'storm.ts', mistake: ['--quick'], says: 'unknown option --quick' },
  {
    name: 'bench:hot-path',
    file: 'hot-path.ts',
    mistake: ['--baseline=/nonexistent/index.js'],
    says: 'no file',
  },
  {
    name: 'bench:cpu',
    file: 'cpu-per-call.ts',
    mistake: ['--unary-calls=0'],
    says: '--unary-calls must be',
  },
  { name: 'bench:adaptive', file: 'adaptive.ts', mistake: ['-n', '5'], says: 'unknown option -n' },
  {
    name: 'bench:adaptive-targets',
    file: 'adaptive-targets.ts',
    mistake: ['--rate=0'],
    says: '--rate must be',
  },
  { name: 'bench:replicas', file: 'replicas.ts', mistake: ['200'], says: 'unexpected argument "200"' },
  { name: 'trace:adaptive', file: 'adaptive-trace.ts', mistake: ['--out='], says: '--out needs a value' },
  {
    name: 'simulate',
    file: 'simulate.ts',
    mistake: ['--duration', '-1'],
    says: '--duration must be above 0',
  },
  {
    name: 'simulate:adaptive',
    file: 'adaptive-sim.ts',
    mistake: ['--rate=0'],
    says: '--rate must be above 0',
  },
  {
    name: 'simulate:adaptive:sweep',
    file: 'adaptive-sweep.ts',
    mistake: ['--sweep', 'nope'],
    says: 'no sweep "nope"',
  },
  {
    name: 'replay:adaptive',
    file: 'adaptive-replay.ts',
    mistake: ['--quick'],
    says: 'unknown option --quick',
  },
];

/** Runs a bench script as its npm script does, and answers with its exit code and output. */
async function script(file: string, args: string[]) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', join('bench', file), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, TSX_TSCONFIG_PATH: 'bench/tsconfig.json' },
        timeout: 30_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe.concurrent("the bench scripts' command lines", () => {
  for (const { name, file, mistake, says } of SCRIPTS) {
    it(`${name}: --help says its usage and exits 0; ${mistake.join(' ')} exits 2 in one line`, async () => {
      const help = await script(file, ['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.split('\n')[0]).toBe(
        `Usage: npm run ${name} -- [options]${name === 'replay:adaptive' ? ' [trace.csv|directory ...]' : ''}`,
      );
      const wrong = await script(file, mistake);
      expect(wrong.code).toBe(2);
      const [line, hint, rest] = wrong.stderr.split('\n');
      expect(line).toMatch(new RegExp(`^${name}: `));
      expect(line).toContain(says);
      expect(hint).toBe(`Run \`npm run ${name} -- --help\` for its usage.`);
      expect(rest).toBe('');
    }, 60_000);
  }
});

describe('simulate: a scenario with no time for the baseline goodput', () => {
  it('refuses an outage that starts within the 5 s warm-up, and a run without one shorter than 5.5 s', async () => {
    const early = await script('simulate.ts', ['--outage-start', '2']);
    expect(early.code).toBe(2);
    expect(early.stderr.split('\n')[0]).toBe(
      'simulate: --outage-start 2 s leaves no time to measure the goodput before the outage, which recovery is judged against: it must be 5.5 or more (5 s of warm-up, then a 500 ms bucket)',
    );
    const short = await script('simulate.ts', ['--outage', '0', '--duration', '4']);
    expect(short.code).toBe(2);
    expect(short.stderr.split('\n')[0]).toBe(
      'simulate: --duration 4 s leaves no time to measure the goodput after the 5 s warm-up: it must be 5.5 or more',
    );
  }, 60_000);

  it('refuses a policy listed twice, and --all with --policies, which it would otherwise drop unseen', async () => {
    const twice = await script('simulate.ts', ['--policies', 'a6,none,a6']);
    expect(twice.code).toBe(2);
    expect(twice.stderr.split('\n')[0]).toBe('simulate: --policies: "a6" is listed twice');
    const both = await script('simulate.ts', ['--all', '--policies', 'none']);
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toBe(
      'simulate: --all runs every policy: give it or --policies, not both',
    );
  }, 60_000);

  it('refuses a load too small to tell recovery from noise', async () => {
    const thin = await script('simulate.ts', ['--offered', '20']);
    expect(thin.code).toBe(2);
    expect(thin.stderr.split('\n')[0]).toBe(
      'simulate: --offered 20 calls/s to --capacity 10000 requests/s gives at most 10 OK calls per 500 ms bucket, too few to tell recovery from noise: both must be above 32',
    );
  }, 60_000);
});

describe('bench:adaptive: phases too short for the time to adapt', () => {
  it('refuses phases shorter than its 1 s window before it starts its servers', async () => {
    const short = await script('adaptive.ts', [
      '--learn-calls=0',
      '--measured-calls=150',
      '--short-gc-pauses=0',
    ]);
    expect(short.code).toBe(2);
    expect(short.stderr.split('\n')[0]).toBe(
      'bench:adaptive: --learn-calls 0 + --measured-calls 150 at --rate 200 make phases of 0.75 s, shorter than the 1 s window the time to adapt is measured over: a phase must hold more than 200 calls',
    );
  }, 60_000);
});
