/**
 * What the commands read is capped whatever its size says (a device, a FIFO, standard input), and what they print of
 * it cannot forge output lines: control characters from a config or script file are shown escaped.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type CheckReport, MAX_CONFIG_BYTES, runCheck } from '../../src/cli/check.js';
import type { CommandIo } from '../../src/cli/command-io.js';
import { formatAttemptLine, runFlakyServerCommand } from '../../src/cli/flaky-server-command.js';
import type { RecordedAttempt } from '../../src/testing/index.js';
import { type CheckRun, captureRun } from '../helpers/check-run.js';
import { RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'grh-untrusted-input-'));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

const MIB = 1024 * 1024;
const TOO_LARGE_STDIN = `check: cannot read the service config from standard input: it is over the ${MAX_CONFIG_BYTES} bytes (64 MiB) that check reads: a service config is a few kilobytes, is this the right file?\n`;

/** Runs a command with `extra` in its io (standard input), capturing what it prints. */
function run(
  command: (argv: readonly string[], io: CommandIo) => Promise<number>,
  argv: string[],
  extra: Partial<CommandIo> = {},
): Promise<CheckRun> {
  return captureRun((io) => command(argv, io), extra);
}

/** A stream of `chunk` forever, counting what it handed out and whether it was destroyed. */
function endless(chunk: Buffer): { stream: Readable; sent: () => number } {
  let sent = 0;
  const stream = new Readable({
    read() {
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, sent: () => sent };
}

/** A FIFO that a writer fills with `bytes` zero bytes once it is opened (then closes; EPIPE when the reader stops). */
function fifoOf(name: string, bytes: number): { path: string; written: Promise<number> } {
  const path = join(SCRATCH, name);
  execFileSync('mkfifo', [path]);
  const written = new Promise<number>((resolve) => {
    const out = createWriteStream(path);
    let total = 0;
    const chunk = Buffer.alloc(MIB);
    const writeMore = (): void => {
      while (total < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - total));
        total += piece.length;
        if (!out.write(piece)) {
          out.once('drain', writeMore);
          return;
        }
      }
      out.end();
    };
    out.on('error', () => resolve(total)); // EPIPE: the reader stopped
    out.on('close', () => resolve(total));
    out.once('open', writeMore);
  });
  return { path, written };
}

const POSIX = process.platform !== 'win32';

describe('check reads at most 64 MiB, whatever the size says', () => {
  it('stops reading standard input past 64 MiB, destroys it, and says so (exit 1)', async () => {
    const { stream, sent } = endless(Buffer.alloc(MIB, '{'));
    const started = performance.now();
    const result = await run(runCheck, ['-'], { stdin: stream });
    expect(result).toEqual({ code: 1, stdout: '', stderr: TOO_LARGE_STDIN });
    expect(stream.destroyed).toBe(true);
    // read no further than the cap and what the stream buffered ahead
    expect(sent()).toBeLessThanOrEqual(MAX_CONFIG_BYTES + 20 * MIB);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('says so with --json too, as an io-error', async () => {
    const { stream } = endless(Buffer.alloc(MIB, ' '));
    const result = await run(runCheck, ['-', '--json'], { stdin: stream });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(report).toMatchObject({ status: 'io-error', file: '<stdin>' });
    expect(report.error?.message).toContain('over the 67108864 bytes (64 MiB)');
  });

  it('reads a config from a standard input stream, a character split between chunks included', async () => {
    const text = JSON.stringify({
      methodConfig: [{ name: [{ service: 'pkg.Café' }], ...RETRY_UNAVAILABLE_POLICY }],
    });
    const bytes = Buffer.from(text, 'utf8');
    const split = bytes.indexOf(Buffer.from('é', 'utf8')) + 1; // inside the two bytes of é
    const stream = Readable.from([bytes.subarray(0, split), bytes.subarray(split)]);
    const result = await run(runCheck, ['-'], { stdin: stream });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('methodConfig[0]: pkg.Café/*\n');
  });

  it('counts bytes, not characters, of a standard input read whole', async () => {
    const text = 'é'.repeat(MAX_CONFIG_BYTES / 2 + 1); // 32 Mi characters, 64 MiB + 2 bytes
    const result = await run(runCheck, ['-'], { readStdin: async () => text });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `check: cannot read the service config from standard input: it is ${MAX_CONFIG_BYTES + 2} bytes, over the ${MAX_CONFIG_BYTES} (64 MiB) that check reads: a service config is a few kilobytes, is this the right file?\n`,
    );
  });

  it.runIf(POSIX && existsSync('/dev/zero'))('refuses /dev/zero (size 0) once 64 MiB came in', async () => {
    const started = performance.now();
    const result = await run(runCheck, ['/dev/zero']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `check: cannot read the service config file /dev/zero: it is over the ${MAX_CONFIG_BYTES} bytes (64 MiB) that check reads: a service config is a few kilobytes, is this the right file?\n`,
    });
    expect(performance.now() - started).toBeLessThan(5000); // was 7 s, 625 MB, then "Invalid string length"
  });

  it.runIf(POSIX)('refuses a FIFO one byte over 64 MiB, and closes it (the writer gets EPIPE)', async () => {
    const { path, written } = fifoOf('config.fifo', MAX_CONFIG_BYTES + 1 + 8 * MIB);
    const result = await run(runCheck, [path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `check: cannot read the service config file ${path}: it is over the ${MAX_CONFIG_BYTES} bytes (64 MiB) that check reads: a service config is a few kilobytes, is this the right file?\n`,
    );
    expect(await written).toBeLessThan(MAX_CONFIG_BYTES + 8 * MIB);
  });

  it.runIf(POSIX)('reads a config from a FIFO under the cap', async () => {
    const path = join(SCRATCH, 'small.fifo');
    execFileSync('mkfifo', [path]);
    const writer = createWriteStream(path);
    writer.end('{}');
    const result = await run(runCheck, [path]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('valid service config (0 methodConfig entries');
  });
});

describe('flaky-server reads at most 64 MiB of a script file', () => {
  it.runIf(POSIX && existsSync('/dev/zero'))('refuses --script /dev/zero once 64 MiB came in', async () => {
    const started = performance.now();
    const result = await run(runFlakyServerCommand, ['--script', '/dev/zero']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'flaky-server: cannot read script file /dev/zero: it is over the 67108864 bytes (64 MiB) that flaky-server reads: a script file is a few kilobytes, is this the right file?\n',
    });
    expect(performance.now() - started).toBeLessThan(5000); // was 623 MB read, then "Invalid string length"
  });

  it('refuses a regular file over 64 MiB before reading it', async () => {
    const path = join(SCRATCH, 'huge-script.json');
    writeFileSync(path, '');
    execFileSync('truncate', ['-s', String(MAX_CONFIG_BYTES + 1), path]);
    const result = await run(runFlakyServerCommand, ['--script', path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `flaky-server: cannot read script file ${path}: it is 67108865 bytes, over the 67108864 (64 MiB) that flaky-server reads: a script file is a few kilobytes, is this the right file?\n`,
    );
  });
});

/** Characters a printed report must not hold: C0 but the newline, DEL, C1, separators, bidi formatting. */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters the output must not hold
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** Every line is safe to show: no control character, and none starts a CI annotation (`::error ...`). */
function expectSafe(output: string): void {
  expect(output).not.toMatch(UNSAFE);
  for (const line of output.split('\n')) {
    expect(line.trimStart()).not.toMatch(/^::/);
  }
}

const FORGED_SERVICE = 'pkg.S\n::error file=x.json::forged\u001b[31m\u202eevil\u2028';
const FORGED_KEY = 'oops\r\n::warning ::key\u001b]0;title\u0007\u0085\u2066';

describe('check shows the strings of a config with their control characters escaped', () => {
  const config = JSON.stringify({
    methodConfig: [{ name: [{ service: FORGED_SERVICE }], ...RETRY_UNAVAILABLE_POLICY }],
    [FORGED_KEY]: 1,
  });

  it('in the report of a valid config: names and unknown keys', async () => {
    const path = join(SCRATCH, 'forged.json');
    writeFileSync(path, config);
    const result = await run(runCheck, [path]);
    expect(result.code).toBe(0);
    expectSafe(result.stdout);
    expect(result.stdout).toContain(
      'methodConfig[0]: pkg.S\\n::error file=x.json::forged\\u001b[31m\\u202eevil\\u2028/*\n',
    );
    expect(result.stdout).toContain(
      '["oops\\r\\n::warning ::key\\u001b]0;title\\u0007\\u0085\\u2066"]: unknown field "oops\\r\\n::warning ::key\\u001b]0;title\\u0007\\u0085\\u2066" is ignored',
    );
  });

  it('in the errors and warnings of an invalid config (stderr), and in a name from standard input', async () => {
    const invalid = JSON.stringify({
      methodConfig: [{ name: [{ service: FORGED_SERVICE }], timeout: 5 }],
      [FORGED_KEY]: 1,
    });
    const result = await run(runCheck, ['-'], { readStdin: async () => invalid });
    expect(result.code).toBe(1);
    expectSafe(result.stderr);
    expect(result.stderr).toContain(
      'unknown field "oops\\r\\n::warning ::key\\u001b]0;title\\u0007\\u0085\\u2066"',
    );
    expect(result.stderr.split('\n')).toHaveLength(5); // error, warning, summary, note, and the final newline
  });

  it('but --json keeps the strings as they are (JSON escapes them)', async () => {
    const result = await run(runCheck, ['-', '--json'], { readStdin: async () => config });
    expect(result.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON output holds no raw control character
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(report.entries[0]?.names).toEqual([`${FORGED_SERVICE}/*`]);
  });
});

describe('flaky-server shows the text of a script with its control characters escaped', () => {
  it('in the problems of a script file, one line each', async () => {
    const path = join(SCRATCH, 'forged-script.json');
    writeFileSync(
      path,
      JSON.stringify({
        'c1\n::error ::forged\u001b[2J': [{ statsu: 'UNAVAILABLE' }],
        c2: [{ status: 'NOPE' }],
      }),
    );
    const result = await run(runFlakyServerCommand, ['--script', path]);
    expect(result.code).toBe(1);
    expectSafe(result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^flaky-server: .*: "c1\\n::error ::forged\\u001b\[2J"\[0\]: unknown field "statsu"/,
    );
    expect(lines[1]).toMatch(/^flaky-server: .*: "c2"\[0\]: "status" must be/);
  });

  it('in the line logged for an attempt: the scripted details', () => {
    const attempt = {
      method: '/helloworld.Greeter/SayHello',
      callId: 'c\u007f',
      attempt: 1,
      arrivedAt: Date.UTC(2026, 0, 1),
      endedAt: Date.UTC(2026, 0, 1) + 3,
      cancelled: false,
      endedWith: 14,
      endedDetails: 'down\u0085::error ::x\u202e\u2029',
    } as unknown as RecordedAttempt;
    const line = formatAttemptLine(attempt);
    expectSafe(line);
    expect(line).toBe(
      '2026-01-01T00:00:00.000Z call="c\\u007f" attempt=1 helloworld.Greeter/SayHello previous-attempts=- -> UNAVAILABLE "down\\u0085::error ::x\\u202e\\u2029" 3ms\n',
    );
  });
});
