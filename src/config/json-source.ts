/**
 * Strict JSON text parsing that keeps positions, so that a diagnostic about a value can name its line and column.
 *
 * Syntax is checked by `JSON.parse` (the value is what it returns, so duplicate keys resolve as everywhere else: the
 * last one wins; {@link JsonSource.duplicateKeys} lists them), positions come from `jsonc-parser`'s syntax tree.
 *
 * Every step is linear in the text: `jsonc-parser` builds the text of a whitespace run one character at a time, so
 * long runs are shortened before it reads the text (see {@link compactWhitespace}) and its offsets mapped back.
 */

import { type Node, type ParseError, parseTree, printParseErrorCode, visit } from 'jsonc-parser';
import { errorMessage } from '../util/error-message.js';
import type { JsonPath } from './json-path.js';

/** A 1-based line and column, and the 0-based character offset they stand for. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

/** Parsed JSON text that can map a path back to a position. */
export interface JsonSource {
  readonly ok: true;
  readonly value: unknown;
  /**
   * Position of the value at `path` (or of its key, with `target` `'key'`). A path that does not exist, such as a
   * missing field, resolves to its nearest existing ancestor.
   */
  locate(path: JsonPath, target?: 'value' | 'key'): SourcePosition;
  /**
   * The keys written more than once in one object (`JSON.parse` keeps the last), each once, in text order; empty
   * when the nesting is too deep to walk.
   */
  duplicateKeys(): DuplicateKey[];
}

/**
 * What `check` (and `flaky-server --script`) say of a key written more than once in one object, `ignored` being
 * every copy before the last (the one `JSON.parse` keeps), in text order; the first of them is where it is first
 * written.
 */
export function duplicateKeyMessage(ignored: readonly Pick<SourcePosition, 'line' | 'column'>[]): string {
  const first = ignored[0] ?? { line: 0, column: 0 };
  const where = `(first at line ${first.line}, column ${first.column})`;
  if (ignored.length <= 1) {
    return `is written more than once in its object ${where}: JSON keeps only the last one, so the one at line ${first.line} is ignored`;
  }
  const lines = ignored.map((copy) => copy.line);
  const places =
    new Set(lines).size === lines.length
      ? `lines ${listed(lines.map(String), ', ')}`
      : listed(
          ignored.map((copy) => `line ${copy.line}, column ${copy.column}`),
          '; ',
        );
  return `is written ${ignored.length + 1} times in its object ${where}: JSON keeps only the last one, so the ${ignored.length} before it, at ${places}, are ignored`;
}

/** `a, b and c` (with `separator` between all but the last two). */
function listed(items: readonly string[], separator: string): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(separator)} and ${items[items.length - 1] as string}`;
}

/** A key written twice or more in one object. */
export interface DuplicateKey {
  /** Path of the key (the object's path and the key). */
  readonly path: JsonPath;
  /**
   * Every copy before the last, in text order (the first is where the key is first written): the ones `JSON.parse`
   * ignores.
   */
  readonly ignored: readonly SourcePosition[];
  /** Where it is written last: the value there is the one `JSON.parse` keeps. */
  readonly last: SourcePosition;
}

/** JSON text that does not parse. */
export interface JsonSyntaxError {
  readonly ok: false;
  readonly position: SourcePosition;
  /** What is wrong, e.g. `expected ":" after a property name`. */
  readonly problem: string;
  /** The error `JSON.parse` threw. */
  readonly cause: unknown;
}

/** What the parser expected, for errors about the token found in its place. */
const EXPECTATIONS: Readonly<Record<string, string>> = {
  InvalidSymbol: 'expected a JSON value',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: 'expected ":" after a property name',
  CommaExpected: 'expected "," between values',
  CloseBraceExpected: 'expected "," or "}" after a property value',
  CloseBracketExpected: 'expected "," or "]" after an array element',
  EndOfFileExpected: 'expected nothing after the end of the JSON value',
};

/** Errors about a malformed token, described on their own. */
const MALFORMED: Readonly<Record<string, string>> = {
  InvalidNumberFormat: 'malformed number',
  UnexpectedEndOfNumber: 'malformed number (digits expected)',
  InvalidCommentToken: 'comments are not allowed in JSON',
  UnexpectedEndOfComment: 'comments are not allowed in JSON',
  UnexpectedEndOfString: 'unterminated string (missing closing quote)',
  InvalidUnicode: 'invalid \\u escape in a string (expected four hex digits)',
  InvalidEscapeCharacter: 'invalid escape sequence in a string',
  InvalidCharacter: 'control characters in a string must be escaped',
};

/**
 * The offset of a trailing comma (`[1, 2,]`, `{"a": 1,}`) the parse error is about: the error is at the closing
 * bracket, where a value or a property name was expected, and a comma is the last thing before it.
 */
function trailingCommaOffset(source: string, error: ParseError): number | undefined {
  const code = printParseErrorCode(error.error);
  const closer = source[error.offset];
  if ((code !== 'PropertyNameExpected' && code !== 'ValueExpected') || (closer !== '}' && closer !== ']')) {
    return undefined;
  }
  let before = error.offset - 1;
  while (before >= 0 && /\s/.test(source[before] ?? '')) {
    before--;
  }
  return source[before] === ',' ? before : undefined;
}

function describeSyntaxError(source: string, error: ParseError, tree: Node | undefined): string {
  if (trailingCommaOffset(source, error) !== undefined) {
    const last = source[error.offset] === '}' ? 'property' : 'array element';
    return `a trailing comma: JSON allows no "," after the last ${last}; remove it`;
  }
  const code = printParseErrorCode(error.error);
  if (tree !== undefined && error.offset >= tree.offset + tree.length && error.offset < source.length) {
    const after = lookalikeCharacter(source.codePointAt(error.offset));
    return `unexpected text after the end of the JSON value${after === undefined ? '' : `: ${after}`}`;
  }
  const malformed = MALFORMED[code];
  if (malformed !== undefined) {
    return malformed;
  }
  const lookalike = lookalikeCharacter(source.codePointAt(error.offset));
  if (lookalike !== undefined) {
    return `${EXPECTATIONS[code] ?? code}, found ${lookalike}`;
  }
  const token = source.slice(error.offset, error.offset + Math.max(1, error.length));
  const found =
    token === ''
      ? 'the end of the text'
      : JSON.stringify(token.length > 20 ? `${token.slice(0, 20)}...` : token);
  return `${EXPECTATIONS[code] ?? code}, found ${found}`;
}

/** Characters that JSON does not allow as whitespace although they look like a space (or show as nothing). */
const LOOKALIKE_SPACES: ReadonlyMap<number, string> = new Map([
  [0x00a0, 'a no-break space'],
  [0x1680, 'an Ogham space mark'],
  [0x180e, 'a Mongolian vowel separator'],
  [0x2000, 'an en quad'],
  [0x2001, 'an em quad'],
  [0x2002, 'an en space'],
  [0x2003, 'an em space'],
  [0x2004, 'a three-per-em space'],
  [0x2005, 'a four-per-em space'],
  [0x2006, 'a six-per-em space'],
  [0x2007, 'a figure space'],
  [0x2008, 'a punctuation space'],
  [0x2009, 'a thin space'],
  [0x200a, 'a hair space'],
  [0x200b, 'a zero-width space'],
  [0x200c, 'a zero-width non-joiner'],
  [0x200d, 'a zero-width joiner'],
  [0x2028, 'a line separator'],
  [0x2029, 'a paragraph separator'],
  [0x202f, 'a narrow no-break space'],
  [0x205f, 'a medium mathematical space'],
  [0x2060, 'a word joiner'],
  [0x3000, 'an ideographic space'],
  [0xfeff, 'a byte-order mark'],
]);

/** Quotes a word processor or web page puts where JSON needs `"`. */
const CURLY_QUOTES: ReadonlySet<number> = new Set([
  0x2018, 0x2019, 0x201a, 0x201b, 0x201c, 0x201d, 0x201e, 0x201f,
]);

function codePointName(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * What a syntax error found, when the character there looks like whitespace or a quote that JSON allows (text
 * pasted from a web page or a word processor): shown as it is, `found " "` would read as if a space were the
 * mistake. `undefined` for any other character.
 */
function lookalikeCharacter(code: number | undefined): string | undefined {
  if (code === undefined) {
    return undefined;
  }
  const space = LOOKALIKE_SPACES.get(code);
  if (space !== undefined) {
    return `${space} (${codePointName(code)}): JSON allows only spaces, tabs and line breaks between tokens; replace it with a plain space or remove it`;
  }
  if (CURLY_QUOTES.has(code)) {
    return `a curly quote (${codePointName(code)}): JSON names and strings take straight double quotes (")`;
  }
  return undefined;
}

/**
 * Parses strict JSON text (a leading byte-order mark is ignored; positions count from after it).
 *
 * @returns The value with a locator, or the first syntax error with its position.
 */
export function parseJsonSource(text: string): JsonSource | JsonSyntaxError {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let value: unknown;
  let parseFailure: { error: unknown } | undefined;
  try {
    value = JSON.parse(source) as unknown;
  } catch (error) {
    parseFailure = { error };
  }
  if (parseFailure !== undefined) {
    const compact = compactWhitespace(source);
    const { tree, errors } = syntaxTree(compact.text);
    const first = errors[0];
    const compactOffset =
      first === undefined ? undefined : (trailingCommaOffset(compact.text, first) ?? first.offset);
    const offset =
      compactOffset === undefined
        ? Math.min(engineOffset(parseFailure.error) ?? 0, source.length)
        : compact.toOriginal(compactOffset);
    const problem =
      first === undefined ? errorMessage(parseFailure.error) : describeSyntaxError(compact.text, first, tree);
    return { ok: false, position: positionAt(source, offset), problem, cause: parseFailure.error };
  }
  // The tree is built on first use: a valid config that needs no diagnostics costs one JSON.parse.
  let compact: CompactText | undefined;
  let tree: Node | undefined | null = null;
  let lines: readonly number[] | undefined;
  const compacted = (): CompactText => {
    compact ??= compactWhitespace(source);
    return compact;
  };
  const position = (offset: number): SourcePosition => {
    lines ??= lineStarts(source);
    return positionOf(lines, offset);
  };
  return {
    ok: true,
    value,
    locate: (path, target = 'value') => {
      const { text: compactText, toOriginal } = compacted();
      if (tree === null) {
        tree = syntaxTree(compactText).tree;
      }
      return position(toOriginal(locateOffset(tree, path, target)));
    },
    duplicateKeys: () => {
      const { text: compactText, toOriginal } = compacted();
      return findDuplicateKeys(compactText).map(({ path, ignored, last }) => ({
        path,
        ignored: ignored.map((offset) => position(toOriginal(offset))),
        last: position(toOriginal(last)),
      }));
    },
  };
}

/** Runs of spaces and tabs longer than this (outside strings) are shortened before `jsonc-parser` reads them. */
const LONG_WHITESPACE_RUN = 64;

/** Text with long whitespace runs shortened, and how to map its offsets back to the text as given. */
interface CompactText {
  readonly text: string;
  toOriginal(offset: number): number;
}

/**
 * `source` with every run of spaces and tabs outside strings longer than {@link LONG_WHITESPACE_RUN} shortened to
 * one space: the same tokens at the same lines, in text `jsonc-parser` reads in linear time (it appends a whitespace
 * run's characters one by one, which for megabytes of spaces takes seconds and hundreds of megabytes).
 */
function compactWhitespace(source: string): CompactText {
  // compacted offset of the first character after each shortened run, and how many characters were dropped
  // before it
  const after: number[] = [];
  const dropped: number[] = [];
  const chunks: string[] = [];
  let kept = 0; // start of the source not yet copied into chunks
  let removed = 0;
  let inString = false;
  const length = source.length;
  for (let i = 0; i < length; i++) {
    const code = source.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) {
        i++; // the escaped character, whatever it is
      } else if (code === 0x22 || code === 0x0a || code === 0x0d) {
        inString = false; // (a line break ends an unterminated string for jsonc-parser too)
      }
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x20 || code === 0x09) {
      let end = i + 1;
      while (end < length && (source.charCodeAt(end) === 0x20 || source.charCodeAt(end) === 0x09)) {
        end++;
      }
      if (end - i > LONG_WHITESPACE_RUN) {
        chunks.push(source.slice(kept, i + 1)); // up to the run's first character, which stays
        after.push(i + 1 - removed);
        removed += end - i - 1;
        dropped.push(removed);
        kept = end;
      }
      i = end - 1;
    }
  }
  if (after.length === 0) {
    return { text: source, toOriginal: (offset) => offset };
  }
  chunks.push(source.slice(kept));
  return {
    text: chunks.join(''),
    toOriginal: (offset) => {
      let low = -1;
      let high = after.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if ((after[mid] ?? 0) <= offset) {
          low = mid;
        } else {
          high = mid - 1;
        }
      }
      return low < 0 ? offset : offset + (dropped[low] ?? 0);
    },
  };
}

/**
 * Keys written twice or more in one object, with the offsets of every occurrence before the last and of the last;
 * empty when the nesting exhausts the stack.
 */
function findDuplicateKeys(source: string): { path: JsonPath; ignored: number[]; last: number }[] {
  const found = new Map<string, { path: JsonPath; ignored: number[]; last: number }>();
  const objects: Map<string, number>[] = [];
  let depth = 0; // objects open, to tell an object's own keys from its children's
  try {
    visit(
      source,
      {
        onObjectBegin: () => {
          objects[depth] = new Map();
          depth++;
        },
        onObjectEnd: () => {
          depth--;
        },
        onObjectProperty: (property, offset, _length, _line, _column, pathSupplier) => {
          const keys = objects[depth - 1];
          const first = keys?.get(property);
          if (keys === undefined) {
            return;
          }
          if (first === undefined) {
            keys.set(property, offset);
            return;
          }
          const path = [...pathSupplier(), property];
          const id = JSON.stringify(path);
          const known = found.get(id);
          if (known === undefined) {
            found.set(id, { path, ignored: [first], last: offset });
          } else {
            known.ignored.push(known.last);
            known.last = offset;
          }
        },
      },
      { disallowComments: true, allowTrailingComma: false },
    );
  } catch {
    return []; // nesting deep enough to exhaust the stack
  }
  return [...found.values()];
}

/** jsonc-parser's tree of `source` (strict JSON options) and its syntax errors. */
function syntaxTree(source: string): { tree: Node | undefined; errors: ParseError[] } {
  const errors: ParseError[] = [];
  try {
    const tree = parseTree(source, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
    return { tree, errors };
  } catch {
    // Nesting deep enough to exhaust the stack: JSON.parse decides alone, positions fall back to the start.
    return { tree: undefined, errors };
  }
}

function engineOffset(error: unknown): number | undefined {
  const match = /position (\d+)/.exec(errorMessage(error));
  return match === null ? undefined : Number(match[1]);
}

function locateOffset(tree: Node | undefined, path: JsonPath, target: 'value' | 'key'): number {
  let node = tree;
  if (node === undefined) {
    return 0;
  }
  let keyOffset = node.offset;
  for (const segment of path) {
    const child = childAt(node, segment);
    if (child === undefined) {
      return node.offset;
    }
    node = child.value;
    keyOffset = child.keyOffset;
  }
  return target === 'key' ? keyOffset : node.offset;
}

/** The child of an object (the last property with that key, as JSON.parse keeps) or of an array. */
function childAt(node: Node, segment: string | number): { value: Node; keyOffset: number } | undefined {
  const children = node.children ?? [];
  if (node.type === 'array' && typeof segment === 'number') {
    const element = children[segment];
    return element === undefined ? undefined : { value: element, keyOffset: element.offset };
  }
  if (node.type !== 'object' || typeof segment !== 'string') {
    return undefined;
  }
  if (children.length > INDEXED_OBJECT_SIZE) {
    return propertyIndex(node, children).get(segment);
  }
  for (let i = children.length - 1; i >= 0; i--) {
    const [key, value] = children[i]?.children ?? [];
    if (key !== undefined && value !== undefined && key.value === segment) {
      return { value, keyOffset: key.offset };
    }
  }
  return undefined;
}

/**
 * Objects with more properties than this are looked up through an index: a scan per lookup made locating every
 * key of a large object quadratic (83,000 unknown keys took `validateServiceConfig` 50 s to locate).
 */
const INDEXED_OBJECT_SIZE = 16;

const propertyIndexes = new WeakMap<Node, Map<string, { value: Node; keyOffset: number }>>();

/** The properties of an object node by key, the last of a key written twice winning, as JSON.parse keeps it. */
function propertyIndex(
  node: Node,
  children: readonly Node[],
): Map<string, { value: Node; keyOffset: number }> {
  let index = propertyIndexes.get(node);
  if (index === undefined) {
    index = new Map();
    for (const property of children) {
      const [key, value] = property.children ?? [];
      if (key !== undefined && value !== undefined && typeof key.value === 'string') {
        index.set(key.value, { value, keyOffset: key.offset });
      }
    }
    propertyIndexes.set(node, index);
  }
  return index;
}

/** A line ends at `\n`, `\r\n` or a lone `\r` (JSON whitespace all three; editors and jsonc-parser break lines there). */
const LINE_END = /\r\n?|\n/g;

/** The offset where each line starts, up to `limit` (every line when absent). */
function lineStarts(text: string, limit = Number.POSITIVE_INFINITY): number[] {
  const starts = [0];
  LINE_END.lastIndex = 0;
  for (let match = LINE_END.exec(text); match !== null; match = LINE_END.exec(text)) {
    if (match.index >= limit) {
      break;
    }
    starts.push(match.index + match[0].length);
  }
  return starts;
}

/** The position of one offset, without a table of every line (a syntax error needs no more). */
function positionAt(text: string, offset: number): SourcePosition {
  const starts = lineStarts(text, offset);
  return positionOf(starts, offset);
}

function positionOf(starts: readonly number[], offset: number): SourcePosition {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return { line: low + 1, column: offset - (starts[low] ?? 0) + 1, offset };
}
