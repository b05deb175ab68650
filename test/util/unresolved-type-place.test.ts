/**
 * The place of a type protobufjs cannot resolve (src/util/unresolved-type-place.ts), found with protobufjs's own
 * messages from real loads, in the file loaded and in the files it imports.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSync } from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';
import { errorMessage } from '../../src/util/error-message.js';
import { unresolvedTypePlace, withUnresolvedTypePlace } from '../../src/util/unresolved-type-place.js';

const cwd = process.cwd();
let dir = '';

afterEach(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

/** A working directory holding `files` (relative path → text), made the process's for the test. */
function workdir(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'unresolved-type-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  process.chdir(dir);
  return dir;
}

/** protobufjs's message for loading `file` (which must fail). */
function loadError(file: string, includeDirs: string[] = []): string {
  try {
    loadSync(join(dir, file), { includeDirs });
  } catch (error) {
    return errorMessage(error);
  }
  throw new Error(`${file} loaded`);
}

const HEADER = 'syntax = "proto3";\npackage demo;\n';

describe('unresolvedTypePlace', () => {
  it("a field's type: the line and column in the message that uses it, not an earlier mention", () => {
    workdir({
      'api.proto': `${HEADER}// Missing is not defined here\nmessage Other { string missing = 1; }\nmessage Req {\n  string id = 1;\n\tMissing thing = 2;\n}\n`,
    });
    const message = loadError('api.proto');
    expect(message).toContain("no such Type or Enum 'Missing'");
    expect(unresolvedTypePlace(message, join(dir, 'api.proto'), [])).toEqual({
      file: 'api.proto',
      line: 7,
      column: 2,
      text: 'Missing thing = 2;',
    });
  });

  it('in the message protobufjs names, past an earlier use elsewhere and past a comment naming the type', () => {
    workdir({
      'two.proto': `message Req {\n  // Missing: a type to add\n  Missing thing = 1;\n}\nmessage Earlier { Missing x = 1; }\n`,
      'later.proto': `message Earlier { Missing x = 1; }\nmessage Req {\n  Missing thing = 1;\n}\n`,
    });
    const said = "no such Type or Enum 'Missing' in Type .demo.Req";
    expect(unresolvedTypePlace(said, join(dir, 'two.proto'), [])).toMatchObject({ line: 3, column: 3 });
    expect(unresolvedTypePlace(said, join(dir, 'later.proto'), [])).toMatchObject({ line: 3, column: 3 });
  });

  it("a method's type, and a qualified name", () => {
    workdir({
      'svc.proto': `${HEADER}message Req { string id = 1; }\nservice Svc {\n  rpc Get(Req) returns (other.Nope);\n}\n`,
    });
    const message = loadError('svc.proto');
    expect(withUnresolvedTypePlace(message, join(dir, 'svc.proto'), [])).toBe(
      `${message}, at svc.proto:5:25: rpc Get(Req) returns (other.Nope);`,
    );
  });

  it('in a file the loaded one imports, found through the include directories', () => {
    workdir({
      'protos/api.proto': `${HEADER}import "common/ids.proto";\nmessage Req { demo.Id id = 1; }\n`,
      'protos/common/ids.proto': `${HEADER}message Id {\n  Unknown value = 1;\n}\n`,
    });
    const message = loadError('protos/api.proto', [join(dir, 'protos')]);
    expect(unresolvedTypePlace(message, join(dir, 'protos/api.proto'), ['protos'])).toMatchObject({
      file: join('protos', 'common', 'ids.proto'),
      line: 4,
      column: 3,
    });
  });

  it('leaves other messages alone, and a type no line uses', () => {
    workdir({ 'a.proto': HEADER });
    const file = join(dir, 'a.proto');
    expect(withUnresolvedTypePlace("illegal token '}' (line 3)", file, [])).toBe(
      "illegal token '}' (line 3)",
    );
    expect(unresolvedTypePlace("no such Type or Enum 'Ghost' in Type .demo.Req", file, [])).toBeUndefined();
  });
});
