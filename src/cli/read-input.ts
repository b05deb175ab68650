/**
 * Reading a command's input file (or standard input) with a byte cap: whatever a file's size says (`/dev/zero`, a
 * FIFO, `/proc` files report 0 or nothing), reading stops once the input passes the cap, and the stream is closed.
 */

import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/**
 * The largest input a command reads (64 MiB): a service config or a script file is a few kilobytes, and one far
 * larger is most likely the wrong file; refusing it beats running out of memory. A regular file is refused by its
 * size before it is read; standard input, a device or a FIFO once that many bytes came in (reading stops there).
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * Why an input too large was refused, in the words of the command (`check`) that reads that kind of input (`a
 * service config`): its size when known, else that it passed the cap.
 */
export function tooLargeMessage(error: InputTooLargeError, command: string, kind: string): string {
  const what =
    error.size === undefined
      ? `it is over the ${error.maxBytes} bytes`
      : `it is ${error.size} bytes, over the ${error.maxBytes}`;
  return `${what} (64 MiB) that ${command} reads: ${kind} is a few kilobytes, is this the right file?`;
}

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
