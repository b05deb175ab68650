import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadServiceConfig, loadServiceConfigAsync } from '../../src/config/load-service-config.js';
import { isServiceConfigError, type ServiceConfigError } from '../../src/config/service-config-error.js';

const dir = mkdtempSync(join(tmpdir(), 'grh-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeTemp(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

async function errorOf(fn: () => unknown): Promise<ServiceConfigError> {
  try {
    await fn();
  } catch (error) {
    if (isServiceConfigError(error)) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a ServiceConfigError');
}

const loaders = [
  ['loadServiceConfig', loadServiceConfig],
  ['loadServiceConfigAsync', loadServiceConfigAsync],
] as const;

describe.each(loaders)('%s', (_name, load) => {
  it('loads the examples', async () => {
    const config = await load('examples/service-config.json');
    expect(config.methodConfig).toHaveLength(2);
    expect(config.retryThrottling).toEqual({ maxTokens: 10, tokenRatio: 0.1 });
    const hedging = await load('examples/hedging-config.json');
    expect(hedging.methodConfig[0]?.hedgingPolicy?.hedgingDelayMs).toBe(20);
  });

  it('names a missing file', async () => {
    const file = join(dir, 'missing.json');
    const error = await errorOf(() => load(file));
    expect(error.file).toBe(file);
    expect(error.path).toBe('');
    expect(error.message.startsWith(`${file}: `)).toBe(true);
    expect(error.message).toContain('cannot read');
  });

  it('names where a missing relative path was looked for, and from which working directory', async () => {
    const error = await errorOf(() => loadServiceConfig('no-such-dir/cfg.json'));
    expect(error.message).toContain(
      `(looked for ${join(process.cwd(), 'no-such-dir/cfg.json')}, from the working directory ${process.cwd()})`,
    );
    const absolute = await errorOf(() => loadServiceConfig(join(dir, 'missing.json')));
    expect(absolute.message).not.toContain('looked for');
  });

  it('says that JSON text given for the path is no file name, and what reads it', async () => {
    const error = await errorOf(() => load(' {"methodConfig": []}'));
    expect(error.message).toMatch(/^ \{"methodConfig": \[\]\}: cannot read the service config file: ENOENT/);
    expect(error.message).toMatch(
      /; the path given is JSON text, not a file name: parseServiceConfig\(text\) reads a config from its text$/,
    );
    const missing = await errorOf(() => load(join(dir, '[x].json')));
    expect(missing.message).not.toContain('JSON text');
  });

  it.each(['{"methodConfig": []}', '[]', '[1, 2]', '{"methodConfig": []} '])(
    'says so of any JSON object or array text given for the path: %j',
    async (text) => {
      const error = await errorOf(() => load(text));
      expect(error.message).toMatch(
        /; the path given is JSON text, not a file name: parseServiceConfig\(text\)/,
      );
    },
  );

  it.each(['[x].json', 'configs/[prod]'])(
    'says nothing of JSON text for a missing path that only begins or ends with a bracket: %j',
    async (file) => {
      const error = await errorOf(() => load(file));
      // The message ends with where the file was looked for, with nothing after it.
      expect(error.message.endsWith(`from the working directory ${process.cwd()})`)).toBe(true);
    },
  );

  it('ends the message of a missing absolute path with the reason, and nothing after it', async () => {
    const file = join(dir, 'missing.json');
    const error = await errorOf(() => load(file));
    expect(error.message.endsWith(`no such file or directory, open '${file}'`)).toBe(true);
  });

  it('names the file and the path of an invalid config', async () => {
    const error = await errorOf(() => load('test/fixtures/bad-service-config.json'));
    expect(error.file).toBe('test/fixtures/bad-service-config.json');
    expect(error.path).toBe('methodConfig[0].retryPolicy.maxAttempts');
    expect(error.message).toBe(
      'test/fixtures/bad-service-config.json:6:24: methodConfig[0].retryPolicy.maxAttempts: ' +
        'must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)',
    );
  });

  it('keeps every problem with its line and column', async () => {
    const file = writeTemp(
      'two.json',
      '{\n  "retryThrottling": {\n    "maxTokens": 0,\n    "tokenRatio": -1\n  }\n}',
    );
    const error = await errorOf(() => load(file));
    expect(error.errors).toEqual([
      { path: 'retryThrottling.maxTokens', line: 3, column: 18, message: expect.stringContaining('got 0') },
      { path: 'retryThrottling.tokenRatio', line: 4, column: 19, message: expect.stringContaining('got -1') },
    ]);
    expect(error.message.split('\n')[0]).toBe(`${file}:3:18: retryThrottling.maxTokens: ${error.detail}`);
    expect(error.message.split('\n')[2]).toBe(
      `    ${file}:4:19: retryThrottling.tokenRatio: ${error.errors[1]?.message}`,
    );
  });

  it('names the file and the position of a JSON syntax error', async () => {
    const file = writeTemp('syntax.json', '{\n  "methodConfig": [}\n');
    const error = await errorOf(() => load(file));
    expect(error.file).toBe(file);
    expect(error.message.startsWith(`${file}:2:20: invalid JSON at line 2, column 20`)).toBe(true);
  });

  it.each([
    ['UTF-16LE with its byte-order mark (Windows PowerShell 5 `>` and Out-File)', 'utf-16le', true],
    ['UTF-16BE with its byte-order mark', 'utf-16be', true],
    ['UTF-16LE without a byte-order mark', 'utf-16le', false],
  ])('says a file in %s is not UTF-8', async (_label, encoding, bom) => {
    // Read as UTF-8 it was "found \"\ufffd\ufffd\"" or "found \"\\u0000\"", which names no cause.
    const text = `${bom ? '\uFEFF' : ''}{"methodConfig": []}`;
    const bytes =
      encoding === 'utf-16le' ? Buffer.from(text, 'utf16le') : Buffer.from(text, 'utf16le').swap16();
    const file = join(dir, `utf16-${encoding}-${bom}.json`);
    writeFileSync(file, bytes);
    const error = await errorOf(() => load(file));
    expect(error.message).toMatch(/^.*: invalid JSON at line 1, column \d+ \(position \d+\): /);
    expect(error.message).toContain('the text is UTF-16, not UTF-8');
    expect(error.message).toContain('save the file as UTF-8');
  });

  it('accepts a byte-order mark', async () => {
    const file = writeTemp('bom.json', '\uFEFF{"retryThrottling": {"maxTokens": 3, "tokenRatio": 0.5466}}');
    expect((await load(file)).retryThrottling).toEqual({ maxTokens: 3, tokenRatio: 0.546 });
  });
});
