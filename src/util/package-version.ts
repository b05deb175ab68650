/**
 * The version of this package, read from its package.json (found by walking up from this module).
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { moduleDir } from './module-dir.js';

const PACKAGE_NAME = 'grpc-retry-hedging';
const MAX_LEVELS_UP = 5;

/**
 * The `version` of the nearest package.json named `grpc-retry-hedging` above this module (read once), for the CLI's
 * `--version` and the OpenTelemetry instrumentation scope.
 *
 * @returns The version, or `unknown` when no such package.json is found.
 */
export function packageVersion(): string {
  cached ??= findPackageVersion(moduleDir());
  return cached;
}

let cached: string | undefined;

/**
 * The `version` of the first package.json named `grpc-retry-hedging` in `start` or up to {@link MAX_LEVELS_UP}
 * directories above it; `unknown` when there is none (or no `start`). @internal
 */
export function findPackageVersion(start: string | undefined): string {
  let dir = start;
  if (dir === undefined) {
    return 'unknown';
  }
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (json.name === PACKAGE_NAME && typeof json.version === 'string') {
          return json.version;
        }
      } catch {
        // not a readable package.json: keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) {
      break;
    }
    dir = parent;
  }
  return 'unknown';
}
