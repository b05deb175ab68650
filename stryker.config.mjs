// Mutation testing of the retry, hedging and throttle engines and what they share (src/shared), of the config parsing, and of
// the flaky server's pure checks: `npm run mutate` (see TESTING.md, "Mutation").
// A scoped run: `npm run mutate -- --mutate src/retry/backoff.ts`. Runs are incremental: the results of the last
// run live in reports/stryker-incremental.json (ignored by git), and only mutants whose code or tests changed are
// run again. `npm run mutate -- --force` reruns everything.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/retry/**/*.ts',
    'src/hedging/**/*.ts',
    'src/throttle/**/*.ts',
    'src/config/**/*.ts',
    // What the engine shares with the throttles and the adaptive hedging (the retry gate, per-target maps, headers).
    'src/shared/**/*.ts',
    '!src/shared/grpc-types.ts',
    // The flaky server's pure parts (its server and cluster are tested end to end, which Stryker does not run).
    'src/testing/attempt-script-validation.ts',
    'src/testing/response-conversion.ts',
    'src/testing/response-fields.ts',
    'src/testing/seeded-random.ts',
    'src/testing/well-known-values.ts',
    '!src/config/index.ts',
    '!src/config/types.ts',
    '!src/**/*.d.ts',
  ],
  // Only the sources, tests and examples (the config tests load its JSON) go to the sandbox; not the benches or build
  // output.
  ignorePatterns: ['dist', 'coverage', 'bench', 'reports', '.ci', '.stryker-tmp*'],
  checkers: [],
  coverageAnalysis: 'perTest',
  // The machine is shared: one worker, and the npm script runs it under `nice`.
  concurrency: 1,
  // A mutant that makes the tests run longer than 1.5 × their normal time + 5 s counts as a timeout (detected).
  timeoutMS: 5_000,
  timeoutFactor: 1.5,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: false, reportScoreTable: true },
  thresholds: { high: 85, low: 70, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
