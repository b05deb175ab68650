// Mutation testing of the features around the engine: replica avoidance (src/lb), `interceptChannel` (src/channel),
// request ids (src/request-id) and idempotency levels (src/idempotency); src/util goes to stryker.tools.config.mjs:
// `npm run mutate:features` (see TESTING.md, "Mutation"). The same settings as stryker.config.mjs, with the tests
// of vitest.stryker-features.config.ts, which include these features' end-to-end suites: a balancer and a channel
// are only exercised through grpc-js's own channel.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.stryker-features.config.ts', related: false },
  mutate: [
    'src/lb/*.ts',
    'src/channel/*.ts',
    'src/request-id/*.ts',
    'src/idempotency/*.ts',
  ],
  incrementalFile: 'reports/stryker-incremental-features.json',
  htmlReporter: { fileName: 'reports/mutation/features.html' },
  jsonReporter: { fileName: 'reports/mutation/features.json' },
};
