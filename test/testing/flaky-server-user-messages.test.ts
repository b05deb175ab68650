/**
 * The flaky server and the user's messages: field names as the user's loader has them (`keepCase`), scripted
 * responses checked against the response message, responses it cannot serialize, shipped scripts, and the request
 * id field in either spelling.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CALL_ID_METADATA_KEY,
  FlakyServer,
  type FlakyServerOptions,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
} from '../../src/testing/index.js';

const PROTO = 'test/testing/fixtures/orders.proto';
const GET_ORDER = 'fixture.orders.v1.OrderService/GetOrder';
const LIST_ORDERS = 'fixture.orders.v1.OrderService/ListOrders';

type Reply = Record<string, unknown>;
interface OrderClient extends grpc.Client {
  GetOrder(request: Reply, metadata: grpc.Metadata, callback: grpc.requestCallback<Reply>): unknown;
  ListOrders(request: Reply, metadata?: grpc.Metadata): grpc.ClientReadableStream<Reply>;
}
type OrderConstructor = new (address: string, credentials: grpc.ChannelCredentials) => OrderClient;

function load(keepCase: boolean): { definition: protoLoader.PackageDefinition; Client: OrderConstructor } {
  const definition = protoLoader.loadSync(PROTO, { keepCase, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    fixture: { orders: { v1: { OrderService: OrderConstructor } } };
  };
  return { definition, Client: pkg.fixture.orders.v1.OrderService };
}

let server: FlakyServer | undefined;
let clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await server?.stop();
  server = undefined;
});

async function serve(
  options: FlakyServerOptions,
  keepCase: boolean,
): Promise<{ s: FlakyServer; client: OrderClient }> {
  server = await FlakyServer.start(options);
  const client = new (load(keepCase).Client)(server.address, grpc.credentials.createInsecure());
  clients.push(client);
  return { s: server, client };
}

function getOrder(
  client: OrderClient,
  request: Reply,
  headers: Record<string, string> = {},
): Promise<{ err: grpc.ServiceError | null; res: Reply | undefined }> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
  return new Promise((resolve) => {
    client.GetOrder(request, metadata, (err, res) => resolve({ err, res }));
  });
}

function listOrders(client: OrderClient): Promise<{ count: number; status: grpc.StatusObject }> {
  return new Promise((resolve) => {
    let count = 0;
    const call = client.ListOrders({});
    call.on('data', () => count++);
    call.on('error', () => {});
    call.on('status', (status) => resolve({ count, status }));
  });
}

describe('keepCase: protos loaded as the client loads them', () => {
  it('sends a response written with proto names to a keepCase client, and records requests with them', async () => {
    const { s, client } = await serve({ proto: PROTO, keepCase: true }, true);
    s.scriptMethod(GET_ORDER, [
      { response: { order_id: 'o-1', card_token: 'tok', line_items: [{ sku: 'a', unit_count: 2 }] } },
    ]);
    const { err, res } = await getOrder(client, { order_id: 'o-1' });
    expect(err).toBeNull();
    expect(res).toMatchObject({
      order_id: 'o-1',
      card_token: 'tok',
      payment: 'card_token',
      line_items: [{ sku: 'a', unit_count: 2 }],
    });
    const [attempt] = s.attemptsOf<{ order_id: string }>(GET_ORDER);
    expect(attempt!.requests[0]!.order_id).toBe('o-1');
  });

  it('rejects a keepCase option that is not a boolean', async () => {
    await expect(FlakyServer.start({ proto: PROTO, keepCase: 'yes' as unknown as boolean })).rejects.toThrow(
      /option "keepCase" must be a boolean/,
    );
  });
});

describe('scripted responses are checked against the response message', () => {
  it('rejects a proto name when the server loaded camelCase names, naming method, key and the field meant', async () => {
    const { s } = await serve({ proto: PROTO }, false);
    expect(() => s.scriptMethod(GET_ORDER, [{}, { response: { order_id: 'o-1' } }])).toThrow(
      `scriptMethod("${GET_ORDER}")[1]: response.order_id: "order_id" is not a field of Order (in the response of /${GET_ORDER}); did you mean "orderId"?`,
    );
    expect(() => s.scriptMethod(GET_ORDER, [{ response: { order_id: 'o-1' } }])).toThrow(/keepCase: true/);
  });

  it('rejects a camelCase name when the server keeps the proto names, and checks nested messages', async () => {
    const { s } = await serve({ proto: PROTO, keepCase: true }, true);
    expect(() => s.scriptMethod(GET_ORDER, [{ response: { orderId: 'o-1' } }])).toThrow(
      /response\.orderId: "orderId" is not a field of Order .*; did you mean "order_id"\?/,
    );
    expect(() =>
      s.scriptMethod(GET_ORDER, [{ response: { line_items: [{ sku: 'a' }, { unitCount: 1 }] } }]),
    ).toThrow(/response\.line_items\[1\]\.unitCount: "unitCount" is not a field of LineItem .*"unit_count"/);
    expect(() => s.scriptMethod(GET_ORDER, [{ response: { order_no: 'x' } }])).toThrow(
      /"order_no" is not a field of Order .*did you mean "order_id"\?.*fields: order_id, line_items/,
    );
    // map keys are not fields to check; a oneof's name is taken beside the member it names, as proto-loader decodes
    // it; a Timestamp takes its fields or its RFC 3339 string
    s.scriptMethod(GET_ORDER, [
      {
        response: {
          labels: { any_key: 'v' },
          card_token: 't',
          payment: 'card_token',
          created_at: { seconds: 1 },
        },
      },
      { response: { created_at: '2024-01-01T00:00:00Z' } },
    ]);
  });

  it('checks the methodScripts option at start, and stream responses', async () => {
    await expect(
      FlakyServer.start({
        proto: PROTO,
        methodScripts: { [LIST_ORDERS]: [{ responses: 2, response: { order_id: 'x' } }] },
      }),
    ).rejects.toThrow(
      /methodScripts\["fixture.orders.v1.OrderService\/ListOrders"\]\[0\]: response\.order_id: .*"orderId"/,
    );
  });

  it('checks services handed as proto-loader definitions loaded with keepCase', async () => {
    const { s } = await serve({ services: load(true).definition }, true);
    expect(() => s.scriptMethod(GET_ORDER, [{ response: { orderId: 'x' } }])).toThrow(
      /did you mean "order_id"/,
    );
  });

  it('ends an attempt INTERNAL when a call-id script, given before the method was known, has a wrong key', async () => {
    const ended: RecordedAttempt[] = [];
    const { s, client } = await serve({ proto: PROTO, onAttemptEnd: (a) => ended.push(a) }, false);
    s.script('c1', [{ response: { order_id: 'o-1' } }]);
    const { err } = await getOrder(client, {}, { [CALL_ID_METADATA_KEY]: 'c1' });
    expect(err?.code).toBe(grpc.status.INTERNAL);
    expect(err?.details).toMatch(
      /response\.order_id: "order_id" is not a field of Order .*did you mean "orderId"/,
    );
    await s.waitFor(() => ended.length === 1);
    expect(ended[0]).toMatchObject({ endedWith: grpc.status.INTERNAL, responsesSent: 0 });

    s.script('c2', [{ responses: 2, response: { cardToken: 't', order_idx: 'x' } }]);
    const metadata = new grpc.Metadata();
    metadata.set(CALL_ID_METADATA_KEY, 'c2');
    const stream = await new Promise<{ count: number; status: grpc.StatusObject }>((resolve) => {
      let count = 0;
      const call = client.ListOrders({}, metadata);
      call.on('data', () => count++);
      call.on('error', () => {});
      call.on('status', (status) => resolve({ count, status }));
    });
    expect(stream.count).toBe(0);
    expect(stream.status.code).toBe(grpc.status.INTERNAL);
    expect(stream.status.details).toMatch(/"order_idx" is not a field of Order/);
  });
});

describe('what the respond option builds is checked as a scripted response is', () => {
  it('ends the attempt INTERNAL for a key that is not a field, at any depth; an instance of a class is not checked', async () => {
    const { client } = await serve(
      {
        proto: PROTO,
        respond: ({ callId }) =>
          callId === 'class'
            ? Object.assign(new (class Reply {})(), { orderId: 'o-2' })
            : callId === 'nested'
              ? { orderId: 'o-1', lineItems: [{ skuu: 'a' }] }
              : { order_id: 'o-1' },
      },
      false,
    );
    const top = await getOrder(client, {}, { [CALL_ID_METADATA_KEY]: 'top' });
    expect(top.err?.code).toBe(grpc.status.INTERNAL);
    expect(top.err?.details).toMatch(
      /the respond option built response\.order_id: "order_id" is not a field of Order .*did you mean "orderId"/,
    );
    const nested = await getOrder(client, {}, { [CALL_ID_METADATA_KEY]: 'nested' });
    expect(nested.err?.details).toMatch(/response\.lineItems\[0\]\.skuu: "skuu" is not a field of LineItem/);
    const instance = await getOrder(client, {}, { [CALL_ID_METADATA_KEY]: 'class' });
    expect(instance.err).toBeNull();
    expect(instance.res).toMatchObject({ orderId: 'o-2' });
  });
});

describe('a response the server cannot serialize', () => {
  it('ends the attempt INTERNAL naming the method and the error, and records it so', async () => {
    const ended: RecordedAttempt[] = [];
    const { s, client } = await serve({ proto: PROTO, onAttemptEnd: (a) => ended.push(a) }, false);
    s.scriptMethod(GET_ORDER, [{ response: { lineItems: 'nope' } }]);
    const { err } = await getOrder(client, {});
    expect(err?.code).toBe(grpc.status.INTERNAL);
    expect(err?.details).toMatch(
      new RegExp(
        `^flaky server: cannot serialize the response of /${GET_ORDER}: .*lineItems: array expected`,
      ),
    );
    await s.waitFor(() => ended.length === 1);
    expect(ended[0]).toMatchObject({ endedWith: grpc.status.INTERNAL, responsesSent: 0 });
    expect(ended[0]!.endedDetails).toBe(err?.details);
  });

  it('sends no message of a stream whose response cannot be serialized', async () => {
    const { s, client } = await serve({ proto: PROTO }, false);
    s.scriptMethod(LIST_ORDERS, [{ responses: 2, response: { lineItems: 5 } }]);
    const { count, status } = await listOrders(client);
    expect(count).toBe(0);
    expect(status.code).toBe(grpc.status.INTERNAL);
    expect(status.details).toMatch(
      /cannot serialize the response of .*ListOrders: .*lineItems: array expected/,
    );
    const [attempt] = s.attemptsOf(LIST_ORDERS);
    expect(attempt).toMatchObject({ endedWith: grpc.status.INTERNAL, responsesSent: 0 });
  });
});

describe('scripts shipped in x-flaky-script', () => {
  it('without a call id, scripts that attempt alone: later plain calls play the method script', async () => {
    const { s, client } = await serve({ proto: PROTO }, false);
    s.scriptMethod(GET_ORDER, [{ response: { orderId: 'method-script' } }]);
    const shipped = JSON.stringify([{ status: 'PERMISSION_DENIED' }, { response: { orderId: 'shipped-2' } }]);
    expect((await getOrder(client, {}, { [SCRIPT_METADATA_KEY]: shipped })).err?.code).toBe(
      grpc.status.PERMISSION_DENIED,
    );
    // attempt 2 of a call (as a retry says it): the shipped script's second entry
    const retry = await getOrder(
      client,
      {},
      { [SCRIPT_METADATA_KEY]: shipped, 'grpc-previous-rpc-attempts': '1' },
    );
    expect(retry.res?.orderId).toBe('shipped-2');
    expect((await getOrder(client, {})).res?.orderId).toBe('method-script');
    expect(s.attempts('').map((a) => a.attempt)).toEqual([1, 2, 1]);
  });

  it('with a call id already scripted differently, is refused with INVALID_ARGUMENT', async () => {
    const { s, client } = await serve({ proto: PROTO }, false);
    const first = { [CALL_ID_METADATA_KEY]: 'k', [SCRIPT_METADATA_KEY]: '[{"status":14}]' };
    expect((await getOrder(client, {}, first)).err?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await getOrder(client, {}, first)).err?.code).toBe(grpc.status.UNAVAILABLE); // the same again: fine
    const other = await getOrder(
      client,
      {},
      { [CALL_ID_METADATA_KEY]: 'k', [SCRIPT_METADATA_KEY]: '[{"status":5}]' },
    );
    expect(other.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(other.err?.details).toMatch(/call id "k" already has a different script/);
    s.reset();
    expect(
      (await getOrder(client, {}, { [CALL_ID_METADATA_KEY]: 'k', [SCRIPT_METADATA_KEY]: '[{"status":5}]' }))
        .err?.code,
    ).toBe(grpc.status.NOT_FOUND);
  });

  it('with a call id already scripted alike, its keys in another order or its text spaced otherwise, is played', async () => {
    const { client } = await serve({ proto: PROTO }, false);
    const shipped = (script: string, attempt: number) =>
      getOrder(
        client,
        {},
        {
          [CALL_ID_METADATA_KEY]: 'same',
          [SCRIPT_METADATA_KEY]: script,
          ...(attempt > 1 ? { 'grpc-previous-rpc-attempts': String(attempt - 1) } : {}),
        },
      );
    // Two clients (say one in Go, one in Node) shipping one script, each serializing it its own way.
    const first = await shipped('[{"status":14,"details":"down"},{"response":{"orderId":"o-1"}}]', 1);
    expect(first.err?.details).toBe('down');
    const second = await shipped(
      '[ {"details": "down", "status": 14}, {"response": {"orderId": "o-1"}} ]',
      2,
    );
    expect(second.err).toBeNull();
    expect(second.res?.orderId).toBe('o-1');
  });
});

describe('requestIdField with requests loaded with keepCase', () => {
  it.each([{}, { requestIdField: 'request_id' }, { requestIdField: 'requestId' }])(
    'reads request_id from a keepCase service with %j',
    async (options) => {
      const { s, client } = await serve({ services: load(true).definition, ...options }, true);
      await getOrder(client, { order_id: 'o', request_id: 'rid-7' });
      expect(s.attemptsOf(GET_ORDER)[0]).toMatchObject({ requestId: 'rid-7', requestIdSource: 'field' });
    },
  );

  it('reads requestId from a camelCase proto with requestIdField "request_id"', async () => {
    const { s, client } = await serve({ proto: PROTO, requestIdField: 'request_id' }, false);
    await getOrder(client, { requestId: 'rid-8' });
    expect(s.attemptsOf(GET_ORDER)[0]).toMatchObject({ requestId: 'rid-8', requestIdSource: 'field' });
  });
});
