/**
 * The CLI's own process, with a reader that stops early (`grpc-retry-hedging check big.json | head -1`): the rest
 * of the output is dropped, and the command ends with its own exit code, without a stack trace.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
let dir: string;
let bigConfig: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'grpc-retry-hedging-closed-pipe-'));
  bigConfig = join(dir, 'big.json');
  // Enough entries that the report outgrows a pipe's 64 KiB buffer, so writes go on after the reader has gone.
  const methodConfig = Array.from({ length: 400 }, (_, i) => ({
    name: [{ service: `example.Service${i}` }],
    ...RETRY_UNAVAILABLE_POLICY,
  }));
  writeFileSync(bigConfig, JSON.stringify({ methodConfig }));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI and closes its stdout after the first chunk; resolves with its exit code and stderr. */
function runWithEarlyClose(
  args: string[],
): Promise<{ code: number | null; stderr: string; firstChunk: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let firstChunk = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.stdout.once('data', (chunk: Buffer) => {
      firstChunk = chunk.toString('utf8');
      child.stdout.destroy();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, firstChunk }));
  });
}

describe('a reader that closes the pipe early', () => {
  it.each([[[]], [['--json']]])(
    'check %j: exits 0 with no stack trace',
    async (flags) => {
      const { code, stderr, firstChunk } = await runWithEarlyClose(['check', ...flags, bigConfig]);
      expect(firstChunk.length).toBeGreaterThan(0);
      expect(stderr).not.toMatch(/EPIPE|Unhandled|at /);
      expect(code).toBe(0);
    },
    30_000,
  );
});
