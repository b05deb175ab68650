/**
 * The package as users get it: `npm pack`, then install the tarball into scratch ESM, CJS and
 * node10-resolution TypeScript projects, compile the flaky-server example of docs/testing.md and an import of every entry
 * point with tsc (strict, declarations checked), and run them; and load its ESM and CJS builds in one process.
 *
 * Needs a build (`npm run build`) and the npm cache filled by `npm ci`. Slow (about 30 s), so it runs only when
 * GRPC_RETRY_HEDGING_PACKAGE_TEST=1, as CI sets it: `GRPC_RETRY_HEDGING_PACKAGE_TEST=1 npx vitest run test/package`.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installScratchRoot, type ProjectKind, wrapInAsyncMain, writeProject } from './scratch-projects.js';

const enabled = process.env.GRPC_RETRY_HEDGING_PACKAGE_TEST === '1';
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

interface PackedFile {
  path: string;
  size: number;
}

/** Every file path package.json points at: main, module, types, exports, typesVersions, bin. */
function entryFiles(manifest: Record<string, unknown>): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      found.push(posix.normalize(value));
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (typeof value === 'object' && value !== null) {
      Object.values(value).forEach(walk);
    }
  };
  for (const field of ['main', 'module', 'types', 'exports', 'typesVersions', 'bin']) {
    walk(manifest[field]);
  }
  return found.filter((path) => path !== 'package.json');
}

/** Files of the tarball reached from the entry files through relative imports (code and declarations). */
function reachableFiles(
  packageDir: string,
  files: ReadonlySet<string>,
  entries: readonly string[],
): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)['"](\.\.?\/[^'"]+)['"]/g;
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !files.has(file)) {
      continue;
    }
    seen.add(file);
    const text = readFileSync(join(packageDir, file), 'utf8');
    for (const match of text.matchAll(specifier)) {
      const target = posix.normalize(posix.join(posix.dirname(file), match[1]!));
      const declarations = file.endsWith('.d.cts')
        ? [target.replace(/\.c?js$/, '.d.cts')]
        : file.endsWith('.d.ts')
          ? [target.replace(/\.js$/, '.d.ts')]
          : [];
      queue.push(target, ...declarations);
    }
  }
  return seen;
}

describe.skipIf(!enabled)('the packed tarball', () => {
  let work: string;
  let packed: PackedFile[];
  let installed: string;

  beforeAll(() => {
    if (!existsSync(join(repoRoot, 'dist', 'index.js'))) {
      throw new Error('dist/ is missing: run `npm run build` first');
    }
    work = mkdtempSync(join(tmpdir(), 'grpc-retry-hedging-pack-'));
    const output = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [result] = JSON.parse(output) as Array<{ filename: string; files: PackedFile[] }>;
    packed = result!.files;
    installScratchRoot(repoRoot, join(work, 'root'), join(work, result!.filename));
    installed = join(work, 'root', 'node_modules', 'grpc-retry-hedging');
  }, 120_000);

  afterAll(() => {
    if (work !== undefined) {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('holds the license, the proto and the entry points, and no source maps', () => {
    const paths = packed.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'protos/flaky_test.proto']));
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(
      /Apache License\s+Version 2\.0, January 2004/,
    );
    expect(paths.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('dist/cli/'))).toEqual(['dist/cli/main.js']);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest.repository.url).toContain('github.com/grpc-retry-hedging/grpc-retry-hedging');
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.bugs.url).toMatch(/\/issues$/);
    for (const entry of entryFiles(manifest)) {
      expect(paths, `package.json points at ${entry}`).toContain(entry);
    }
  });

  it('ships no file that no entry point reaches', () => {
    const paths = new Set(packed.map((f) => f.path));
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    const reached = reachableFiles(installed, paths, entryFiles(manifest));
    expect(reached.size).toBeGreaterThan(10);
    expect([...paths].filter((p) => p.startsWith('dist/') && !reached.has(p))).toEqual([]);
  });

  it.each<ProjectKind>(['esm', 'cjs', 'node10'])(
    "compiles the README's quick start, the flaky-server example of docs/testing.md and every entry point with strict tsc, and runs them (%s)",
    (kind) => {
      // docs/testing.md shows this file (test/docs/code-blocks.test.ts holds them together).
      const snippet = readFileSync(join(repoRoot, 'examples', 'flaky-server-quick.ts'), 'utf8');
      // The README's quick start, whole, as a user pastes it.
      const quickStart = readFileSync(join(repoRoot, 'examples', 'quick-start.ts'), 'utf8');
      const dir = join(work, 'root', kind);
      writeProject(dir, kind, {
        'readme-flaky-server.ts': kind === 'esm' ? snippet : wrapInAsyncMain(snippet),
        'quick-start.ts': kind === 'esm' ? quickStart : wrapInAsyncMain(quickStart),
        'entry-points.ts': readFileSync(
          join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'entry-points.ts'),
          'utf8',
        ),
      });
      const compiled = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
      expect(compiled.stdout + compiled.stderr, 'tsc output').toBe('');
      expect(compiled.status).toBe(0);

      const entries = spawnSync(process.execPath, [join(dir, 'out', 'entry-points.js')], {
        encoding: 'utf8',
      });
      expect(entries.stderr).toBe('');
      expect(entries.stdout.trim()).toBe('entry points: function function function function call-end 1');

      const run = spawnSync(process.execPath, [join(dir, 'out', 'readme-flaky-server.js')], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout.trim().split('\n')).toEqual([
        'call ended with 14',
        'attempt 1: previous undefined, ended 14, id req-1',
        'attempt 2: previous 1, ended 14, id req-1',
      ]);

      const quick = spawnSync(process.execPath, [join(dir, 'out', 'quick-start.js')], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(quick.stderr).toBe('');
      expect(quick.status).toBe(0);
      expect(quick.stdout).toBe("{ message: 'Hello world' } after 2 attempts\n");
    },
    60_000,
  );

  // A user's esbuild bundle (a Lambda, a CLI): the package and its dependencies in one file, the protos the flaky
  // server loads copied next to it, as the README's Compatibility section says. CommonJS output (esbuild's default for Node) bundles
  // grpc-js too; ESM output leaves grpc-js and protobufjs out, as their own CommonJS cannot be bundled into ESM.
  it.each<'cjs' | 'esm'>(['cjs', 'esm'])(
    'bundles the flaky-server example of docs/testing.md with esbuild, and the bundle runs (%s output)',
    (format) => {
      const dir = join(work, 'root', `bundle-${format}`);
      mkdirSync(dir, { recursive: true });
      const snippet = readFileSync(join(repoRoot, 'examples', 'flaky-server-quick.ts'), 'utf8');
      writeFileSync(join(dir, 'app.ts'), format === 'esm' ? snippet : wrapInAsyncMain(snippet));
      const out = join(dir, format === 'esm' ? 'app.mjs' : 'app.cjs');
      const bundled = buildSync({
        entryPoints: [join(dir, 'app.ts')],
        bundle: true,
        platform: 'node',
        format,
        outfile: out,
        logLevel: 'silent',
        external: format === 'esm' ? ['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs'] : [],
      });
      expect(bundled.errors).toEqual([]);
      cpSync(join(installed, 'protos'), join(dir, 'protos'), { recursive: true });

      const run = spawnSync(process.execPath, [out], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout.trim().split('\n')[0]).toBe('call ended with 14');
    },
    60_000,
  );

  // An ESM application with a CommonJS library loads both builds: what the package keeps once per process is kept
  // once for both (call numbers, the cancel-rate limit per connection, the adaptive throttle's mark on its rejections).
  it('keeps per-process state once for its ESM and CJS builds loaded together', () => {
    const script = join(work, 'root', 'both-builds.mjs');
    cpSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'both-builds.mjs'), script);
    const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      'call ids: 1, 2, 3',
      'losers left running: 1',
      'throttled retry: shard down, reason throttled',
    ]);
  }, 30_000);

  it('runs the check command from the installed bin', () => {
    const bin = join(work, 'root', 'node_modules', '.bin', 'grpc-retry-hedging');
    const run = spawnSync(bin, ['check', join(repoRoot, 'examples', 'service-config.json')], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/methodConfig\[0\]/);
  });
});
