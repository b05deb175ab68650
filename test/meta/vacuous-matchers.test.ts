/**
 * A RegExp as a property value of `toMatchObject` asserts nothing in vitest: `expect({ reason: 'abc' })
 * .toMatchObject({ reason: /zzz/ })` passes, since a RegExp has no own keys to compare. Nine such lines once stood in
 * the suites (the RetryInfo parser's malformed reasons, a well-known value's error), and the mutants that changed
 * those texts survived. `expect.stringMatching(/.../)` is the matcher that checks; this keeps the other form out.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsFilesUnder } from '../helpers/ts-files.js';

const TEST = join(import.meta.dirname, '..');

/** The argument text of each `toMatchObject(` call in `source`, with the offset where it starts. */
function matchObjectArguments(source: string): { start: number; text: string }[] {
  const found: { start: number; text: string }[] = [];
  for (const call of source.matchAll(/\btoMatchObject\(/g)) {
    const start = (call.index ?? 0) + call[0].length;
    let depth = 1;
    let end = start;
    while (depth > 0 && end < source.length) {
      const c = source[end];
      if (c === '(' || c === '[' || c === '{') depth += 1;
      else if (c === ')' || c === ']' || c === '}') depth -= 1;
      end += 1;
    }
    found.push({ start, text: source.slice(start, end - 1) });
  }
  return found;
}

/** A regular-expression literal written as a property value (`key: /.../`), not a comment. */
const REGEX_VALUE = /:\s*\/(?![/*])(?:\\.|[^/\n])+\/[dgimsuy]*/g;

/** Where `source` puts a RegExp literal as a value inside `toMatchObject(...)`: `line: text`. */
function vacuousMatches(source: string): string[] {
  return matchObjectArguments(source).flatMap(({ start, text }) =>
    [...text.matchAll(REGEX_VALUE)].map((m) => {
      const line = source.slice(0, start + (m.index ?? 0)).split('\n').length;
      return `${line}: ${m[0].trim()}`;
    }),
  );
}

describe('toMatchObject with a RegExp value', () => {
  it('asserts nothing in vitest (why the check below exists)', () => {
    expect(() => expect({ reason: 'abc' }).toMatchObject({ reason: /zzz/ })).not.toThrow();
    expect(() => expect({ reason: 'abc' }).toMatchObject({ reason: expect.stringMatching(/zzz/) })).toThrow();
  });

  it('is found by the check, and expect.stringMatching is not', () => {
    expect(vacuousMatches("expect(x).toMatchObject({ kind: 'malformed', reason: /negative/ });")).toEqual([
      '1: : /negative/',
    ]);
    expect(
      vacuousMatches('expect(x).toMatchObject({\n  a: { b: 1 },\n  reason: /out of range \\(1\\)/i,\n});'),
    ).toEqual(['3: : /out of range \\(1\\)/i']);
    expect(vacuousMatches('expect(x).toMatchObject({ reason: expect.stringMatching(/negative/) });')).toEqual(
      [],
    );
    expect(vacuousMatches('expect(x).toMatchObject({ n: 2 / 4 }); // a/b')).toEqual([]);
  });

  it('is written in no test file', () => {
    // This file writes the form on purpose, as the check's own examples.
    const others = tsFilesUnder(TEST).filter((file) => file !== import.meta.filename);
    expect(others.length).toBeGreaterThan(300);
    const found = others.flatMap((file) =>
      vacuousMatches(readFileSync(file, 'utf8')).map((hit) => `${relative(TEST, file)}:${hit}`),
    );
    expect(found).toEqual([]);
  });
});
