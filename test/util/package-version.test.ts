/** `findPackageVersion`: the first package.json of this package's name, walking up a few directories. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPackageVersion, packageVersion } from '../../src/util/package-version.js';

const root = mkdtempSync(join(tmpdir(), 'grh-package-version-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Makes `dir` (under the scratch root) and writes `content` as its package.json when given. */
function dirWith(dir: string, content?: string): string {
  const path = join(root, dir);
  mkdirSync(path, { recursive: true });
  if (content !== undefined) writeFileSync(join(path, 'package.json'), content);
  return path;
}

describe('findPackageVersion', () => {
  it("skips another package's package.json, an unreadable one and one without a version, to reach ours", () => {
    dirWith('app', JSON.stringify({ name: 'grpc-retry-hedging', version: '1.2.3' }));
    dirWith('app/a', JSON.stringify({ name: 'grpc-retry-hedging', version: 4 }));
    dirWith('app/a/b', '{ not json');
    const start = dirWith('app/a/b/c', JSON.stringify({ name: 'an-application', version: '9.9.9' }));
    expect(findPackageVersion(start)).toBe('1.2.3');
  });

  it('looks five directories up, and no further', () => {
    dirWith('deep', JSON.stringify({ name: 'grpc-retry-hedging', version: '2.0.0' }));
    expect(findPackageVersion(dirWith('deep/1/2/3/4/5'))).toBe('2.0.0');
    expect(findPackageVersion(dirWith('deep/1/2/3/4/5/6'))).toBe('unknown');
  });

  it('says unknown without a start, and at the root of the file system', () => {
    expect(findPackageVersion(undefined)).toBe('unknown');
    expect(findPackageVersion('/')).toBe('unknown');
  });

  it("reads this package's version from its sources", () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(packageVersion()).toBe(version);
  });
});
