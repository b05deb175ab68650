/**
 * Reading service configs from JSON files.
 */

import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { errorMessage } from '../util/error-message.js';
import { parseServiceConfigFrom } from './parse-service-config.js';
import { describeValue, isServiceConfigError, ServiceConfigError } from './service-config-error.js';
import type { ServiceConfig } from './types.js';

/**
 * Reads and validates a service config file synchronously.
 *
 * @param file Path of a JSON service config.
 * @returns The normalized config.
 * @throws ServiceConfigError with `file` set and a message starting with the file name, when the file cannot be
 *   read, is not valid JSON, or is not a valid service config; `errors` lists every problem with its line and
 *   column. TypeError when `file` is not a string (a file URL: pass `fileURLToPath(url)`).
 */
export function loadServiceConfig(file: string): ServiceConfig {
  checkFileArgument('loadServiceConfig', file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw readError(file, error);
  }
  return parseWithFile(text, file);
}

/**
 * Reads and validates a service config file.
 *
 * @param file Path of a JSON service config.
 * @returns The normalized config.
 * @throws ServiceConfigError (as a rejection) with `file` set and a message starting with the file name, when the
 *   file cannot be read, is not valid JSON, or is not a valid service config. TypeError (also as a rejection) when
 *   `file` is not a string (a file URL: pass `fileURLToPath(url)`).
 */
export async function loadServiceConfigAsync(file: string): Promise<ServiceConfig> {
  checkFileArgument('loadServiceConfigAsync', file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw readError(file, error);
  }
  return parseWithFile(text, file);
}

/** A path is a string (a config object goes to parseServiceConfig instead). */
function checkFileArgument(caller: string, file: unknown): void {
  if (typeof file === 'string') {
    return;
  }
  const wrong = `${caller}: file must be the path of a JSON service config file, got`;
  // The other forms of a path node:fs takes: `new URL('./config.json', import.meta.url)` in an ES module, a Buffer.
  if (file instanceof URL) {
    throw new TypeError(`${wrong} a URL (${file.href}): pass fileURLToPath(url) from node:url`);
  }
  if (Buffer.isBuffer(file)) {
    throw new TypeError(`${wrong} a Buffer: pass the path as a string (buffer.toString())`);
  }
  const advice =
    typeof file === 'object' && file !== null
      ? ': for a config already in memory, call parseServiceConfig instead'
      : '';
  throw new TypeError(`${wrong} ${describeValue(file)}${advice}`);
}

function parseWithFile(text: string, file: string): ServiceConfig {
  try {
    return parseServiceConfigFrom(text, file);
  } catch (error) {
    if (isServiceConfigError(error)) {
      throw new ServiceConfigError(error.path, error.detail, {
        file,
        cause: error.cause,
        errors: error.errors,
      });
    }
    throw error;
  }
}

function readError(file: string, error: unknown): ServiceConfigError {
  // A relative path is read from the working directory, which is often not where the user thinks: name both.
  const where = isAbsolute(file)
    ? ''
    : ` (looked for ${resolve(file)}, from the working directory ${process.cwd()})`;
  // The config's text itself, handed over for its path (parseServiceConfig says the converse of a file name).
  const text = /^\s*(\{[\s\S]*\}|\[[\s\S]*\])\s*$/.test(file)
    ? '; the path given is JSON text, not a file name: parseServiceConfig(text) reads a config from its text'
    : '';
  return new ServiceConfigError(
    '',
    `cannot read the service config file: ${errorMessage(error)}${where}${text}`,
    {
      file,
      cause: error,
    },
  );
}
