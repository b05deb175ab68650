import { rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

// The two builds below run concurrently, so neither may clean dist/: it is emptied here, once, before both.
rmSync('dist', { recursive: true, force: true });

const shared: Options = {
  // No source maps in the package: the bundles are not minified, so stack traces into dist/ already read like the
  // sources, while maps (which embed those sources) would be about 70% of the unpacked size.
  sourcemap: false,
  clean: false,
  // No shims: tsup's ESM shim computes __dirname from import.meta.url as the module loads, and an ESM build that a
  // user bundles into CommonJS (esbuild's default for Node) has an empty import.meta, so the bundle threw at load.
  // src/util/module-dir.ts reads whichever of the two exists, when asked. (In the CJS build esbuild empties
  // import.meta, and says so: silenced, since __dirname is read first there.)
  shims: false,
  target: 'node18',
  external: ['@grpc/grpc-js', '@grpc/proto-loader', '@opentelemetry/api'],
  // jsonc-parser is bundled in (its MIT notice: THIRD-PARTY-NOTICES.md). Its package.json `main` is a UMD build
  // whose inner requires esbuild cannot follow, and esbuild reads `main` first when it bundles for Node: a user's
  // esbuild bundle of this package threw "Cannot find module './impl/format'" at load. Bundled here from its ESM
  // build (`module`), it is no longer the user's bundler's to resolve.
  noExternal: ['jsonc-parser'],
  esbuildOptions(options) {
    options.mainFields = ['module', 'main'];
    options.logOverride = { ...options.logOverride, 'empty-import-meta': 'silent' };
  },
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
