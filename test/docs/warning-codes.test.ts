/** Every warning code the package emits is listed in docs/api.md ("Warnings"), and every listed one is emitted. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CODE = /GRPC_RETRY_HEDGING_[A-Z_]+/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('warning codes', () => {
  it('docs/api.md lists exactly the codes src/ emits', () => {
    const emitted = new Set(
      sourceFiles('src').flatMap((file) => readFileSync(file, 'utf8').match(CODE) ?? []),
    );
    const api = readFileSync('docs/api.md', 'utf8');
    const table = api.slice(api.indexOf('## Warnings'));
    const listed = new Set(table.match(CODE) ?? []);
    expect(emitted.size).toBeGreaterThan(5);
    expect([...listed].sort()).toEqual([...emitted].sort());
  });
});
