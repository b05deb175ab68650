import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  formatAttemptLine,
  runFlakyServerCommand,
  startErrorMessage,
} from '../../src/cli/flaky-server-command.js';
import { CALL_ID_METADATA_KEY, loadFlakyTestService, type RecordedAttempt } from '../../src/testing/index.js';
import { CapturedIo, startCommand as start, stopRuns } from '../helpers/flaky-server-command-run.js';
import { captureWarnings } from '../helpers/warnings.js';

interface TestResponse {
  payload: string;
  attempt: number;
}
type UnaryMethod = (
  req: { payload: string },
  md: grpc.Metadata,
  cb: (err: grpc.ServiceError | null, res?: TestResponse) => void,
) => grpc.ClientUnaryCall;

const ORDERS = 'test/testing/fixtures/orders.proto';
let dir: string;

function unary(
  address: string,
  callId: string,
): Promise<{ error: grpc.ServiceError | null; res?: TestResponse | undefined }> {
  const Service = loadFlakyTestService();
  const client = new Service(address, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
  const metadata = new grpc.Metadata();
  if (callId !== '') metadata.set(CALL_ID_METADATA_KEY, callId);
  metadata.set('grpc-previous-rpc-attempts', '1');
  const method = (client as unknown as Record<string, UnaryMethod>).Unary!.bind(client);
  return new Promise((resolve) => {
    method({ payload: 'cli' }, metadata, (error, res) => {
      client.close();
      resolve({ error, res });
    });
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flaky-cli-'));
});

afterEach(async () => {
  await stopRuns();
  vi.restoreAllMocks();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('flaky-server command', () => {
  it('serves a script file, logs each attempt and stops on abort with exit code 0', async () => {
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify({ c1: [{ status: 14, details: 'down for a bit' }, {}] }));
    const sigintListeners = process.listenerCount('SIGINT');
    const { io, exit } = start(['--port', '0', '--script', file]);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    expect(process.listenerCount('SIGINT')).toBe(sigintListeners + 1);

    const first = await unary(address!, 'c1');
    expect(first.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(first.error?.details).toBe('down for a bit');
    const second = await unary(address!, 'c1');
    expect(second.res).toMatchObject({ payload: 'cli', attempt: 2 });

    await io.waitForOut(/attempt=2/);
    const lines = io.out.trim().split('\n').slice(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z call="c1" attempt=1 grpc_retry_hedging\.testing\.v1\.FlakyTest\/Unary previous-attempts=1 -> UNAVAILABLE "down for a bit" \d+ms$/,
    );
    expect(lines[1]).toMatch(
      / call="c1" attempt=2 grpc_retry_hedging\.testing\.v1\.FlakyTest\/Unary previous-attempts=1 -> OK responses=1 \d+ms$/,
    );
    // A call without a call id is logged as `-`, as a missing previous-attempts header is.
    await unary(address!, '');
    await io.waitForOut(/ call=- /);
    expect(io.out.trim().split('\n').at(-1)).toMatch(
      / call=- attempt=2 .* previous-attempts=1 -> OK responses=1 \d+ms$/,
    );

    io.controller.abort();
    expect(await exit).toBe(0);
    expect(io.out).toMatch(/flaky server stopped\n$/);
    expect(io.err).toBe('');
    expect(process.listenerCount('SIGINT')).toBe(sigintListeners);
  });

  it('serves the services of --proto files, scripted per method from the script file', async () => {
    const file = join(dir, 'greeter-script.json');
    writeFileSync(file, JSON.stringify({ 'helloworld.Greeter/SayHello': [{ status: 'UNAVAILABLE' }, {}] }));
    const { io } = start(['--proto', 'helloworld.proto', '-I', 'examples', '--script', file]);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    await io.waitForOut(/^serving .*helloworld\.Greeter/m);
    const loaded = grpc.loadPackageDefinition(protoLoader.loadSync('examples/helloworld.proto'));
    const Greeter = (loaded.helloworld as grpc.GrpcObject).Greeter as grpc.ServiceClientConstructor;
    const client = new Greeter(address!, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
    const sayHello = (previous: string | undefined) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        const metadata = new grpc.Metadata();
        if (previous !== undefined) metadata.set('grpc-previous-rpc-attempts', previous);
        client.makeUnaryRequest(
          '/helloworld.Greeter/SayHello',
          (x: object) => Buffer.from(JSON.stringify(x)).subarray(0, 0),
          (b: Buffer) => b,
          {},
          metadata,
          (error) => resolve(error),
        );
      });
    expect((await sayHello(undefined))?.code).toBe(grpc.status.UNAVAILABLE);
    expect(await sayHello('1')).toBeNull();
    client.close();
    await io.waitForOut(/attempt=2 helloworld\.Greeter\/SayHello previous-attempts=1 -> OK/);
  });

  it("warns when a call-id key is a served method's bare name, naming the key that scripts the method", async () => {
    const file = join(dir, 'bare-method-script.json');
    writeFileSync(file, JSON.stringify({ sayhello: [{ status: 'UNAVAILABLE' }], c1: [{}] }));
    const { io, exit } = start(['--proto', 'helloworld.proto', '-I', 'examples', '--script', file]);
    await io.waitForOut(/^flaky server listening on/m);
    expect(io.err).toBe(
      `flaky-server: warning: ${file}:1:2: "sayhello" scripts the calls whose x-flaky-call-id is "sayhello", not a method; ` +
        'to script the method, write "helloworld.Greeter/SayHello"\n',
    );
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('logs nothing per attempt with --quiet and accepts --opt=value', async () => {
    const { io, exit } = start(['--quiet', '--host=127.0.0.1', '--port=0']);
    const [, address] = await io.waitForOut(/listening on (\S+)/);
    expect((await unary(address!, 'q')).res?.attempt).toBe(1);
    io.controller.abort();
    expect(await exit).toBe(0);
    expect(io.out).toBe(`flaky server listening on ${address}\n`);
  });

  it('prints help with exit code 0', async () => {
    const { io, exit } = start(['--help']);
    expect(await exit).toBe(0);
    expect(io.out).toMatch(/^Usage: grpc-retry-hedging flaky-server/);
  });

  it.each([
    [['--port'], /--port needs a value/],
    [['--port', 'abc'], /--port must be an integer/],
    [['--port', '70000'], /--port must be an integer/],
    [['--bogus'], /unknown option --bogus/],
    [['extra'], /unexpected argument "extra"/],
    [['--quiet=yes'], /--quiet takes no value/],
    [['--host='], /--host needs a value/],
    [['-I', 'examples'], /-I\/--proto-path is used only with --proto/],
    [['--keep-case'], /--keep-case is used only with --proto/],
    [['--no-flaky-test'], /--no-flaky-test needs --proto/],
    [['--max-receive-message-size', '1k'], /--max-receive-message-size must be a number of bytes/],
    [
      ['--host', '0.0.0.0:50051'],
      /--host takes a host name or address without a port, got "0\.0\.0\.0:50051": give the port with --port \(--port 50051\)/,
    ],
    [['--host', '[::1]:50051'], /--host takes a host name or address without a port, got "\[::1\]:50051"/],
    [['--host', 'localhost:'], /--host takes a host name or address without a port, got "localhost:"/],
  ])('exits with 2 on usage error %j', async (argv, message) => {
    const { io, exit } = start(argv);
    expect(await exit).toBe(2);
    expect(io.err).toMatch(message);
    expect(io.err).toMatch(/Usage: grpc-retry-hedging flaky-server/);
    expect(io.out).toBe('');
  });

  it.each([
    ['not json', ':1:1: expected a JSON value, found "not"'],
    [
      '{"c": [{"status": 14},]}',
      ':1:22: a trailing comma: JSON allows no "," after the last array element; remove it',
    ],
    ['\uFEFF{"c": [{"stauts": 14}]}', ':1:9: "c"[0]: unknown field "stauts"; did you mean "status"?'],
    ['[]', ':1:1: must be a JSON object'],
    ['{"c": []}', ':1:7: "c": must contain at least one'],
  ])(
    'exits with 1 and one line naming file:line:col on an invalid script file %j',
    async (content, message) => {
      const file = join(dir, 'bad.json');
      writeFileSync(file, content);
      const { io, exit } = start(['--script', file]);
      expect(await exit).toBe(1);
      expect(io.err).toContain(`flaky-server: ${file}${message}`);
      expect(io.err).toMatch(/^flaky-server: [^\n]*\n$/);
    },
  );

  it('reports every invalid script of the file at once, one line each', async () => {
    const file = join(dir, 'many-bad.json');
    writeFileSync(
      file,
      '{\n  "a": [{"status": 14}, {"delayMs": -1}],\n  "b": {},\n  "c": [{"status": "NOPE"}]\n}\n',
    );
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    const lines = io.err.trimEnd().split('\n');
    expect(lines).toEqual([
      `flaky-server: ${file}:2:26: "a"[1]: "delayMs" must be a number between 0 and 2147483647, got -1`,
      `flaky-server: ${file}:3:8: "b": must be an array of attempt scripts`,
      expect.stringMatching(new RegExp(`^flaky-server: ${file}:4:10: "c"\\[0\\]: "status" must be`)),
    ]);
  });

  it('places a method script field the method kind would ignore in the script file', async () => {
    const file = join(dir, 'misfit.json');
    writeFileSync(file, '{"grpc_retry_hedging.testing.v1.FlakyTest/Unary": [{"responses": 3}]}');
    const { io, exit } = start(['--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toBe(
      `flaky-server: ${file}:1:52: "grpc_retry_hedging.testing.v1.FlakyTest/Unary"[0]: "responses" is for methods that stream responses (server streaming, bidi), and /grpc_retry_hedging.testing.v1.FlakyTest/Unary is unary: it would be ignored\n`,
    );
  });

  it('places a method script that names no served method in the script file, with the qualified name', async () => {
    const file = join(dir, 'unqualified.json');
    writeFileSync(file, '{"Greeter/SayHello": [{"status": "UNAVAILABLE"}]}');
    const { io, exit } = start(['--proto', 'helloworld.proto', '-I', 'examples', '--script', file]);
    expect(await exit).toBe(1);
    expect(io.err).toMatch(
      new RegExp(
        `^flaky-server: ${file}:1:2: no served method "Greeter/SayHello"; did you mean "helloworld\\.Greeter/SayHello" \\(with its package\\)\\?`,
      ),
    );
    expect(io.err.split('\n')).toHaveLength(2);
  });

  it('reports every problem of the file at once, each placed: entries, method keys and response keys', async () => {
    const file = join(dir, 'mixed.json');
    writeFileSync(
      file,
      [
        '{',
        '  "OrderService/GetOrder": [{"status": 14}],',
        '  "fixture.orders.v1.OrderService/ListOrder": [{"status": 14}],',
        '  "fixture.orders.v1.OrderService/GetOrder": [{"statu": 14}, {"response": {"order_id": "o"}}],',
        '  "helloworld.Greeter/SayHello": [{}]',
        '}',
      ].join('\n'),
    );
    const { io, exit } = start(['--proto', ORDERS, '--script', file]);
    expect(await exit).toBe(1);
    const lines = io.err.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^flaky-server: ${file}:2:3: no served method "OrderService/GetOrder"; did you mean "fixture\\.orders\\.v1\\.OrderService/GetOrder" \\(with its package\\)\\?`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^flaky-server: ${file}:3:3: no served method "fixture.orders.v1.OrderService/ListOrder"; did you mean "fixture.orders.v1.OrderService/ListOrders"\\?`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^flaky-server: ${file}:4:48: "fixture.orders.v1.OrderService/GetOrder"\\[0\\]: unknown field "statu"; did you mean "status"\\?`,
        ),
      ),
      `flaky-server: ${file}:4:76: "fixture.orders.v1.OrderService/GetOrder"[1].response.order_id: "order_id" is not a field of Order (in the response of /fixture.orders.v1.OrderService/GetOrder); did you mean "orderId"? (the server loaded this proto with camelCase field names; load it with keepCase: true, or --keep-case, to use the proto's names, as a client loaded with keepCase: true does)`,
      expect.stringMatching(
        new RegExp(
          `^flaky-server: ${file}:5:3: no served method "helloworld.Greeter/SayHello" \\(served: .*\\); a key written as a method must name a served method \\(serve its proto with --proto\\)$`,
        ),
      ),
    ]);
  });

  it('with --no-flaky-test, serves the protos alone: a script key naming FlakyTest is no served method', async () => {
    const file = join(dir, 'no-flaky-test.json');
    writeFileSync(file, '{\n  "grpc_retry_hedging.testing.v1.FlakyTest/Unary": [{}]\n}');
    const refused = start(['--proto', ORDERS, '--no-flaky-test', '--script', file]);
    expect(await refused.exit).toBe(1);
    expect(refused.io.err).toMatch(
      /no served method "grpc_retry_hedging\.testing\.v1\.FlakyTest\/Unary" \(served: fixture\.orders\.v1\.OrderService\/GetOrder, /,
    );
    expect(refused.io.err).not.toMatch(/served: [^)]*FlakyTest/);

    const { io, exit } = start(['--proto', ORDERS, '--no-flaky-test']);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    const { error } = await unary(address!, '');
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it("with --no-flaky-test, serves a FlakyTest the user's own --proto declares", async () => {
    const { io, exit } = start(['--proto', 'protos/flaky_test.proto', '--no-flaky-test']);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    expect(io.out).toContain('serving grpc_retry_hedging.testing.v1.FlakyTest');
    const { error } = await unary(address!, '');
    expect(error).toBeNull();
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('with --keep-case, loads the protos with their field names: scripted responses and recorded requests', async () => {
    const file = join(dir, 'keep-case.json');
    writeFileSync(
      file,
      JSON.stringify({ 'fixture.orders.v1.OrderService/GetOrder': [{ response: { order_id: 'o-9' } }] }),
    );
    const { io, exit } = start(['--proto', ORDERS, '--keep-case', '--script', file]);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    const definition = protoLoader.loadSync(ORDERS, { keepCase: true });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      fixture: { orders: { v1: { OrderService: grpc.ServiceClientConstructor } } };
    };
    const client = new pkg.fixture.orders.v1.OrderService(address!, grpc.credentials.createInsecure());
    const reply = await new Promise<Record<string, unknown> | undefined>((resolve) => {
      client.GetOrder!({ order_id: 'asked' }, (_: unknown, res: Record<string, unknown>) => resolve(res));
    });
    client.close();
    expect(reply?.order_id).toBe('o-9');
    await io.waitForOut(/ fixture\.orders\.v1\.OrderService\/GetOrder previous-attempts=- -> OK responses=1/);
    io.controller.abort();
    expect(await exit).toBe(0);
    expect(io.err).toBe('');
  });

  it('names every problem of an attempt, each at its field, and shows the warnings with the errors', async () => {
    const file = join(dir, 'all-at-once.json');
    writeFileSync(
      file,
      '{\n  "fixture.orders.v1.OrderService/GetOrder": [{"delayMs": -5, "echo": true, "pushback": 30}],\n  "GetOrder": [{}]\n}',
    );
    const { io, exit } = start(['--proto', ORDERS, '--script', file]);
    expect(await exit).toBe(1);
    const where = '"fixture.orders.v1.OrderService/GetOrder"[0]';
    expect(io.err.trimEnd().split('\n')).toEqual([
      `flaky-server: ${file}:2:48: ${where}: "delayMs" must be a number between 0 and 2147483647, got -5`,
      expect.stringMatching(
        new RegExp(`^flaky-server: ${file}:2:77: ${where.replace(/[[\]]/g, '\\$&')}: "pushback" must be`),
      ),
      `flaky-server: ${file}:2:47: ${where}: "echo" is for bidi streaming methods, and /fixture.orders.v1.OrderService/GetOrder is unary: it would be ignored`,
      `flaky-server: warning: ${file}:3:3: "GetOrder" scripts the calls whose x-flaky-call-id is "GetOrder", not a method; to script the method, write "fixture.orders.v1.OrderService/GetOrder"`,
    ]);
  });

  it('takes keys that name no served method as call ids, warning, placed, for those that look like one', async () => {
    const file = join(dir, 'method-like.json');
    const keys = [
      'fixture.orders.v1.OrderService.GetOrder',
      'GetOrder',
      'fixture.orders.v1.OrderService/GetOrder/',
      'fixture.orders.v1.OrderService',
      ' fixture.orders.v1.OrderService/GetOrder',
      'fixture.orders.v1.OrderService/Get-Order',
      'tenant/42',
      'c1',
    ];
    writeFileSync(
      file,
      `{\n${keys.map((k) => `  ${JSON.stringify(k)}: [{"status": 14}, {}]`).join(',\n')}\n}`,
    );
    const processWarnings = captureWarnings();
    const { io } = start(['--proto', ORDERS, '--script', file]);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    const warnings = io.err.trimEnd().split('\n');
    const toScript = 'to script the method, write "fixture.orders.v1.OrderService/GetOrder"';
    expect(warnings).toEqual([
      `flaky-server: warning: ${file}:2:3: "fixture.orders.v1.OrderService.GetOrder" scripts the calls whose x-flaky-call-id is "fixture.orders.v1.OrderService.GetOrder", not a method; ${toScript}`,
      `flaky-server: warning: ${file}:3:3: "GetOrder" scripts the calls whose x-flaky-call-id is "GetOrder", not a method; ${toScript}`,
      expect.stringMatching(new RegExp(`^flaky-server: warning: ${file}:4:3: .*; ${toScript}$`)),
      `flaky-server: warning: ${file}:5:3: "fixture.orders.v1.OrderService" scripts the calls whose x-flaky-call-id is "fixture.orders.v1.OrderService", not a method; a key scripts one method: to script the methods of fixture.orders.v1.OrderService, write one key per method, such as "fixture.orders.v1.OrderService/GetOrder"`,
      expect.stringMatching(new RegExp(`^flaky-server: warning: ${file}:6:3: .*; ${toScript}$`)),
      expect.stringMatching(new RegExp(`^flaky-server: warning: ${file}:7:3: .*; ${toScript}$`)),
    ]);
    // warned of once, placed in the file: the server it starts does not warn of them again
    expect(processWarnings).toEqual([]);
    // a call id with a slash is a call id: it scripts the calls that send it
    expect((await unary(address!, 'tenant/42')).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await unary(address!, 'tenant/42')).res?.attempt).toBe(2);
  });

  it('limits the size of requests with --max-receive-message-size', async () => {
    const { io } = start(['--max-receive-message-size', '100']);
    const [, address] = await io.waitForOut(/^flaky server listening on (127\.0\.0\.1:\d+)$/m);
    const Service = loadFlakyTestService();
    const client = new Service(address!, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) => {
      (client as unknown as Record<string, UnaryMethod>).Unary!.call(
        client,
        { payload: 'x'.repeat(200) },
        new grpc.Metadata(),
        (err) => resolve(err),
      );
    });
    client.close();
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('exits with 1 and one line when the script file cannot be read', async () => {
    const { io, exit } = start(['--script', '/nonexistent/flaky.json']);
    expect(await exit).toBe(1);
    expect(io.err).toMatch(
      /^flaky-server: cannot read script file \/nonexistent\/flaky\.json: ENOENT[^\n]*\n$/,
    );
    expect(io.out).toBe('');
  });

  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const { io, exit } = start(['--version']);
    expect(await exit).toBe(0);
    expect(io.out).toBe(`${version}\n`);
  });

  it('exits with 1 when the port is taken', async () => {
    const first = start(['--quiet']);
    const [, port] = await first.io.waitForOut(/listening on 127\.0\.0\.1:(\d+)/);
    const { io, exit } = start(['--port', port!]);
    expect(await exit).toBe(1);
    // One line in the command's words: no library prefix, no grpc-js log line, and the likely cause.
    // (grpc-js 1.14 names EADDRINUSE itself; older versions say only "No address added".)
    expect(io.err).toMatch(
      new RegExp(
        `^flaky-server: cannot bind 127\\.0\\.0\\.1:${port}: No address added .*(EADDRINUSE|listening on port ${port}\\?)`,
      ),
    );
    expect(io.err.split('\n')).toHaveLength(2);
  });

  it('stops at once when the signal is already aborted', async () => {
    const io = new CapturedIo();
    io.controller.abort();
    expect(await runFlakyServerCommand(['--quiet'], io)).toBe(0);
  });
});

describe('startErrorMessage', () => {
  it('drops the library prefix, places method-script problems in the script file, and names a likely cause', () => {
    expect(
      startErrorMessage('FlakyServer: cannot read the proto file a.proto: no such file', {
        port: 0,
        scriptFile: undefined,
      }),
    ).toBe('cannot read the proto file a.proto: no such file');
    expect(
      startErrorMessage('FlakyServer.start: methodScripts: no served method "x/y"', {
        port: 0,
        scriptFile: 's.json',
      }),
    ).toBe('s.json: no served method "x/y"');
    expect(
      startErrorMessage(
        'FlakyServer: cannot bind 127.0.0.1:50051: No address added out of total 1 resolved',
        {
          port: 50051,
          scriptFile: undefined,
        },
      ),
    ).toBe(
      'cannot bind 127.0.0.1:50051: No address added out of total 1 resolved (is another process listening on port 50051?)',
    );
  });
});

describe('formatAttemptLine', () => {
  const attempt = {
    method: '/helloworld.Greeter/SayHello',
    callId: 'c',
    attempt: 1,
    arrivedAt: Date.UTC(2026, 0, 1),
    cancelled: true,
  } as unknown as RecordedAttempt;

  it('says an attempt the stop cut off was cut off by the shutdown, not by its client', () => {
    expect(formatAttemptLine(attempt)).toContain('-> CANCELLED by client');
    expect(formatAttemptLine({ ...attempt, cutOffByStop: true } as RecordedAttempt)).toContain(
      '-> cut off by the server stopping',
    );
  });

  it('says an attempt that ended as its deadline passed exceeded its deadline', () => {
    const at = attempt.arrivedAt;
    const timedOut = { ...attempt, deadline: at + 50, endedAt: at + 50 } as RecordedAttempt;
    expect(formatAttemptLine(timedOut)).toContain('-> DEADLINE_EXCEEDED (its deadline passed) 50ms');
    const before = { ...attempt, deadline: at + 50, endedAt: at + 20 } as RecordedAttempt;
    expect(formatAttemptLine(before)).toContain('-> CANCELLED by client 20ms');
  });
});
