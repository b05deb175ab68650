/**
 * Where in the .proto files a type protobufjs could not resolve is used. protobufjs names the type and the message
 * (or method) that uses it, but not the file or line: "no such Type or Enum 'Missing' in Type .demo.Req", "no such
 * type: Nope". The place is found by reading the file loaded and the files it imports, as protoc would report it.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** Files read at most, the one loaded and its imports, transitively. */
const MAX_FILES = 100;

/** What protobufjs says of a type it cannot resolve: the type's name and, for a field, the message using it. */
const UNRESOLVED = [
  /no such Type or Enum '([\w.]+)' in Type \.?([\w.]+)/,
  /no such type: \.?([\w.]+)/,
  /no such Enum '([\w.]+)' in Type \.?([\w.]+)/,
];

/** A place in a .proto file: the path as shown (relative to the working directory), 1-based line and column. */
export interface ProtoPlace {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The line's text, trimmed. */
  readonly text: string;
}

/**
 * The place of the first use of the type a protobufjs error `message` says it cannot resolve, in `file` (absolute)
 * or a file it imports (looked for in `includeDirs`, then beside the importing file); undefined when the message is
 * not about an unresolved type or no use is found.
 */
export function unresolvedTypePlace(
  message: string,
  file: string,
  includeDirs: readonly string[],
): ProtoPlace | undefined {
  const match = UNRESOLVED.map((pattern) => pattern.exec(message)).find((found) => found !== null);
  if (!match) {
    return undefined;
  }
  const typeName = match[1] as string;
  const user = match[2]?.split('.').pop();
  const use = new RegExp(`(^|[^\\w.])(${escapeRegExp(typeName)})(?![\\w.])`);
  let first: ProtoPlace | undefined;
  for (const path of protoFilesFrom(file, includeDirs)) {
    const lines = readLines(path);
    // Within the message that uses it, when protobufjs named one; else (a method's type) anywhere.
    const start = user === undefined ? 0 : lines.findIndex((line) => declares(line, user));
    const found = findUse(lines, use, Math.max(start, 0));
    if (found !== undefined) {
      const place = { file: shown(path), ...found };
      if (start >= 0) {
        return place;
      }
      first ??= place;
    }
  }
  return first;
}

/** `message` with the place of its unresolved type appended (`, at file:line:column: text`), when one is found. */
export function withUnresolvedTypePlace(
  message: string,
  file: string,
  includeDirs: readonly string[],
): string {
  const place = unresolvedTypePlace(message, file, includeDirs);
  return place === undefined
    ? message
    : `${message}, at ${place.file}:${place.line}:${place.column}: ${place.text}`;
}

function declares(line: string, name: string): boolean {
  return new RegExp(`^\\s*(message|service)\\s+${escapeRegExp(name)}\\b`).test(uncommented(line));
}

function findUse(
  lines: readonly string[],
  use: RegExp,
  from: number,
): { line: number; column: number; text: string } | undefined {
  for (let index = from; index < lines.length; index++) {
    const text = uncommented(lines[index] as string);
    const found = use.exec(text);
    if (found) {
      const column = found.index + (found[1] as string).length + 1;
      return { line: index + 1, column, text: text.trim() };
    }
  }
  return undefined;
}

/** `file` and the files it imports, transitively, each once, in the order protoc would read them. */
function protoFilesFrom(file: string, includeDirs: readonly string[]): string[] {
  const seen = new Set<string>();
  const queue = [file];
  while (queue.length > 0 && seen.size < MAX_FILES) {
    const path = queue.shift() as string;
    if (seen.has(path) || !existsSync(path)) {
      continue;
    }
    seen.add(path);
    for (const line of readLines(path)) {
      const imported = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"/.exec(line)?.[1];
      if (imported === undefined) {
        continue;
      }
      const candidates = isAbsolute(imported)
        ? [imported]
        : [...includeDirs.map((dir) => join(resolve(dir), imported)), join(dirname(path), imported)];
      const found = candidates.find((candidate) => existsSync(candidate));
      if (found !== undefined) {
        queue.push(found);
      }
    }
  }
  return [...seen];
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}

/** The line without a `//` comment (a `//` inside a string is rare in a .proto and only shortens the search). */
function uncommented(line: string): string {
  const comment = line.indexOf('//');
  return comment === -1 ? line : line.slice(0, comment);
}

function shown(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere.startsWith('..') || isAbsolute(fromHere) ? path : fromHere;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
