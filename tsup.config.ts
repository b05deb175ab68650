import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/main': 'src/cli/main.ts',
    'otel/index': 'src/otel/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  shims: true,
  target: 'node18',
  external: ['@grpc/grpc-js', '@grpc/proto-loader', '@opentelemetry/api'],
});
