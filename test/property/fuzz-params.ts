import { fc } from '@fast-check/vitest';

/**
 * fast-check parameters of a property test. In CI (no FUZZ_* variables) a fixed seed and `ciRuns` cases; under
 * `npm run fuzz` FUZZ_RUNS cases from FUZZ_SEED (random when unset); FUZZ_PATH with FUZZ_SEED replays one failure.
 * A failure's message ends with the command that replays it.
 */
export const CI_SEED = 0x6a7e1d;

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') {
    return undefined;
  }
  const value = Number(raw);
  if (!Number.isInteger(value)) {
    throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export const fuzzing = process.env.FUZZ_RUNS !== undefined || process.env.FUZZ_SEED !== undefined;

/** Per-test timeout: generous in CI (the cases of one test stay well under it), none while fuzzing. */
export function propertyTimeout(ciMs: number): number {
  return fuzzing ? 24 * 3600 * 1000 : ciMs;
}

export function propertyParams<T>(testName: string, ciRuns: number): fc.Parameters<T> {
  const seed = envInt('FUZZ_SEED') ?? (fuzzing ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : CI_SEED);
  const numRuns = envInt('FUZZ_RUNS') ?? ciRuns;
  const path = process.env.FUZZ_PATH || undefined;
  if (fuzzing) {
    console.log(
      `[fuzz] ${testName}: FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}${path ? ` FUZZ_PATH=${path}` : ''}`,
    );
  }
  return {
    seed,
    numRuns,
    ...(path === undefined ? {} : { path }),
    endOnFailure: path !== undefined,
    reporter(details) {
      if (!details.failed) {
        return;
      }
      const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npm run fuzz -- -t "${testName}"`;
      const cause = details.errorInstance;
      const why = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
      throw new Error(
        `${fc.defaultReportMessage(details)}\n\nReplay this failure with:\n  ${replay}\n\n${why}`,
      );
    },
  };
}
