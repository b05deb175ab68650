/**
 * Edges of the CLI's `flaky-server` command: the bounds of its numeric options, what the host option binds, script
 * files that are not objects or hold entries that are not, problems of fields together, the order of duplicate-key
 * warnings, start errors in the command's words, grpc-js's own logging around the bind, SIGTERM, what it leaves
 * on the io it is given, and the attempt log lines it prints.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandIo } from '../../src/cli/command-io.js';
import {
  formatAttemptLine,
  runFlakyServerCommand,
  startErrorMessage,
} from '../../src/cli/flaky-server-command.js';
import { CALL_ID_METADATA_KEY, loadFlakyTestService, type RecordedAttempt } from '../../src/testing/index.js';
import { CapturedIo, startCommand as start, stopRuns } from '../helpers/flaky-server-command-run.js';

const ORDERS = 'test/testing/fixtures/orders.proto';
const SHOP = 'test/testing/fixtures/shop-orders.proto';
const BILLING = 'test/testing/fixtures/billing-orders.proto';
const LISTENING = /^flaky server listening on (127\.0\.0\.1:\d+)$/m;
/** An address no interface of this machine has (TEST-NET-1): binding it fails at once, without a network. */
const UNBINDABLE_HOST = '192.0.2.1';

interface UnaryResult {
  error: grpc.ServiceError | null;
  res?: { payload: string; attempt: number } | undefined;
}

let dir: string;
/**
 * Runs started with an io that has no abort signal, with the SIGTERM listener each added: a test calls that
 * listener, not `process.emit('SIGTERM')`, which would reach the test runner's own listeners too.
 */
const signalOnly: Array<{ exit: Promise<number>; stop: () => void }> = [];

/** The SIGTERM listeners added since `before`. */
function sigtermListenersSince(before: readonly unknown[]): Array<(signal: NodeJS.Signals) => void> {
  return process.listeners('SIGTERM').filter((listener) => !before.includes(listener));
}

function script(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

type UnaryMethod = (
  req: { payload: string },
  md: grpc.Metadata,
  options: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: { payload: string; attempt: number }) => void,
) => grpc.ClientUnaryCall;

/** Calls FlakyTest/Unary; `onHeaders` is told once the server sent the response headers. */
function unary(
  address: string,
  callId: string,
  options: { payload?: string; deadlineMs?: number; onHeaders?: () => void } = {},
): Promise<UnaryResult> {
  const Service = loadFlakyTestService();
  const client = new Service(address, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
  const metadata = new grpc.Metadata();
  if (callId !== '') metadata.set(CALL_ID_METADATA_KEY, callId);
  const callOptions: grpc.CallOptions =
    options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs };
  const method = (client as unknown as Record<string, UnaryMethod>).Unary!.bind(client);
  return new Promise((resolve) => {
    const call = method({ payload: options.payload ?? 'x' }, metadata, callOptions, (error, res) => {
      client.close();
      resolve({ error, res });
    });
    call.on('metadata', () => options.onHeaders?.());
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flaky-cli-edges-'));
});

afterEach(async () => {
  await stopRuns();
  for (const { exit, stop } of signalOnly.splice(0)) {
    stop();
    await exit;
  }
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('flaky-server options: bounds', () => {
  it.each([
    [['--port', '-0'], /--port must be an integer 0\.\.65535, got "-0"/],
    [['--port', '0.0'], /--port must be an integer 0\.\.65535, got "0\.0"/],
    [
      ['--max-receive-message-size', '-0'],
      /--max-receive-message-size must be a number of bytes 0\.\.2147483647, got "-0"/,
    ],
    [
      ['--max-receive-message-size', '0.0'],
      /--max-receive-message-size must be a number of bytes 0\.\.2147483647, got "0\.0"/,
    ],
    [
      ['--max-receive-message-size', '2147483648'],
      /--max-receive-message-size must be a number of bytes 0\.\.2147483647, got "2147483648"/,
    ],
  ])('exits with 2 on %j', async (argv, message) => {
    const { io, exit } = start(argv);
    // a server that starts instead fails the test at once
    const started = io.waitForOut(LISTENING).then(
      () => 'started',
      () => 'not started',
    );
    expect(await Promise.race([exit, started])).toBe(2);
    expect(io.err).toMatch(new RegExp(`^flaky-server: ${message.source}\\n\\nUsage: `));
    expect(io.out).toBe('');
  });

  it('takes port 65535, the last port: it tries to bind it', async () => {
    const { io, exit } = start(['--host', UNBINDABLE_HOST, '--port', '65535']);
    expect(await exit).toBe(1);
    expect(io.err).toMatch(/^flaky-server: cannot bind 192\.0\.2\.1:65535: /);
  });

  it('takes a receive limit of 0 bytes: every non-empty request is refused', async () => {
    const { io } = start(['--max-receive-message-size', '0']);
    const [, address] = await io.waitForOut(LISTENING);
    expect((await unary(address!, 'c')).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('takes a receive limit of 2147483647 bytes, the largest', async () => {
    const { io } = start(['--max-receive-message-size', '2147483647']);
    const [, address] = await io.waitForOut(LISTENING);
    expect((await unary(address!, 'c', { payload: 'big' })).res?.payload).toBe('big');
    expect(io.err).toBe('');
  });

  it("keeps grpc-js's 4 MiB receive limit without --max-receive-message-size", async () => {
    // A small scripted answer: the echo of a request over 4 MiB would be refused by the client's own limit, so
    // only the server's refusal of the request fails the call.
    const file = script('small-answer.json', '{"big": [{"response": {"payload": "small"}}]}');
    const { io } = start(['--quiet', '--script', file]);
    const [, address] = await io.waitForOut(LISTENING);
    const { error } = await unary(address!, 'big', { payload: 'x'.repeat(4 * 1024 * 1024 + 1024) });
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/^Received message larger than max \(\d+ vs 4194304\)$/);
  });

  it('binds the --host given', async () => {
    const { io, exit } = start(['--host', UNBINDABLE_HOST]);
    expect(await exit).toBe(1);
    // port 0 picks a free port: the bind failing is no sign of another process on it
    expect(io.err).toBe(
      'flaky-server: cannot bind 192.0.2.1:0: No address added out of total 1 resolved errors: [listen EADDRNOTAVAIL: address not available 192.0.2.1]\n',
    );
    expect(io.out).toBe('');
  });
});

describe('flaky-server start errors', () => {
  it('reports a --proto that cannot be loaded in its own words, without the library prefix or a port hint', async () => {
    const { io, exit } = start(['--proto', 'missing.proto', '--port', '65535', '--script', 'nope.json']);
    expect(await exit).toBe(1);
    expect(io.err).toBe(
      `flaky-server: cannot read the proto file missing.proto: not found in the working directory (${process.cwd()})\n`,
    );
    expect(io.out).toBe('');
  });

  it('asks whether another process holds the port only when the error names no other cause', () => {
    const args = { port: 50051, scriptFile: undefined };
    const bind = 'FlakyServer: cannot bind 192.0.2.1:50051: No address added out of total 1 resolved';
    expect(startErrorMessage(bind, args)).toBe(
      'cannot bind 192.0.2.1:50051: No address added out of total 1 resolved (is another process listening on port 50051?)',
    );
    for (const cause of [
      'EADDRINUSE: address already in use',
      'EADDRNOTAVAIL: address not available',
      'EACCES: permission denied',
      'EPERM: operation not permitted',
      'ENOTFOUND: getaddrinfo failed',
    ]) {
      expect(startErrorMessage(`${bind} [listen ${cause} 192.0.2.1:50051]`, args)).toBe(
        `cannot bind 192.0.2.1:50051: No address added out of total 1 resolved [listen ${cause} 192.0.2.1:50051]`,
      );
    }
  });

  it('gives no port hint when the host does not parse: no other process is to blame', async () => {
    const { io, exit } = start(['--host', '[::1', '--port', '50051']);
    expect(await exit).toBe(1);
    expect(io.err).toMatch(/^flaky-server: cannot bind \S+: .*Failed to parse DNS address/);
    expect(io.err).not.toContain('another process');
  });

  it('gives no port hint for a message that names no failed listen (a name that did not resolve)', () => {
    const args = { port: 50051, scriptFile: undefined };
    expect(
      startErrorMessage(
        'FlakyServer: cannot bind nonexistent.invalid:50051: Name resolution failed for target dns:nonexistent.invalid:50051',
        args,
      ),
    ).toBe(
      'cannot bind nonexistent.invalid:50051: Name resolution failed for target dns:nonexistent.invalid:50051',
    );
  });

  it('says a --proto file of messages only holds no service, with advice for the command line', async () => {
    const file = script('messages-only.proto', 'syntax = "proto3";\npackage x;\nmessage M {}\n');
    const expected = `flaky-server: proto file ${file} holds no service (give the .proto files that declare the services to serve; the files they import are loaded with them)\n`;
    const { io, exit } = start(['--proto', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(expected);
    // Without FlakyTest too: refused by the file's name, so the server is never left with nothing to serve.
    const alone = start(['--no-flaky-test', '--proto', file]);
    expect(await alone.exit).toBe(1);
    expect(alone.io.err).toBe(expected);
  });

  it.each([['FlakyServer.start: methodScripts: x.proto'], ['cannot bind x.proto']])(
    'prints a --proto file %j that cannot be read as named, neither placed in the script file nor with a port hint',
    async (proto) => {
      const { io, exit } = start(['--proto', proto, '--port', '65535', '--script', 'nope.json']);
      expect(await exit).toBe(1);
      expect(io.err).toBe(
        `flaky-server: cannot read the proto file ${proto}: not found in the working directory (${process.cwd()})\n`,
      );
      expect(io.out).toBe('');
    },
  );

  it('gives no port hint for a bind failure on port 0 that names no cause (a host it cannot parse)', async () => {
    const { io, exit } = start(['--host', '[::1']);
    expect(await exit).toBe(1);
    // port 0 picks a free port: no other process can hold it
    expect(io.err).toMatch(/^flaky-server: cannot bind \[::1:0: [^\n]*\n$/);
    expect(io.err).not.toContain('another process');
    expect(io.out).toBe('');
  });

  it('startErrorMessage drops a qualified library prefix when no script file places the problem', () => {
    const noScript = { port: 0, scriptFile: undefined };
    expect(startErrorMessage('FlakyServer.start: methodScripts: no served method "x/y"', noScript)).toBe(
      'methodScripts: no served method "x/y"',
    );
    expect(startErrorMessage('FlakyServer.stop: graceMs must be a number', noScript)).toBe(
      'graceMs must be a number',
    );
  });
});

describe('flaky-server --script: values that are not what they should be', () => {
  const notObject =
    'must be a JSON object mapping call ids (or methods, "pkg.Service/Method") to arrays of attempt scripts';

  it.each([['5'], ['null'], ['"c1"']])('refuses a script file whose value is %s', async (content) => {
    const file = script('root.json', content);
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(`flaky-server: ${file}:1:1: ${notObject}\n`);
  });

  it.each([
    ['null', 'null'],
    ['"ab"', 'string'],
    ['[1]', 'an array'],
    ['5', 'number'],
  ])('refuses an attempt script that is %s, in one line at the entry', async (entry, got) => {
    const file = script('entry.json', `{"c": [${entry}]}`);
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(`flaky-server: ${file}:1:8: "c"[0]: must be an object, got ${got}\n`);
  });

  it("refuses an empty key at its place in the file, in the command's words", async () => {
    const file = script('empty-key.json', '{\n  "": [{}]\n}');
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(
      `flaky-server: ${file}:2:3: an empty key names no call id and no method: calls sent without x-flaky-call-id play their method's script, under a "pkg.Service/Method" key\n`,
    );
  });

  it('refuses fields each good alone but wrong together, placed at the attempt', async () => {
    const file = script(
      'together.json',
      '{"c": [{"pushback": "10", "trailers": {"grpc-retry-pushback-ms": "5"}}]}',
    );
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(
      `flaky-server: ${file}:1:8: "c"[0]: "trailers.grpc-retry-pushback-ms" and "pushback" both set the grpc-retry-pushback-ms trailer ("pushback" would replace the scripted value silently): give one of them\n`,
    );
    expect(io.out).toBe('');
  });

  it('places a retryInfoMs without a status at its key', async () => {
    const file = script('retry-info.json', '{"c": [{"retryInfoMs": 5}]}');
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toMatch(
      new RegExp(
        `^flaky-server: ${file}:1:9: "c"\\[0\\]: "retryInfoMs" requires a non-OK status, got no "status"[^\\n]*\\n$`,
      ),
    );
  });

  it('judges retryInfoMs without a bad status: each problem once, at its own key', async () => {
    const file = script('retry-info-bad-status.json', '{"c": [{"status": "NOPE", "retryInfoMs": 5}]}');
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    const lines = io.err.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^flaky-server: ${file}:1:9: "c"\\[0\\]: "status" must be a grpc status code`),
      ),
      expect.stringMatching(
        new RegExp(`^flaky-server: ${file}:1:27: "c"\\[0\\]: "retryInfoMs" requires a non-OK status`),
      ),
    ]);
  });

  it("answers a call id's scripted response", async () => {
    const file = script('response.json', '{"c": [{"response": {"payload": "scripted"}}]}');
    const { io } = start(['--script', file]);
    const [, address] = await io.waitForOut(LISTENING);
    expect((await unary(address!, 'c')).res?.payload).toBe('scripted');
    expect(io.err).toBe('');
  });
});

describe('flaky-server --script: warnings', () => {
  it('gives duplicate-key warnings in the order of the keys that count', async () => {
    const file = script(
      'thrice.json',
      ['{', '  "a": [{}],', '  "b": [{}],', '  "a": [{}],', '  "b": [{}],', '  "a": [{}]', '}'].join('\n'),
    );
    const { io } = start(['--script', file]);
    await io.waitForOut(LISTENING);
    expect(io.err.trimEnd().split('\n')).toEqual([
      `flaky-server: warning: ${file}:5:3: b: is written more than once in its object (first at line 3, column 3): JSON keeps only the last one, so the one at line 3 is ignored`,
      `flaky-server: warning: ${file}:6:3: a: is written 3 times in its object (first at line 2, column 3): JSON keeps only the last one, so the 2 before it, at lines 2 and 4, are ignored`,
    ]);
  });

  it('names every service a call-id key fits when two served services share its name', async () => {
    const file = script('service-key.json', '{\n  "OrderService": [{}]\n}');
    const { io } = start(['--proto', SHOP, '--proto', BILLING, '--script', file]);
    await io.waitForOut(LISTENING);
    expect(io.err).toBe(
      `flaky-server: warning: ${file}:2:3: "OrderService" scripts the calls whose x-flaky-call-id is "OrderService", not a method; a key scripts one method: to script the methods of acme.shop.v1.OrderService or acme.billing.v1.OrderService, write one key per method, such as "acme.shop.v1.OrderService/GetOrder"\n`,
    );
  });
});

describe('flaky-server output', () => {
  it('names each served service once, comma-separated, and warns of nothing without a script file', async () => {
    const { io } = start(['--proto', ORDERS]);
    await io.waitForOut(/^serving /m);
    expect(io.out.split('\n')[1]).toBe(
      'serving grpc_retry_hedging.testing.v1.FlakyTest, fixture.orders.v1.OrderService',
    );
    expect(io.err).toBe('');
  });

  it('logs an attempt that outlived its deadline as such, not as cut off by the stop', async () => {
    const file = script('slow.json', '{"slow": [{"delayMs": 60000}]}');
    const { io } = start(['--script', file]);
    const [, address] = await io.waitForOut(LISTENING);
    const { error } = await unary(address!, 'slow', { deadlineMs: 300 });
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await io.waitForOut(/ call="slow" /, 10_000);
    expect(io.out).toMatch(
      / call="slow" attempt=1 \S+ previous-attempts=- -> DEADLINE_EXCEEDED \(its deadline passed\) \d+ms\n/,
    );
  });

  it('logs an attempt the stop cuts off as cut off by the server stopping', async () => {
    const file = script('held.json', '{"held": [{"sendHeaders": true, "delayMs": 60000}]}');
    const { io, exit } = start(['--script', file]);
    const [, address] = await io.waitForOut(LISTENING);
    let headers!: () => void;
    const headersSent = new Promise<void>((resolve) => {
      headers = resolve;
    });
    const call = unary(address!, 'held', { onHeaders: headers });
    await headersSent;
    io.controller.abort();
    expect(await exit).toBe(0);
    await call;
    expect(io.out).toMatch(
      / call="held" attempt=1 \S+ previous-attempts=- -> cut off by the server stopping \d+ms\nflaky server stopped\n$/,
    );
  });

  it('logs an attempt its client cancels while the server stops as cancelled by its client', async () => {
    const file = script('held-cancel.json', '{"held": [{"sendHeaders": true, "delayMs": 60000}]}');
    const { io, exit } = start(['--script', file]);
    const [, address] = await io.waitForOut(LISTENING);
    const Service = loadFlakyTestService();
    const client = new Service(address!, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
    const metadata = new grpc.Metadata();
    metadata.set(CALL_ID_METADATA_KEY, 'held');
    const method = (client as unknown as Record<string, UnaryMethod>).Unary!.bind(client);
    let call!: grpc.ClientUnaryCall;
    const ended = new Promise<grpc.ServiceError | null>((resolve) => {
      call = method({ payload: 'x' }, metadata, {}, (error) => resolve(error));
    });
    await new Promise<void>((resolve) => call.on('metadata', () => resolve()));
    io.controller.abort(); // the server now stops, with 200 ms of grace for the calls in flight
    call.cancel();
    expect((await ended)?.code).toBe(grpc.status.CANCELLED);
    expect(await exit).toBe(0);
    client.close();
    expect(io.out).toMatch(/ call="held" attempt=1 \S+ previous-attempts=- -> CANCELLED by client \d+ms\n/);
    expect(io.out).not.toContain('cut off by the server stopping');
  });

  it('stops on SIGTERM, also without an abort signal, and leaves no signal listener behind', async () => {
    const captured = new CapturedIo();
    const io: CommandIo = { stdout: captured.stdout, stderr: captured.stderr };
    const before = { SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
    const exit = runFlakyServerCommand([], io);
    const stop = () => {
      for (const listener of sigtermListenersSince(before.SIGTERM)) listener('SIGTERM');
    };
    signalOnly.push({ exit, stop });
    await captured.waitForOut(LISTENING);
    expect(sigtermListenersSince(before.SIGTERM)).toHaveLength(1);
    signalOnly.splice(0);
    stop();
    expect(await exit).toBe(0);
    expect(captured.out).toMatch(/flaky server stopped\n$/);
    expect(sigtermListenersSince(before.SIGTERM)).toEqual([]);
    expect(process.listenerCount('SIGTERM')).toBe(before.SIGTERM.length);
    expect(process.listenerCount('SIGINT')).toBe(before.SIGINT);
  });
});

describe('flaky-server and the io it is given', () => {
  it('stopped by SIGTERM, leaves no listener on the abort signal it was given', async () => {
    const before = process.listeners('SIGTERM');
    const { io, exit } = start(['--quiet']);
    await io.waitForOut(LISTENING);
    expect(getEventListeners(io.signal, 'abort')).toHaveLength(1);
    for (const listener of sigtermListenersSince(before)) listener('SIGTERM');
    expect(await exit).toBe(0);
    expect(getEventListeners(io.signal, 'abort')).toEqual([]);
  });

  it("lets an error of the io's stdout through as it is, not as a usage error", async () => {
    const failure = new Error('stdout is gone');
    const captured = new CapturedIo();
    const io: CommandIo = {
      stdout: () => {
        throw failure;
      },
      stderr: captured.stderr,
    };
    await expect(runFlakyServerCommand(['--help'], io)).rejects.toBe(failure);
    expect(captured.err).toBe('');
  });
});

describe("grpc-js's own log lines", () => {
  const grpcErrorLines = (spy: { mock: { calls: unknown[][] } }): string[] =>
    spy.mock.calls.map((args) => String(args[0])).filter((line) => line.startsWith('E '));

  it('keeps quiet its bind error unless GRPC_VERBOSITY is set, and logs its errors again afterwards', async () => {
    vi.stubEnv('GRPC_VERBOSITY', undefined);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { exit } = start(['--host', UNBINDABLE_HOST]);
    expect(await exit).toBe(1);
    expect(grpcErrorLines(consoleError)).toEqual([]);
    grpc.experimental.log(grpc.logVerbosity.ERROR, 'after a failed start');
    expect(grpcErrorLines(consoleError)).toEqual(['E after a failed start']);
  });

  it('logs grpc-js errors while serving', async () => {
    vi.stubEnv('GRPC_VERBOSITY', undefined);
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { io } = start(['--quiet']);
    await io.waitForOut(LISTENING);
    grpc.experimental.log(grpc.logVerbosity.ERROR, 'while serving');
    expect(grpcErrorLines(consoleError)).toEqual(['E while serving']);
  });

  it('leaves the bind error to grpc-js when GRPC_VERBOSITY is set', async () => {
    vi.stubEnv('GRPC_VERBOSITY', 'ERROR');
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { exit } = start(['--host', UNBINDABLE_HOST]);
    expect(await exit).toBe(1);
    expect(grpcErrorLines(consoleError)).toEqual(['E No address added out of total 1 resolved']);
  });

  it('keeps the verbosity GRPC_VERBOSITY asked for while serving', async () => {
    vi.stubEnv('GRPC_VERBOSITY', 'INFO');
    grpc.setLogVerbosity(grpc.logVerbosity.INFO); // as grpc-js does at load with GRPC_VERBOSITY=INFO
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { io } = start(['--quiet']);
    await io.waitForOut(LISTENING);
    grpc.experimental.log(grpc.logVerbosity.INFO, 'info while serving');
    expect(consoleError.mock.calls.map((args) => String(args[0]))).toContain('I info while serving');
  });
});

describe('formatAttemptLine', () => {
  const at = Date.UTC(2026, 0, 1);
  const attempt = {
    method: '/a.B/C',
    callId: 'c',
    attempt: 1,
    arrivedAt: at,
    cancelled: false,
  } as unknown as RecordedAttempt;

  it('logs an attempt that has not ended as running, with no duration', () => {
    expect(formatAttemptLine(attempt)).toBe(
      '2026-01-01T00:00:00.000Z call="c" attempt=1 a.B/C previous-attempts=- -> running\n',
    );
  });

  it('logs a failed status without details with empty details', () => {
    const failed = { ...attempt, endedWith: grpc.status.UNAVAILABLE, endedAt: at + 3 } as RecordedAttempt;
    expect(formatAttemptLine(failed)).toMatch(/ -> UNAVAILABLE "" 3ms\n$/);
  });

  it('takes an attempt cancelled 1 ms before its deadline as ended by the deadline (the clock steps 1 ms)', () => {
    const timedOut = { ...attempt, cancelled: true, deadline: at + 50, endedAt: at + 49 } as RecordedAttempt;
    expect(formatAttemptLine(timedOut)).toMatch(/ -> DEADLINE_EXCEEDED \(its deadline passed\) 49ms\n$/);
  });
});
