/**
 * docs/api.md says it names every export, one line each: each name that an entry point exports (values and types)
 * appears there in backticks, alone or as a call (`name(` …). Read with the TypeScript compiler from the sources,
 * so a new export without a line fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const ENTRIES = {
  'grpc-retry-hedging': 'src/index.ts',
  'grpc-retry-hedging/testing': 'src/testing/index.ts',
  'grpc-retry-hedging/otel': 'src/otel/index.ts',
} as const;

function exportedNames(): Map<string, string[]> {
  const files = Object.values(ENTRIES).map((file) => join(ROOT, file));
  const program = ts.createProgram(files, {
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(ROOT, file));
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) {
      throw new Error(`cannot read the exports of ${file}`);
    }
    names.set(
      entry,
      checker.getExportsOfModule(module).map((symbol) => symbol.name),
    );
  }
  return names;
}

describe('docs/api.md', () => {
  const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const names = exportedNames();

  it.each([...names.keys()])('names every export of %s', (entry) => {
    const exports = names.get(entry) ?? [];
    expect(exports.length).toBeGreaterThan(10);
    const missing = exports.filter((name) => !api.includes(`\`${name}\``) && !api.includes(`\`${name}(`));
    expect(missing, `exported by ${entry} but not named in docs/api.md`).toEqual([]);
  });
});
