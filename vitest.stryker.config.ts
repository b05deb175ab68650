import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests Stryker runs against each mutant (see stryker.config.mjs): only the network-free suites that cover
 * src/retry, src/hedging, src/throttle, src/shared and src/config, and the flaky server's pure checks and conversions in src/testing, so a full mutation run stays affordable on a shared 2-core machine.
 * The end-to-end suites (servers on 127.0.0.1) are left out: they are slow and add little that the engine tests
 * under fake time do not already check.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // Replaces the base list (mergeConfig would append to it).
    include: [
      'test/engine/**/*.test.ts',
      'test/retry/*.test.ts',
      'test/hedging/*.test.ts',
      'test/adaptive/*.test.ts',
      'test/throttle/*.test.ts',
      'test/hints/retry-info*.test.ts',
      'test/config/*.test.ts',
      'test/shared/*.test.ts',
      'test/hints/channel-options.test.ts',
      // The flaky server's script checks and value conversions, tested without a server.
      'test/testing/attempt-log.test.ts',
      'test/testing/attempt-script-validation.test.ts',
      'test/testing/response-conversion.test.ts',
      'test/testing/response-values.test.ts',
      'test/testing/seeded-random.test.ts',
      'test/testing/well-known-values.test.ts',
      'test/testing/well-known-values-edges.test.ts',
      'test/testing/response-conversion-edges.test.ts',
    ],
    // The end-to-end suites start servers: not run against mutants.
    exclude: ['**/node_modules/**', 'test/**/*.e2e.test.ts'],
  },
});
