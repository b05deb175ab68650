/**
 * The README and docs/ are read in the installed package too (node_modules/grpc-retry-hedging): every relative link
 * must name a file the package ships. Files only the repository holds (BENCHMARKS.md, ARCHITECTURE.md, tests) are
 * linked by their address on GitHub.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_PAGES, REPO_ROOT } from '../helpers/doc-pages.js';

const ROOT = REPO_ROOT;
const DOCS = DOC_PAGES;
/** `[text](target)`, the target up to a `#` or a space (a title). */
const LINK = /\]\(([^)#\s]*)(?:#[^)\s]*)?(?:\s+"[^"]*")?\)/g;

/** The files `npm pack` puts in the tarball, relative to the package root. */
function shippedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [result] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  return new Set(result!.files.map((f) => f.path));
}

describe('links in the shipped docs', () => {
  it('every relative link of the README and docs/ names a file the package ships', () => {
    const shipped = shippedFiles();
    expect(shipped.has('README.md')).toBe(true);
    const broken: string[] = [];
    for (const doc of DOCS) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const match of text.matchAll(LINK)) {
        const target = match[1]!;
        if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) {
          continue; // an anchor in the same page, or an absolute address
        }
        const path = relative(ROOT, normalize(join(ROOT, dirname(doc), target)))
          .split('\\')
          .join('/');
        const isDir = existsSync(join(ROOT, path)) && !path.includes('.');
        if (!(shipped.has(path) || (isDir && [...shipped].some((f) => f.startsWith(`${path}/`))))) {
          broken.push(`${doc}: ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  }, 60_000);
});
