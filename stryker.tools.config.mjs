// Mutation testing of the helpers every module uses (src/util: option checks, "did you mean", guarded hooks,
// warnings) and of the command-line tool (src/cli: `check` and `flaky-server`): `npm run mutate:tools` (see
// TESTING.md, "Mutation"). The same settings as stryker.config.mjs, with the tests of vitest.stryker-tools.config.ts:
// the suites that check options and messages and test/cli, not the engine's suites, which reach src/util's option
// checks from every test and made a run of them take hours.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.stryker-tools.config.ts', related: false },
  mutate: ['src/util/*.ts', 'src/cli/*.ts'],
  incrementalFile: 'reports/stryker-incremental-tools.json',
  htmlReporter: { fileName: 'reports/mutation/tools.html' },
  jsonReporter: { fileName: 'reports/mutation/tools.json' },
};
