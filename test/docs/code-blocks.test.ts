/**
 * Every code block of the README and of docs/*.md is checked here, so that the docs cannot drift from code that CI
 * runs:
 * - a TypeScript or JavaScript block must be an excerpt of a file that CI runs, named in a comment on the line
 *   before it: `<!-- excerpt: examples/quick-start.ts -->`. The file must exist and hold the block's lines, in
 *   order and contiguous, indentation aside; a line `// ...` (or `// …`) in the block stands for lines left out;
 * - a JSON block must parse, and one with `methodConfig` must be a valid service config (or be an excerpt too).
 * Other blocks (shell commands, output, diagrams) are not code and are not checked.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../src/config/parse-service-config.js';
import { DOC_PAGES, REPO_ROOT } from '../helpers/doc-pages.js';

const ROOT = REPO_ROOT;
const DOCS = DOC_PAGES;
const CODE_LANGUAGES = new Set(['ts', 'typescript', 'js', 'javascript']);
const EXCERPT = /^<!--\s*excerpt:\s*(\S+)\s*-->$/;
/** A line `// ...` (or `// …`) in a block stands for lines of the file left out. */
const ELISION = /^\s*\/\/\s*(\.\.\.|…)\s*$/;

interface Block {
  doc: string;
  line: number;
  lang: string;
  text: string;
  excerptOf: string | undefined;
}

/** The fenced blocks of a markdown text, each with the excerpt marker on the line before it, if any. */
function fencedBlocks(doc: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    const marker = i > 0 ? EXCERPT.exec(lines[i - 1]!.trim()) : null;
    blocks.push({
      doc,
      line: i + 1,
      lang: open[1]!.toLowerCase(),
      text: lines.slice(i + 1, end).join('\n'),
      excerptOf: marker?.[1],
    });
    i = end;
  }
  return blocks;
}

function significant(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** Why `block` is not an excerpt of `source` (undefined when it is). */
function excerptMismatch(block: string, source: string): string | undefined {
  const sourceLines = significant(source);
  const chunks: string[][] = [[]];
  for (const line of block.split('\n')) {
    if (ELISION.test(line)) chunks.push([]);
    else if (line.trim() !== '') chunks[chunks.length - 1]!.push(line.trim());
  }
  let from = 0;
  for (const chunk of chunks.filter((c) => c.length > 0)) {
    let found = -1;
    for (let at = from; at + chunk.length <= sourceLines.length && found < 0; at++) {
      if (chunk.every((line, k) => sourceLines[at + k] === line)) found = at;
    }
    if (found < 0) return `these lines are not in the file (in this order, contiguous):\n${chunk.join('\n')}`;
    from = found + chunk.length;
  }
  return undefined;
}

const blocks = DOCS.flatMap((doc) => fencedBlocks(doc, readFileSync(join(ROOT, doc), 'utf8')));

describe('code blocks of the README and docs/', () => {
  it('finds the docs and their blocks', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/testing.md', 'docs/observability.md']));
    expect(blocks.filter((b) => CODE_LANGUAGES.has(b.lang)).length).toBeGreaterThan(10);
  });

  const code = blocks.filter((b) => CODE_LANGUAGES.has(b.lang) || b.excerptOf !== undefined);
  it.each(code.map((b) => [`${b.doc}:${b.line}`, b] as const))(
    '%s is an excerpt of a file CI runs',
    (_, block) => {
      expect(block.excerptOf, 'no <!-- excerpt: file --> comment on the line before the block').toBeDefined();
      const file = join(ROOT, block.excerptOf!);
      expect(existsSync(file), `${block.excerptOf} does not exist`).toBe(true);
      expect(excerptMismatch(block.text, readFileSync(file, 'utf8'))).toBeUndefined();
    },
  );

  const json = blocks.filter((b) => b.lang === 'json' && b.excerptOf === undefined);
  it.each(json.map((b) => [`${b.doc}:${b.line}`, b] as const))(
    '%s is valid JSON (a valid service config)',
    (_, block) => {
      const value = JSON.parse(block.text) as Record<string, unknown>;
      if ('methodConfig' in value) {
        expect(() => parseServiceConfig(value)).not.toThrow();
      }
    },
  );
});

describe('links of the README and docs/', () => {
  it('every relative link points at a file of the repository', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const file = target!.split('#')[0]!;
        if (!existsSync(join(ROOT, dirname(doc), file))) broken.push(`${doc}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the excerpt check itself', () => {
  const source = 'const a = 1;\nfunction f() {\n  return a;\n}\nconst b = 2;\n';
  it('accepts contiguous lines, indentation aside, and // ... for lines left out', () => {
    expect(excerptMismatch('function f() {\nreturn a;\n}', source)).toBeUndefined();
    expect(excerptMismatch('const a = 1;\n// ...\nconst b = 2;', source)).toBeUndefined();
  });
  it('rejects changed, reordered or non-contiguous lines', () => {
    expect(excerptMismatch('const a = 2;', source)).toMatch(/not in the file/);
    expect(excerptMismatch('const b = 2;\n// ...\nconst a = 1;', source)).toMatch(/not in the file/);
    expect(excerptMismatch('const a = 1;\nconst b = 2;', source)).toMatch(/not in the file/);
  });
  it('reads the excerpt marker on the line before a block', () => {
    const [block] = fencedBlocks('x.md', '<!-- excerpt: examples/a.ts -->\n```ts\nx();\n```\n');
    expect(block).toMatchObject({ lang: 'ts', text: 'x();', excerptOf: 'examples/a.ts', line: 2 });
  });
});
