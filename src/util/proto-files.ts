/**
 * Finding .proto files as protoc does, shared by `check --proto` and the flaky server's `proto` option: a file is
 * looked for as given (relative to the working directory), then in each include directory.
 */

import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** The first include directory that does not exist or is not a directory, as given; `undefined` when all are. */
export function missingIncludeDir(includeDirs: readonly string[]): string | undefined {
  return includeDirs.find((dir) => !isDirectory(dir));
}

/**
 * The absolute path of `file`: as given, then under each include directory.
 *
 * @returns The path, or a problem in words (`not found in the working directory or a, b`) when no candidate exists.
 */
export function locateProtoFile(
  file: string,
  includeDirs: readonly string[],
): { readonly path: string } | { readonly problem: string } {
  if (existsSync(file)) {
    return { path: resolve(file) };
  }
  if (isAbsolute(file)) {
    return { problem: 'no such file' };
  }
  for (const dir of includeDirs) {
    const candidate = join(resolve(dir), file);
    if (existsSync(candidate)) {
      return { path: candidate };
    }
  }
  const where =
    includeDirs.length === 0 ? 'the working directory' : `the working directory or ${includeDirs.join(', ')}`;
  return { problem: `not found in ${where}` };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
