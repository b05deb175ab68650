import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CALL_ID_METADATA_KEY,
  createFlakyTestClient,
  FLAKY_TEST_SERVICE,
  FlakyServer,
  flakyMethodPath,
} from '../../src/testing/index.js';

const PROTO = 'examples/helloworld.proto';

/** A port nothing listens on at the moment (the kernel's pick for port 0, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

interface Reply {
  message: string;
}
interface Greeter extends grpc.Client {
  SayHello(
    request: { name: string },
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<Reply>,
  ): unknown;
  StreamHellos(request: { name: string }, metadata?: grpc.Metadata): grpc.ClientReadableStream<Reply>;
}
type GreeterConstructor = new (address: string, credentials: grpc.ChannelCredentials) => Greeter;

const definition = protoLoader.loadSync(PROTO);
const grpcObject = grpc.loadPackageDefinition(definition);
const GreeterClient = (grpcObject.helloworld as grpc.GrpcObject).Greeter as unknown as GreeterConstructor &
  grpc.ServiceClientConstructor;

let server: FlakyServer | undefined;
let clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await server?.stop();
  server = undefined;
});

function greeter(s: FlakyServer): Greeter {
  const client = new GreeterClient(s.address, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

function sayHello(client: Greeter, metadata = new grpc.Metadata()) {
  return new Promise<{ error: grpc.ServiceError | null; reply: Reply | undefined }>((resolve) => {
    client.SayHello({ name: 'n' }, metadata, (error, reply) => resolve({ error, reply }));
  });
}

function stream(client: Greeter) {
  return new Promise<{ replies: Reply[]; code: number }>((resolve) => {
    const replies: Reply[] = [];
    const call = client.StreamHellos({ name: 'n' });
    call.on('data', (r: Reply) => replies.push(r));
    call.on('error', (e: grpc.ServiceError) => resolve({ replies, code: e.code }));
    call.on('end', () => resolve({ replies, code: grpc.status.OK }));
  });
}

describe('FlakyServer serves any service', () => {
  it.each([
    ['a proto file', () => ({ proto: PROTO })],
    ['a proto-loader PackageDefinition', () => ({ services: definition })],
    ['a grpc.GrpcObject', () => ({ services: grpcObject })],
    ['a client constructor', () => ({ services: GreeterClient })],
    ['a ServiceDefinition', () => ({ services: [GreeterClient.service] })],
  ])('given %s, scripts every method of it per attempt, and still serves FlakyTest', async (_, options) => {
    server = await FlakyServer.start(options());
    expect(server.servedMethods()).toEqual(
      expect.arrayContaining([
        '/helloworld.Greeter/SayHello',
        '/helloworld.Greeter/GetCached',
        '/helloworld.Greeter/StreamHellos',
        flakyMethodPath('Unary'),
      ]),
    );
    server.scriptMethod('helloworld.Greeter/SayHello', [
      { status: 'UNAVAILABLE' },
      { response: { message: 'hi' } },
    ]);
    const client = greeter(server);
    expect((await sayHello(client)).error?.code).toBe(grpc.status.UNAVAILABLE);
    const retried = new grpc.Metadata();
    retried.set('grpc-previous-rpc-attempts', '1');
    expect((await sayHello(client, retried)).reply).toEqual({ message: 'hi' });
    expect(server.attemptsOf('/helloworld.Greeter/SayHello').map((a) => [a.attempt, a.endedWith])).toEqual([
      [1, grpc.status.UNAVAILABLE],
      [2, grpc.status.OK],
    ]);

    const flaky = createFlakyTestClient(server.address);
    clients.push(flaky);
    const reply = await new Promise((resolve) => flaky.Unary({ payload: 'p' }, (_e, r) => resolve(r)));
    expect(reply).toMatchObject({ payload: 'p', attempt: 1 });
  });

  it('a call id script wins over the method script; without either, an OK empty message', async () => {
    server = await FlakyServer.start({
      proto: PROTO,
      methodScripts: { 'helloworld.Greeter/SayHello': [{ status: 'ABORTED' }] },
    });
    server.script('c1', [{ response: { message: 'by call id' } }]);
    const client = greeter(server);
    const metadata = new grpc.Metadata();
    metadata.set(CALL_ID_METADATA_KEY, 'c1');
    expect((await sayHello(client, metadata)).reply).toEqual({ message: 'by call id' });
    expect((await sayHello(client)).error?.code).toBe(grpc.status.ABORTED);
    server.reset();
    expect((await sayHello(client)).reply).toEqual({}); // an empty HelloReply (this client loads without defaults)
  });

  it('streams scripted responses, from the script or the respond option', async () => {
    server = await FlakyServer.start({
      proto: PROTO,
      respond: ({ attempt, index, requests }) => ({
        message: `${attempt}.${index} ${JSON.stringify(requests)}`,
      }),
    });
    server.scriptMethod('helloworld.Greeter/StreamHellos', [{ responses: 2, status: 'UNAVAILABLE' }]);
    const client = greeter(server);
    expect(await stream(client)).toEqual({
      replies: [{ message: '1.0 [{"name":"n"}]' }, { message: '1.1 [{"name":"n"}]' }],
      code: grpc.status.UNAVAILABLE,
    });
    server.scriptMethod('helloworld.Greeter/StreamHellos', [
      { responses: 1, response: { message: 'fixed' } },
    ]);
    expect(await stream(client)).toEqual({ replies: [{ message: 'fixed' }], code: grpc.status.OK });
  });

  it('a respond hook that throws ends the attempt with INTERNAL naming the error', async () => {
    server = await FlakyServer.start({
      proto: PROTO,
      respond: () => {
        throw new Error('no reply for you');
      },
    });
    const client = greeter(server);
    const out = await sayHello(client);
    expect(out.error?.code).toBe(grpc.status.INTERNAL);
    expect(out.error?.details).toContain('no reply for you');
    const streamed = await stream(client);
    expect(streamed).toEqual({ replies: [], code: grpc.status.INTERNAL });
  });

  it('names a method it does not serve, with the closest one', async () => {
    server = await FlakyServer.start({ proto: PROTO });
    expect(() => server?.scriptMethod('helloworld.Greeter/SayHelo', [{}])).toThrow(
      'FlakyServer.scriptMethod: no served method "helloworld.Greeter/SayHelo"; did you mean "helloworld.Greeter/SayHello"?',
    );
    expect(() => server?.attemptsOf('Greeter/SayHello')).toThrow(/no served method/);
  });

  it('names the method meant for a method given by its name alone, or as Service.Method', async () => {
    server = await FlakyServer.start({ proto: PROTO });
    const meant =
      'did you mean "helloworld.Greeter/SayHello"? (a method is named with its package and service, "pkg.Service/Method")';
    expect(() => server?.scriptMethod('SayHello', [{}])).toThrow(
      `FlakyServer.scriptMethod: no served method "SayHello"; ${meant}`,
    );
    expect(() => server?.attemptsOf('/SayHello')).toThrow(
      `FlakyServer.attemptsOf: no served method "SayHello"; ${meant}`,
    );
    expect(() => server?.attemptsOf('Greeter.SayHello')).toThrow(
      `FlakyServer.attemptsOf: no served method "Greeter.SayHello"; ${meant}`,
    );
  });

  it('rejects a source with no service, a missing proto and a bad method script, naming them', async () => {
    await expect(FlakyServer.start({ services: { nothing: 1 } as never })).rejects.toThrow(
      'FlakyServer: option "services"[0] holds no service',
    );
    await expect(FlakyServer.start({ proto: 'nope.proto' })).rejects.toThrow(
      'FlakyServer: cannot read the proto file nope.proto: not found in the working directory',
    );
    await expect(FlakyServer.start({ proto: PROTO, includeDirs: ['no/such/dir'] })).rejects.toThrow(
      'FlakyServer: include directory no/such/dir does not exist or is not a directory',
    );
    await expect(
      FlakyServer.start({ proto: PROTO, methodScripts: { 'Greeter/SayHello': [{ status: 14 }] } }),
    ).rejects.toThrow(
      'FlakyServer.start: methodScripts: no served method "Greeter/SayHello"; did you mean "helloworld.Greeter/SayHello" (with its package)?',
    );
    await expect(
      FlakyServer.start({
        proto: PROTO,
        methodScripts: { 'helloworld.Greeter/SayHello': [{ stat: 1 }] as never },
      }),
    ).rejects.toThrow('methodScripts["helloworld.Greeter/SayHello"][0]: unknown field "stat"');
  });

  it('names the place of a type that does not resolve', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grh-type-'));
    try {
      const file = join(dir, 'app.proto');
      writeFileSync(file, 'syntax = "proto3";\nmessage A {}\nservice S {\n  rpc M(A) returns (B);\n}\n');
      await expect(FlakyServer.start({ proto: file })).rejects.toThrow(
        `FlakyServer: cannot load the proto file ${file}: no such type: B, at ${file}:4:21: rpc M(A) returns (B);`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names an import it cannot find in one error, with the include paths, and prints no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grh-import-'));
    try {
      const file = join(dir, 'app.proto');
      writeFileSync(
        file,
        'syntax = "proto3";\nimport "missing/dep.proto";\nservice S { rpc M(A) returns (A); }\nmessage A {}\n',
      );
      const warnings: unknown[] = [];
      const onWarning = (warning: unknown): void => {
        warnings.push(warning);
      };
      process.on('warning', onWarning);
      try {
        await expect(FlakyServer.start({ proto: file })).rejects.toThrow(
          `FlakyServer: cannot load the proto file ${file}: ENOENT: no such file or directory, open '${join(dir, 'missing/dep.proto')}' (missing/dep.proto not found in any of the include paths ${dir}; add its directory to includeDirs, or with -I on the command line)`,
        );
        await new Promise((r) => setImmediate(r));
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves nothing bound when a method script names no served method', async () => {
    const port = await freePort();
    await expect(
      FlakyServer.start({ proto: PROTO, port, methodScripts: { 'helloworld.Greeter/SayHelo': [{}] } }),
    ).rejects.toThrow(
      'no served method "helloworld.Greeter/SayHelo"; did you mean "helloworld.Greeter/SayHello"?',
    );
    // The port is free again: a server left bound would keep a test run or the CLI's process alive.
    server = await FlakyServer.start({ proto: PROTO, port });
    expect(server.port).toBe(port);
  });

  it("records a request id from a field of the user's request message", async () => {
    server = await FlakyServer.start({ proto: PROTO, requestIdField: 'name' });
    await sayHello(greeter(server));
    expect(
      server.attemptsOf('helloworld.Greeter/SayHello').map((a) => [a.requestId, a.requestIdSource]),
    ).toEqual([['n', 'field']]);
  });

  it('serves FlakyTest once when the user hands it in too', async () => {
    server = await FlakyServer.start({ proto: ['protos/flaky_test.proto', PROTO] });
    expect(server.servedMethods().filter((m) => m.startsWith(`/${FLAKY_TEST_SERVICE}/`))).toHaveLength(4);
  });
});
