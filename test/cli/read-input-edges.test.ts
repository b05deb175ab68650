/**
 * Edges of the capped input reading, with small caps: an input of exactly the cap is read, one byte more is
 * refused; text chunks are counted in bytes; a stream that ended is left to its owner.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { InputTooLargeError, readFileCapped, readStreamCapped } from '../../src/cli/read-input.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-read-input-edges-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

describe('readStreamCapped', () => {
  it('reads a stream of exactly the cap, and refuses one byte more (its size unknown)', async () => {
    await expect(readStreamCapped(Readable.from([Buffer.from('{"a":'), Buffer.from('1}')]), 7)).resolves.toBe(
      '{"a":1}',
    );
    const over = readStreamCapped(Readable.from([Buffer.from('{"a":'), Buffer.from('12}')]), 7);
    await expect(over).rejects.toBeInstanceOf(InputTooLargeError);
    await expect(over).rejects.toMatchObject({ size: undefined, maxBytes: 7 });
  });

  it('reads a stream of text chunks (a stream with an encoding set), counting their bytes', async () => {
    await expect(readStreamCapped(Readable.from(['{"é":', '"ü"}']), 11)).resolves.toBe('{"é":"ü"}');
    // Two characters, four bytes.
    await expect(readStreamCapped(Readable.from(['éé']), 3)).rejects.toBeInstanceOf(InputTooLargeError);
    const utf8 = Readable.from([Buffer.from('{"name": "café"}')]);
    utf8.setEncoding('utf8');
    await expect(readStreamCapped(utf8, 17)).resolves.toBe('{"name": "café"}');
  });

  it('leaves a stream that ended, even at exactly the cap, to its owner (not destroyed)', async () => {
    for (const text of ['abc', 'abcd']) {
      const stream = new Readable({ autoDestroy: false, read() {} });
      stream.push(text);
      stream.push(null);
      await expect(readStreamCapped(stream, 4)).resolves.toBe(text);
      expect(stream.destroyed).toBe(false);
    }
  });

  it('destroys a stream that passes the cap, and stops reading it', async () => {
    let pulls = 0;
    const stream = new Readable({
      autoDestroy: false,
      read() {
        pulls += 1;
        this.push(Buffer.alloc(4));
      },
    });
    await expect(readStreamCapped(stream, 10)).rejects.toBeInstanceOf(InputTooLargeError);
    expect(stream.destroyed).toBe(true);
    expect(pulls).toBeLessThan(10);
  });
});

describe('readFileCapped', () => {
  it('reads a regular file of exactly the cap, and refuses one byte more by its size', async () => {
    const exact = join(SCRATCH, 'exact.json');
    writeFileSync(exact, '{"a":1}');
    await expect(readFileCapped(exact, 7)).resolves.toBe('{"a":1}');
    const over = join(SCRATCH, 'over.json');
    writeFileSync(over, '{"a":12}');
    const refused = readFileCapped(over, 7);
    await expect(refused).rejects.toBeInstanceOf(InputTooLargeError);
    await expect(refused).rejects.toMatchObject({ size: 8, maxBytes: 7 });
  });

  it('names the file in the error of one that does not exist', async () => {
    const missing = join(SCRATCH, 'missing.json');
    await expect(readFileCapped(missing, 7)).rejects.toThrow(
      `ENOENT: no such file or directory, open '${missing}'`,
    );
  });
});
