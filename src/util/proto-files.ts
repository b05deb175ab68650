/**
 * Finding .proto files as protoc does, shared by `check --proto` and the flaky server's `proto` option: a file is
 * looked for as given (relative to the working directory), then in each include directory.
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';

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
  const cwd = `the working directory (${process.cwd()})`;
  const where = includeDirs.length === 0 ? cwd : `${cwd} or ${includeDirs.join(', ')}`;
  const under = directoryHolding(file);
  const hint =
    under === undefined
      ? ''
      : `; it is under ${under}: add that directory to the include directories (-I ${shellWord(under)} on the command line, includeDirs: [${JSON.stringify(under)}] in code)`;
  return { problem: `not found in ${where}${hint}` };
}

/**
 * `text` as one word of a POSIX shell's command line: as it is when it holds only characters the shell leaves
 * alone, else in single quotes (`'my protos'`), so that a suggested `-I` is taken whole when pasted.
 */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** Directories below the working directory looked into for a file not found, at most. */
const MAX_DIRECTORIES_SEARCHED = 500;

/**
 * A directory below the working directory (three levels down at most, `node_modules` and hidden ones skipped)
 * under which `file`, a relative path, exists: the include directory a user most likely left out. Relative to the
 * working directory; undefined when none is found within {@link MAX_DIRECTORIES_SEARCHED} directories.
 */
function directoryHolding(file: string): string | undefined {
  const queue: Array<{ dir: string; depth: number }> = [{ dir: '.', depth: 0 }];
  let searched = 0;
  while (queue.length > 0 && searched < MAX_DIRECTORIES_SEARCHED) {
    const { dir, depth } = queue.shift() as { dir: string; depth: number };
    searched += 1;
    if (dir !== '.' && existsSync(join(dir, file))) {
      return relative('.', dir);
    }
    if (depth === 3) {
      continue;
    }
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter(
          (entry) => entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'),
        )
        .map((entry) => entry.name)
        .sort();
    } catch {
      continue;
    }
    for (const name of entries) {
      queue.push({ dir: join(dir, name), depth: depth + 1 });
    }
  }
  return undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
