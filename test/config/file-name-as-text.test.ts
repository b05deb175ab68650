/**
 * `fileNameAdvice`: when JSON text that does not parse is a file name, the syntax error says to load the file.
 */
import { describe, expect, it } from 'vitest';
import { fileNameAdvice } from '../../src/config/file-name-as-text.js';

describe('fileNameAdvice', () => {
  it.each([
    'service-config.json',
    'Config.JSON',
    'retry.json5',
    '  padded.json  ',
    './service-config',
    '../configs/retry',
    '/etc/grpc/retry',
    '~/retry',
    'C:\\configs\\retry',
    'd:/configs/retry',
    '.\\retry',
  ])('%j: advises loadServiceConfig with the name, trimmed', (text) => {
    const name = text.trim();
    expect(fileNameAdvice(text)).toBe(
      `a string is read as the service config's JSON text, and ${JSON.stringify(name)} looks like a file name: read the file with loadServiceConfig(${JSON.stringify(name)}) and pass what it returns`,
    );
  });

  it.each([
    '{"methodConfig": [}',
    'methodConfig',
    'config.jsonc.bak',
    'my config.json',
    '"quoted.json"',
    '[a.json]',
    'a.json\nb.json',
    './{"methodConfig": []}',
    '/"x"',
    'x.json.txt',
    'json',
    '.json',
    'a/b',
  ])('%j: no advice', (text) => {
    expect(fileNameAdvice(text)).toBeUndefined();
  });
});
