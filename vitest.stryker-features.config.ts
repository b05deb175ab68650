import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import engine from './vitest.stryker.config.js';

/**
 * The tests Stryker runs against mutants of the features around the engine (stryker.features.config.mjs;
 * `npm run mutate:features`): the engine's network-free suites (vitest.stryker.config.ts), which reach these
 * features through the interceptors, and the features' own suites, end-to-end ones included: the replica-avoiding
 * balancer and `interceptChannel` only run inside grpc-js's channel, against servers on 127.0.0.1. Not the
 * examples, which run in child processes that load the build, not the mutated sources.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      ...(engine.test?.include ?? []),
      'test/lb/*.test.ts',
      'test/channel/*.test.ts',
      'test/hints/request-id.test.ts',
      'test/hints/request-id-calls.test.ts',
      'test/hints/request-id-generate.test.ts',
      'test/testing/request-id-recording.test.ts',
      'test/hints/idempotency.test.ts',
      'test/idempotency/*.test.ts',
    ],
    // The engine's end-to-end suites stay out, as in vitest.stryker.config.ts.
    exclude: [
      '**/node_modules/**',
      'test/{engine,retry,hedging,adaptive,throttle,config,hints,testing}/**/*.e2e.test.ts',
    ],
  },
});
