/** Another build of the package, measured side by side with this one (`--baseline=PATH` of the bench scripts). */
import { existsSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { createRetryInterceptor } from 'grpc-retry-hedging';
import { type Script, usageExit, userPath } from './args.js';

/** `--baseline`'s file, absolute; a usage error unless it is a file. */
export function baselinePath(script: Script, given: string | undefined): string | undefined {
  if (given === undefined) return undefined;
  const path = userPath(given);
  if (!existsSync(path) || !statSync(path).isFile()) {
    usageExit(script, `--baseline: no file at ${path} (give another build's dist/index.js)`);
  }
  return path;
}

/** The `createRetryInterceptor` of the build at `path`; a usage error when it has none. */
export async function loadBaseline(script: Script, path: string): Promise<typeof createRetryInterceptor> {
  let module: { createRetryInterceptor?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { createRetryInterceptor?: unknown };
  } catch (error) {
    usageExit(
      script,
      `--baseline: cannot load ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof module.createRetryInterceptor !== 'function') {
    usageExit(
      script,
      `--baseline: ${path} exports no createRetryInterceptor (give another build's dist/index.js)`,
    );
  }
  return module.createRetryInterceptor as typeof createRetryInterceptor;
}
