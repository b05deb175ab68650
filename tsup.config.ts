import { rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

// The two builds below run concurrently, so neither may clean dist/: it is emptied here, once, before both.
rmSync('dist', { recursive: true, force: true });

const shared: Options = {
  // No source maps in the package: the bundles are not minified, so stack traces into dist/ already read like the
  // sources, while maps (which embed those sources) would be about 70% of the unpacked size.
  sourcemap: false,
  clean: false,
  shims: true,
  target: 'node18',
  external: ['@grpc/grpc-js', '@grpc/proto-loader', '@opentelemetry/api'],
};

export default defineConfig([
  // The library entry points: ESM and CJS, each with its declarations (.d.ts / .d.cts).
  {
    ...shared,
    entry: {
      index: 'src/index.ts',
      'testing/index': 'src/testing/index.ts',
      'otel/index': 'src/otel/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
  },
  // The CLI is reached only through package.json "bin" (an ESM file): no CJS copy, no declarations.
  {
    ...shared,
    entry: { 'cli/main': 'src/cli/main.ts' },
    format: ['esm'],
    dts: false,
  },
]);
