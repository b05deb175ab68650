import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { moduleDir } from '../util/module-dir.js';

/** How many parent directories above this module's directory are searched. */
const MAX_LEVELS_UP = 5;

const found = new Map<string, string>();

/**
 * Absolute path of a file the package ships, given relative to the package root, found by walking up from this
 * module's directory (at most {@link MAX_LEVELS_UP} levels). Throws an Error naming the searched locations when it
 * is missing.
 */
function packageFilePath(relativePath: string): string {
  const cached = found.get(relativePath);
  if (cached !== undefined) {
    return cached;
  }
  const searched: string[] = [];
  const start = moduleDir();
  if (start === undefined) {
    throw new Error(
      `grpc-retry-hedging: cannot find ${relativePath}: this module's directory is unknown (neither __dirname nor a file: import.meta.url)`,
    );
  }
  let dir = start;
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const candidate = join(dir, relativePath);
    searched.push(candidate);
    if (existsSync(candidate)) {
      found.set(relativePath, candidate);
      return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      break;
    }
    dir = parent;
  }
  throw new Error(`grpc-retry-hedging: cannot find ${relativePath}; searched:\n  ${searched.join('\n  ')}`);
}

/** Absolute path of `protos/flaky_test.proto`, the FlakyTest service's proto. */
export function flakyTestProtoPath(): string {
  return packageFilePath(join('protos', 'flaky_test.proto'));
}

/**
 * Absolute path of `examples/helloworld.proto`: gRPC's hello-world `helloworld.Greeter` (unary `SayHello` and
 * `GetCached`, server-streaming `StreamHellos`), which the package ships for trying it out, as the README's quick
 * start does, before your own protos are at hand.
 */
export function greeterProtoPath(): string {
  return packageFilePath(join('examples', 'helloworld.proto'));
}
