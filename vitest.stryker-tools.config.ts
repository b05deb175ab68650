import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests Stryker runs against mutants of src/util and src/cli (stryker.tools.config.mjs; `npm run mutate:tools`):
 * their own suites, and the network-free suites that check options, hooks and messages through them. Not the
 * engine's suites: every one of their tests makes an interceptor, so each mutant of an option check would run
 * thousands of tests.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/util/*.test.ts',
      'test/cli/*.test.ts',
      'test/shared/*.test.ts',
      'test/engine/options.test.ts',
      'test/engine/guarded-clock.engine.test.ts',
      'test/retry/guarded-hooks*.test.ts',
      'test/retry/call-policy-check.test.ts',
      'test/config/*.test.ts',
      'test/adaptive/*option*.test.ts',
      'test/adaptive/hedge-budget.test.ts',
      'test/adaptive/cancel-rate-limiter.test.ts',
      'test/throttle/*.test.ts',
      'test/hints/retry-info-encode-input.test.ts',
      'test/hints/request-id-calls.test.ts',
      'test/testing/attempt-script-validation.test.ts',
      'test/lb/avoid-tried-config.test.ts',
      'test/lb/avoid-tried-balancer.test.ts',
      'test/lb/lb-policy-names.test.ts',
      'test/idempotency/*.test.ts',
      'test/channel/*.test.ts',
      'test/docs/check-warning-kinds.test.ts',
    ],
    exclude: [
      '**/node_modules/**',
      'test/**/*.e2e.test.ts',
      // They call process.chdir(), which Stryker's vitest workers (threads) do not support.
      'test/util/unresolved-type-place.test.ts',
      'test/util/proto-files.test.ts',
      // It runs the CLI in child processes, which load the sources, not the mutants.
      'test/cli/closed-pipe.test.ts',
      // A bound on time (an object of many keys located in linear time), which instrumented code overruns.
      'test/config/large-configs.test.ts',
    ],
  },
});
