/**
 * A scripted response may give a Timestamp as an RFC 3339 string and a Duration as "1.5s" (their proto3 JSON
 * forms): a real FlakyServer serves them and the client decodes the right seconds and nanos. A value of neither
 * form is refused before any call (scriptMethod, methodScripts, the CLI's script file at its line and column).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runFlakyServerCommand } from '../../src/cli/flaky-server-command.js';
import { CALL_ID_METADATA_KEY, FlakyServer, SCRIPT_METADATA_KEY } from '../../src/testing/index.js';

const PROTO = 'test/testing/fixtures/schedule.proto';
const GET_SCHEDULE = 'fixture.schedule.v1.ScheduleService/GetSchedule';

type Reply = Record<string, unknown>;
interface ScheduleClient extends grpc.Client {
  GetSchedule(request: Reply, metadata: grpc.Metadata, callback: grpc.requestCallback<Reply>): unknown;
}
type ScheduleConstructor = new (address: string, credentials: grpc.ChannelCredentials) => ScheduleClient;

let server: FlakyServer | undefined;
let clients: grpc.Client[] = [];
const dir = mkdtempSync(join(tmpdir(), 'flaky-well-known-'));
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await server?.stop();
  server = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function clientOf(address: string): ScheduleClient {
  const definition = protoLoader.loadSync(PROTO, { longs: String });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    fixture: { schedule: { v1: { ScheduleService: ScheduleConstructor } } };
  };
  const client = new pkg.fixture.schedule.v1.ScheduleService(address, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

function getSchedule(
  client: ScheduleClient,
  headers: Record<string, string> = {},
): Promise<{ err: grpc.ServiceError | null; res: Reply | undefined }> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
  return new Promise((resolve) => {
    client.GetSchedule({}, metadata, (err, res) => resolve({ err, res }));
  });
}

describe('Timestamps and Durations in their proto3 JSON form', () => {
  it('serves an RFC 3339 string and "1.5s" as the seconds and nanos they stand for, at any depth', async () => {
    server = await FlakyServer.start({ host: '127.0.0.1', port: 0, proto: PROTO });
    server.scriptMethod(GET_SCHEDULE, [
      {
        response: {
          created: '2024-01-01T00:00:00.123456789Z',
          timeout: '1.5s',
          holidays: ['2024-12-25T01:00:00+01:00'],
          slots: [{ startsAt: '1969-12-31T23:59:59Z', length: '-0.25s' }],
          deadlines: { a: '9999-12-31T23:59:59Z' },
          slotsByRoom: { r1: { length: '2s' } },
          note: 'wrapped',
          counts: ['9007199254740993', 0],
        },
      },
    ]);
    const { err, res } = await getSchedule(clientOf(server.address));
    expect(err).toBeNull();
    expect(res).toMatchObject({
      created: { seconds: '1704067200', nanos: 123_456_789 },
      timeout: { seconds: '1', nanos: 500_000_000 },
      holidays: [{ seconds: '1735084800', nanos: 0 }],
      slots: [{ startsAt: { seconds: '-1', nanos: 0 }, length: { seconds: '0', nanos: -250_000_000 } }],
      deadlines: { a: { seconds: '253402300799', nanos: 0 } },
      slotsByRoom: { r1: { length: { seconds: '2', nanos: 0 } } },
      note: { value: 'wrapped' },
      counts: [{ value: '9007199254740993' }, { value: '0' }],
    });
    expect(server.attemptsOf(GET_SCHEDULE)[0]).toMatchObject({ endedWith: grpc.status.OK });
  });

  it('converts them in a shipped script and in what the respond option builds too', async () => {
    server = await FlakyServer.start({
      host: '127.0.0.1',
      port: 0,
      proto: PROTO,
      respond: () => ({ created: '1970-01-01T00:00:01Z' }),
    });
    const client = clientOf(server.address);
    const shipped = await getSchedule(client, {
      [SCRIPT_METADATA_KEY]: JSON.stringify([{ response: { timeout: '3s' } }]),
    });
    expect(shipped.res?.timeout).toEqual({ seconds: '3', nanos: 0 });
    const built = await getSchedule(client, { [CALL_ID_METADATA_KEY]: 'c' });
    expect(built.res?.created).toEqual({ seconds: '1', nanos: 0 });
  });

  it('refuses a value of neither form at once, naming its path and the forms it takes', async () => {
    server = await FlakyServer.start({ host: '127.0.0.1', port: 0, proto: PROTO });
    expect(() => server!.scriptMethod(GET_SCHEDULE, [{ response: { created: 1704067200 } }])).toThrow(
      /response\.created: Schedule\.created is a google\.protobuf\.Timestamp .*: got number 1704067200; give an RFC 3339 string .* or an object \{"seconds": <integer>, "nanos": <integer>\}/,
    );
    await expect(
      FlakyServer.start({
        proto: PROTO,
        methodScripts: { [GET_SCHEDULE]: [{ response: { slots: [{ length: '90m' }] } }] },
      }),
    ).rejects.toThrow(/response\.slots\[0\]\.length: Slot\.length is a google\.protobuf\.Duration .*"90m"/);
    // a script given before the method is known ends the attempt with the same words
    const { err } = await getSchedule(clientOf(server.address), {
      [SCRIPT_METADATA_KEY]: JSON.stringify([{ response: { created: '2024-01-01' } }]),
    });
    expect(err?.code).toBe(grpc.status.INTERNAL);
    expect(err?.details).toMatch(/response\.created: Schedule\.created is a google\.protobuf\.Timestamp/);
  });

  it('the CLI names the place of a wrong value in the script file', async () => {
    const file = join(dir, 'bad-timestamp.json');
    writeFileSync(
      file,
      `{\n  "${GET_SCHEDULE}": [\n    {"response": {"deadlines": {"a": "tomorrow"}}}\n  ]\n}\n`,
    );
    let err = '';
    const controller = new AbortController();
    const code = await runFlakyServerCommand(['--proto', PROTO, '--script', file], {
      stdout: () => {},
      stderr: (s: string) => {
        err += s;
      },
      signal: controller.signal,
    });
    controller.abort();
    expect(code).toBe(1);
    expect(err).toMatch(
      new RegExp(
        `^flaky-server: ${file}:3:33: "${GET_SCHEDULE}"\\[0\\]\\.response\\.deadlines\\.a: Schedule\\.deadlines is a google\\.protobuf\\.Timestamp .*"tomorrow": it is not an RFC 3339 date-time`,
      ),
    );
  });
});
