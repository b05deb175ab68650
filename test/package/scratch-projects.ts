/**
 * Scratch npm projects for the packaging test: a root that installs the packed tarball with its peers,
 * and three projects below it (ESM, CJS with node16 resolution, classic node10 resolution) that compile and run
 * code against the installed package.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Packages the scratch root installs from the repository's lockfile: the tarball's peers and every runtime
 * dependency its manifest names (so that installing the tarball afterwards needs nothing it does not have), and
 * the types the projects compile against.
 */
function scratchDependencies(repoManifest: {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}): string[] {
  return [
    ...Object.keys(repoManifest.peerDependencies ?? {}),
    ...Object.keys(repoManifest.dependencies ?? {}),
    '@types/node',
  ];
}

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

/** Where node would find `name` from the package at lockfile path `from` ('' is the root). */
function resolveInLock(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (packages[candidate] !== undefined) {
      return candidate;
    }
    if (base === '') {
      return undefined;
    }
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/**
 * A package-lock.json holding `roots` and everything they depend on, copied from the repository's lockfile, so
 * that `npm ci` there installs the very versions the repository itself uses.
 */
export function lockfileClosure(repoLock: { packages: Record<string, LockEntry> }, roots: readonly string[]) {
  const packages: Record<string, LockEntry> = {};
  const rootDependencies: Record<string, string> = {};
  const queue: string[] = [];
  for (const name of roots) {
    const path = resolveInLock(repoLock.packages, '', name);
    const version = path === undefined ? undefined : repoLock.packages[path]?.version;
    if (path === undefined || version === undefined) {
      throw new Error(`package-lock.json has no ${name}`);
    }
    rootDependencies[name] = version;
    queue.push(path);
  }
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (packages[path] !== undefined) {
      continue;
    }
    const {
      dev: _dev,
      devOptional: _devOptional,
      optional: _optional,
      peer: _peer,
      ...entry
    } = repoLock.packages[path]!;
    packages[path] = entry;
    for (const dependency of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      const target = resolveInLock(repoLock.packages, path, dependency);
      if (target !== undefined) {
        queue.push(target);
      }
    }
  }
  return {
    manifest: { name: 'scratch', private: true, dependencies: rootDependencies },
    lock: {
      name: 'scratch',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'scratch', dependencies: rootDependencies }, ...packages } as Record<
        string,
        LockEntry
      >,
    },
  };
}

function npm(cwd: string, args: string[]): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Installs the tarball into `root`: first its peers and dependencies at the repository lockfile's versions
 * (`npm ci`), then the tarball itself, whose dependencies are then all in place. `--prefer-offline` takes what the
 * npm cache has and fetches the rest, so the step works with any cache, an empty one included (`--offline` failed
 * on a new machine: `npm ci` caches tarballs, not the registry metadata an install of a tarball may look up).
 * `--legacy-peer-deps` only stops npm from looking the peers up: they are installed already.
 */
export function installScratchRoot(repoRoot: string, root: string, tarball: string): void {
  mkdirSync(root, { recursive: true });
  const repoLock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'));
  const repoManifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const { manifest, lock } = lockfileClosure(repoLock, scratchDependencies(repoManifest));
  writeFileSync(join(root, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(root, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  const quiet = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'];
  npm(root, ['ci', ...quiet]);
  npm(root, ['install', ...quiet, '--legacy-peer-deps', '--no-save', tarball]);
}

/** The module systems the scratch projects exercise. */
export type ProjectKind = 'esm' | 'cjs' | 'node10';

const COMMON_COMPILER_OPTIONS = {
  target: 'ES2022',
  lib: ['ES2022'],
  strict: true,
  outDir: 'out',
  rootDir: '.',
  types: ['node'],
  // Our declarations and those of grpc-js and OpenTelemetry are checked too, as a strict user's build would.
  skipLibCheck: false,
  // The strictest flag a user may add that changes what our declarations must say: an optional property that may
  // be read as undefined must say `| undefined` (FakeClock's resolutionMs did not match Clock's).
  exactOptionalPropertyTypes: true,
};

const PROJECTS: Record<
  ProjectKind,
  { type: 'module' | 'commonjs'; compilerOptions: Record<string, unknown> }
> = {
  esm: { type: 'module', compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } },
  cjs: { type: 'commonjs', compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } },
  // Classic resolution: ignores "exports", so the subpaths' types come from "typesVersions".
  node10: { type: 'commonjs', compilerOptions: { module: 'commonjs', moduleResolution: 'node' } },
};

/** Writes a project of `kind` in `dir` holding `files` (name to TypeScript source). */
export function writeProject(dir: string, kind: ProjectKind, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const { type, compilerOptions } = PROJECTS[kind];
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `scratch-${kind}`, private: true, type }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { ...COMMON_COMPILER_OPTIONS, ...compilerOptions },
      include: ['*.ts'],
    }),
  );
  for (const [name, source] of Object.entries(files)) {
    writeFileSync(join(dir, name), source);
  }
}

/**
 * An ESM snippet with top-level await, rewritten for a CommonJS module: the imports stay at the top, everything
 * else runs in an async main() whose failure fails the process.
 */
export function wrapInAsyncMain(snippet: string): string {
  const lines = snippet.split('\n');
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of lines) {
    if (inImport || line.startsWith('import ')) {
      imports.push(line);
      inImport = !/from '[^']+';$/.test(line) && !/^import '[^']+';$/.test(line);
    } else {
      body.push(`  ${line}`);
    }
  }
  return [
    ...imports,
    '',
    'async function main(): Promise<void> {',
    ...body,
    '}',
    '',
    'main().catch((error: unknown) => {',
    '  console.error(error);',
    '  process.exitCode = 1;',
    '});',
    '',
  ].join('\n');
}
