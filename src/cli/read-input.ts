/**
 * Reading a command's input file (or standard input) with a byte cap: whatever a file's size says (`/dev/zero`, a
 * FIFO, `/proc` files report 0 or nothing), reading stops once the input passes the cap, and the stream is closed.
 */

import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** The input was larger than the cap: `size` is its size when known (a regular file's), else undefined. */
export class InputTooLargeError extends Error {
  constructor(
    readonly size: number | undefined,
    readonly maxBytes: number,
  ) {
    super(
      size === undefined
        ? `it is over the ${maxBytes} bytes that are read`
        : `it is ${size} bytes, over the ${maxBytes} that are read`,
    );
  }
}

/**
 * The text (UTF-8) of `stream`, read a chunk at a time. Once more than `maxBytes` came in, the stream is destroyed
 * (a file closed, a pipe's writer gets EPIPE) and the read fails with an {@link InputTooLargeError}: at most
 * `maxBytes` plus one chunk is ever held.
 */
export async function readStreamCapped(stream: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
      total += bytes.length;
      if (total > maxBytes) {
        throw new InputTooLargeError(undefined, maxBytes);
      }
      chunks.push(bytes);
    }
  } finally {
    // Leaving the loop early destroys the stream already; a stream that ended is left as it is.
    if (total > maxBytes) {
      stream.destroy();
    }
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/**
 * The text (UTF-8) of the file at `path`, refused with an {@link InputTooLargeError} when it is over `maxBytes`:
 * a regular file before it is read (by its size), any other (a device, a FIFO, a file whose size is not known) once
 * that many bytes came in. Errors name the file as `readFile`'s do (`ENOENT: ..., open 'x'`).
 */
export async function readFileCapped(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r');
  let stream: Readable;
  try {
    const info = await handle.stat();
    if (info.isFile() && info.size > maxBytes) {
      throw new InputTooLargeError(info.size, maxBytes);
    }
    stream = handle.createReadStream();
  } catch (error) {
    await handle.close();
    throw error;
  }
  // The stream closes the file when it ends or is destroyed.
  return readStreamCapped(stream, maxBytes);
}
