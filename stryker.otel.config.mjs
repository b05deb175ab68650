// Mutation testing of the OpenTelemetry adapters (src/otel): `npm run mutate:otel` (see TESTING.md, "Mutation").
// The same settings as stryker.config.mjs, with the adapters' own tests (vitest.stryker-otel.config.ts).
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.stryker-otel.config.ts', related: false },
  mutate: ['src/otel/*.ts', '!src/otel/index.ts'],
  incrementalFile: 'reports/stryker-incremental-otel.json',
};
