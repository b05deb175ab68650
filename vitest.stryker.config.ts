import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests Stryker runs against each mutant (see stryker.config.mjs): only the network-free suites that cover
 * src/retry, src/hedging and src/throttle, so a full mutation run stays affordable on a shared 2-core machine.
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
      'test/adaptive/adaptive-hedging-delay.test.ts',
      'test/adaptive/cancel-rate-limiter.test.ts',
      'test/adaptive/hedge-budget.test.ts',
      'test/throttle/adaptive-throttle-rule.test.ts',
      'test/throttle/adaptive-throttle.test.ts',
      'test/throttle/retry-budget.test.ts',
      'test/retry/backoff.test.ts',
      'test/retry/buffer-pool.test.ts',
      'test/retry/pushback.test.ts',
      'test/retry/retry-throttle.test.ts',
      'test/hints/retry-info.test.ts',
      'test/hints/retry-info.engine.test.ts',
    ],
    exclude: ['**/node_modules/**', 'test/**/*.e2e.test.ts'],
  },
});
