import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do; in tests that name means the sources.
    alias: [
      { find: /^grpc-retry-hedging\/testing$/, replacement: src('testing/index.ts') },
      { find: /^grpc-retry-hedging\/otel$/, replacement: src('otel/index.ts') },
      { find: /^grpc-retry-hedging$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Warnings are given once per process; each case starts with none given.
    setupFiles: ['test/helpers/forget-warnings.ts'],
  },
});
