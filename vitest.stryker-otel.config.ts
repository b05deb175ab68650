import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests Stryker runs against mutants of the OpenTelemetry adapters (src/otel), which the main mutation config
 * (vitest.stryker.config.ts) leaves out; `npm run mutate:otel` uses it. The adapters' suites, with their own
 * end-to-end cases on 127.0.0.1 (a few seconds in all); not the examples, which run in child processes.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/otel/canonical-target.test.ts',
      'test/otel/learned-delays.test.ts',
      'test/otel/metadata-carrier.test.ts',
      'test/otel/one-of-instance-and-provider.test.ts',
      'test/otel/retry-metrics.test.ts',
      'test/otel/retry-metrics-close.test.ts',
      'test/otel/retry-tracing.test.ts',
      'test/otel/retry-tracing.e2e.test.ts',
      'test/otel/served-peer.e2e.test.ts',
      'test/otel/server-address.test.ts',
    ],
    exclude: ['**/node_modules/**'],
  },
});
