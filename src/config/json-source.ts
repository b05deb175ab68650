/**
 * Strict JSON text parsing that keeps positions, so that a diagnostic about a value can name its line and column.
 *
 * Syntax is checked by `JSON.parse` (the value is what it returns, so duplicate keys resolve as everywhere else: the
 * last one wins), positions come from `jsonc-parser`'s syntax tree.
 */

import { type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
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
    return 'unexpected text after the end of the JSON value';
  }
  const malformed = MALFORMED[code];
  if (malformed !== undefined) {
    return malformed;
  }
  const token = source.slice(error.offset, error.offset + Math.max(1, error.length));
  const found =
    token === ''
      ? 'the end of the text'
      : JSON.stringify(token.length > 20 ? `${token.slice(0, 20)}...` : token);
  return `${EXPECTATIONS[code] ?? code}, found ${found}`;
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
  const lines = lineStarts(source);
  if (parseFailure !== undefined) {
    const { tree, errors } = syntaxTree(source);
    const first = errors[0];
    const offset =
      (first === undefined ? undefined : trailingCommaOffset(source, first)) ??
      first?.offset ??
      engineOffset(parseFailure.error) ??
      0;
    const problem =
      first === undefined ? errorMessage(parseFailure.error) : describeSyntaxError(source, first, tree);
    return { ok: false, position: positionOf(lines, offset), problem, cause: parseFailure.error };
  }
  // The tree is built on first use: a valid config that needs no diagnostics costs one JSON.parse.
  let tree: Node | undefined | null = null;
  return {
    ok: true,
    value,
    locate: (path, target = 'value') => {
      if (tree === null) {
        tree = syntaxTree(source).tree;
      }
      return positionOf(lines, locateOffset(tree, path, target));
    },
  };
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
  for (let i = children.length - 1; i >= 0; i--) {
    const [key, value] = children[i]?.children ?? [];
    if (key !== undefined && value !== undefined && key.value === segment) {
      return { value, keyOffset: key.offset };
    }
  }
  return undefined;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      starts.push(i + 1);
    }
  }
  return starts;
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
