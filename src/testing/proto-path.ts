import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Path of the proto file relative to the package root. */
const PROTO_RELATIVE_PATH = join('protos', 'flaky_test.proto');
/** How many parent directories above this module's directory are searched. */
const MAX_LEVELS_UP = 5;

let cachedPath: string | undefined;

/**
 * Directory of the running module. tsup (with `shims: true`) provides `__dirname` in ESM bundles and
 * `import.meta.url` in CJS bundles, and this source may end up in `dist/` or in a `dist/testing/` chunk,
 * so the caller only relies on it being somewhere below the package root.
 */
function currentModuleDir(): string {
  if (typeof __dirname === 'string' && __dirname !== '') {
    return __dirname;
  }
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Absolute path of `protos/flaky_test.proto`, found by walking up from this module's directory
 * (at most {@link MAX_LEVELS_UP} levels). Throws an Error naming the searched locations when it is missing.
 */
export function flakyTestProtoPath(): string {
  if (cachedPath !== undefined) {
    return cachedPath;
  }
  const searched: string[] = [];
  let dir = currentModuleDir();
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const candidate = join(dir, PROTO_RELATIVE_PATH);
    searched.push(candidate);
    if (existsSync(candidate)) {
      cachedPath = candidate;
      return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      break;
    }
    dir = parent;
  }
  throw new Error(
    `grpc-retry-hedging: cannot find ${PROTO_RELATIVE_PATH}; searched:\n  ${searched.join('\n  ')}`,
  );
}
