/**
 * The flaky server used as a user would, with their own protos: what the `respond` hook may return, the
 * `requestIdField` checked against the served request messages, the google.rpc.Status of a scripted failure,
 * method names two services share, attempts cut off by the server's stop, and waiting with the attempt log off.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs/light.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STATUS_DETAILS_METADATA_KEY } from '../../src/shared/headers.js';
import { methodLikeCallId } from '../../src/testing/call-id-resemblance.js';
import { CALL_ID_METADATA_KEY, FlakyServer, type FlakyServerOptions } from '../../src/testing/index.js';
import { testClient, unary } from '../helpers/harness.js';
import { captureWarnings } from '../helpers/warnings.js';

const SHOP = 'test/testing/fixtures/shop-orders.proto';
const BILLING = 'test/testing/fixtures/billing-orders.proto';
const SHOP_GET = 'acme.shop.v1.OrderService/GetOrder';
const BILLING_GET = 'acme.billing.v1.OrderService/GetOrder';

type Message = Record<string, unknown>;
interface ShopClient extends grpc.Client {
  GetOrder(request: Message, metadata: grpc.Metadata, callback: grpc.requestCallback<Message>): unknown;
  WatchOrder(request: Message, metadata: grpc.Metadata): grpc.ClientReadableStream<Message>;
  UploadOrders(
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<Message>,
  ): grpc.ClientWritableStream<Message>;
  SyncOrders(metadata: grpc.Metadata): grpc.ClientDuplexStream<Message, Message>;
}
type ShopConstructor = new (address: string, credentials: grpc.ChannelCredentials) => ShopClient;
interface BillingClient extends grpc.Client {
  GetOrder(request: Message, metadata: grpc.Metadata, callback: grpc.requestCallback<Message>): unknown;
}
type BillingConstructor = new (address: string, credentials: grpc.ChannelCredentials) => BillingClient;

const loaded = grpc.loadPackageDefinition(protoLoader.loadSync([SHOP, BILLING])) as unknown as {
  acme: {
    shop: { v1: { OrderService: ShopConstructor } };
    billing: { v1: { OrderService: BillingConstructor } };
  };
};

let server: FlakyServer | undefined;
let clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await server?.stop();
  server = undefined;
  vi.restoreAllMocks();
});

async function serveShop(options: FlakyServerOptions): Promise<{ s: FlakyServer; shop: ShopClient }> {
  server = await FlakyServer.start({ proto: SHOP, serveFlakyTest: false, ...options });
  const shop = new loaded.acme.shop.v1.OrderService(server.address, grpc.credentials.createInsecure());
  clients.push(shop);
  return { s: server, shop };
}

function md(callId: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(CALL_ID_METADATA_KEY, callId);
  return metadata;
}

interface Outcome {
  code: number;
  details: string;
  replies: number;
}

/** One call of each kind of the shop's OrderService, each with its own call id, as its client sees it. */
function callEachKind(client: ShopClient): Promise<Record<string, Outcome>> {
  const single = (start: (cb: grpc.requestCallback<Message>) => void): Promise<Outcome> =>
    new Promise((resolve) => {
      start((err) =>
        resolve({ code: err?.code ?? grpc.status.OK, details: err?.details ?? '', replies: err ? 0 : 1 }),
      );
    });
  const streamed = (call: grpc.ClientReadableStream<Message>): Promise<Outcome> =>
    new Promise((resolve) => {
      let replies = 0;
      call.on('data', () => replies++);
      call.on('error', () => {});
      call.on('status', (status) => resolve({ code: status.code, details: status.details, replies }));
    });
  const unaryCall = single((cb) => client.GetOrder({ orderId: 'o' }, md('unary'), cb));
  const clientStream = single((cb) => {
    const call = client.UploadOrders(md('client-stream'), cb);
    call.write({ orderId: 'o' });
    call.end();
  });
  const serverStream = streamed(client.WatchOrder({ orderId: 'o' }, md('server-stream')));
  const duplex = client.SyncOrders(md('bidi'));
  const bidi = streamed(duplex);
  duplex.write({ orderId: 'o' });
  duplex.end();
  return Promise.all([unaryCall, serverStream, clientStream, bidi]).then(([u, ss, cs, b]) => ({
    unary: u!,
    'server-stream': ss!,
    'client-stream': cs!,
    bidi: b!,
  }));
}

const KINDS: Record<string, string> = {
  unary: '/acme.shop.v1.OrderService/GetOrder',
  'server-stream': '/acme.shop.v1.OrderService/WatchOrder',
  'client-stream': '/acme.shop.v1.OrderService/UploadOrders',
  bidi: '/acme.shop.v1.OrderService/SyncOrders',
};

describe('what the respond hook returns: the same for all four method kinds', () => {
  it('refuses a Promise (an async hook) with INTERNAL naming the hook and the method, recorded so', async () => {
    const { s, shop } = await serveShop({ respond: async () => ({ orderId: 'late' }) });
    const outcomes = await callEachKind(shop);
    for (const [kind, method] of Object.entries(KINDS)) {
      expect(outcomes[kind], kind).toEqual({
        code: grpc.status.INTERNAL,
        details: `flaky server respond hook: returned a Promise for ${method}; it must return the response message itself, synchronously: build what needs awaiting before the call, or give it as the script's response with script() or scriptMethod()`,
        replies: 0,
      });
      const [attempt] = s.attempts(kind);
      expect(attempt, kind).toMatchObject({ endedWith: grpc.status.INTERNAL, responsesSent: 0 });
    }
  });

  it('an async hook that rejects is reported the same, with no unhandled rejection', async () => {
    const { shop } = await serveShop({
      respond: async () => {
        throw new Error('no order');
      },
    });
    const outcomes = await callEachKind(shop);
    expect(outcomes.unary!.details).toMatch(/^flaky server respond hook: returned a Promise for /);
    await new Promise((resolve) => setTimeout(resolve, 20)); // an unhandled rejection would fail the run here
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    ['o-1', 'a string, "o-1"'],
    [[{ orderId: 'o-1' }], 'an array'],
  ])(
    'refuses %j (a hook that forgets to return, say) for every kind, naming the method',
    async (value, got) => {
      const { s, shop } = await serveShop({ respond: () => value });
      const outcomes = await callEachKind(shop);
      for (const [kind, method] of Object.entries(KINDS)) {
        expect(outcomes[kind], kind).toEqual({
          code: grpc.status.INTERNAL,
          details: `flaky server respond hook: returned ${got} for ${method}; it must return the response message, an object (return {} for an empty message)`,
          replies: 0,
        });
        expect(s.attempts(kind)[0]!.endedWith, kind).toBe(grpc.status.INTERNAL);
      }
    },
  );

  it('still sends {} and objects it returns, and {} when there is no hook', async () => {
    const { shop } = await serveShop({ respond: () => ({}) });
    const outcomes = await callEachKind(shop);
    for (const kind of Object.keys(KINDS)) {
      expect(outcomes[kind]!.code, kind).toBe(grpc.status.OK);
    }
  });
});

describe('requestIdField is checked against the request messages of the served methods', () => {
  it('refuses a field no request message has, naming the types looked at and the field meant', async () => {
    await expect(
      FlakyServer.start({ proto: SHOP, serveFlakyTest: false, requestIdField: 'order_idd' }),
    ).rejects.toThrow(
      new TypeError(
        'FlakyServer: option "requestIdField" is "order_idd", but no served method\'s request message has a string field of that name (looked at: acme.shop.v1.GetOrderRequest); did you mean "order_id"?',
      ),
    );
    await expect(FlakyServer.start({ proto: [SHOP, BILLING], requestIdField: 'requestIdd' })).rejects.toThrow(
      /\(looked at: grpc_retry_hedging\.testing\.v1\.TestRequest, acme\.shop\.v1\.GetOrderRequest, acme\.billing\.v1\.GetOrderRequest\); did you mean "requestId"\?/,
    );
  });

  it('refuses a field that is not a string, saying of which type it is', async () => {
    await expect(
      FlakyServer.start({ proto: SHOP, serveFlakyTest: false, requestIdField: 'order_number' }),
    ).rejects.toThrow(
      '(looked at: acme.shop.v1.GetOrderRequest); orderNumber of acme.shop.v1.GetOrderRequest is an int64 field, not a string; name a string field of one of them, or give false to read no field',
    );
  });

  it('takes a field some request messages have and others lack: those record no field id', async () => {
    server = await FlakyServer.start({ proto: [SHOP, BILLING], requestIdField: 'invoice_ref' });
    const billing = new loaded.acme.billing.v1.OrderService(
      server.address,
      grpc.credentials.createInsecure(),
    );
    const shop = new loaded.acme.shop.v1.OrderService(server.address, grpc.credentials.createInsecure());
    clients.push(billing, shop);
    await new Promise((resolve) => billing.GetOrder({ invoiceRef: 'inv-7' }, md('b'), resolve));
    await new Promise((resolve) => shop.GetOrder({ orderId: 'o-7' }, md('s'), resolve));
    expect(server.attempts('b')[0]).toMatchObject({ requestId: 'inv-7', requestIdSource: 'field' });
    expect(server.attempts('s')[0]!.requestId).toBeUndefined();
  });

  it('leaves the default (request_id) alone when no request message has it', async () => {
    server = await FlakyServer.start({ proto: SHOP, serveFlakyTest: false });
    expect(server.servedMethods()).toContain(`/${SHOP_GET}`);
  });
});

/** The `message` of the google.rpc.Status in `grpc-status-details-bin` (field 2). */
function statusMessage(trailers: grpc.Metadata | undefined): string | undefined {
  const [bytes] = trailers?.get(STATUS_DETAILS_METADATA_KEY) ?? [];
  if (!(bytes instanceof Uint8Array)) return undefined;
  const reader = protobuf.Reader.create(bytes);
  let message = '';
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 2) message = reader.string();
    else reader.skipType(tag & 7);
  }
  return message;
}

describe('the google.rpc.Status of a scripted failure with retryInfoMs', () => {
  it('carries the details the client gets as its message, the default ones too', async () => {
    server = await FlakyServer.start({
      scripts: {
        d: [{ status: 'UNAVAILABLE', retryInfoMs: 20 }],
        e: [{ status: 14, retryInfoMs: 20, details: 'busy' }],
      },
    });
    const client = testClient(server.address);
    clients.push(client);
    const byDefault = await unary(client, 'd');
    expect(byDefault.error?.details).toBe('scripted failure (attempt 1)');
    expect(statusMessage(byDefault.trailers ?? byDefault.error?.metadata)).toBe(
      'scripted failure (attempt 1)',
    );
    const given = await unary(client, 'e');
    expect(statusMessage(given.trailers ?? given.error?.metadata)).toBe('busy');
  });
});

describe('a method name several served services have', () => {
  it('names every candidate in the call-id warning', async () => {
    server = await FlakyServer.start({ proto: [SHOP, BILLING] });
    const warnings = captureWarnings();
    server.script('GetOrder', [{}]);
    server.script('OrderService', [{}]);
    expect(warnings.map((w) => w.message)).toEqual([
      `grpc-retry-hedging: FlakyServer.script("GetOrder"): "GetOrder" scripts the calls whose x-flaky-call-id is "GetOrder", not a method; several served methods fit it ("${SHOP_GET}" or "${BILLING_GET}"): to script one, call scriptMethod with it, such as scriptMethod("${SHOP_GET}", attempts), or pass methodScripts`,
      `grpc-retry-hedging: FlakyServer.script("OrderService"): "OrderService" scripts the calls whose x-flaky-call-id is "OrderService", not a method; to script the methods of acme.shop.v1.OrderService or acme.billing.v1.OrderService, script each one with scriptMethod, such as scriptMethod("${SHOP_GET}", attempts)`,
    ]);
  });

  it('names every candidate for a partial name given to scriptMethod and attemptsOf', async () => {
    server = await FlakyServer.start({ proto: [SHOP, BILLING] });
    const candidates = `did you mean one of "${SHOP_GET}", "${BILLING_GET}"? (several served services have that name: give the package of the one meant)`;
    expect(() => server!.scriptMethod('OrderService/GetOrder', [{}])).toThrow(
      `FlakyServer.scriptMethod: no served method "OrderService/GetOrder"; ${candidates}`,
    );
    expect(() => server!.attemptsOf('/OrderService/GetOrder')).toThrow(
      `FlakyServer.attemptsOf: no served method "OrderService/GetOrder"; ${candidates}`,
    );
  });

  it('methodLikeCallId lists them, and keeps one method or service as it was', () => {
    const served = new Set([`/${SHOP_GET}`, `/${BILLING_GET}`, '/acme.shop.v1.OrderService/WatchOrder']);
    const both = { kind: 'method', method: SHOP_GET, methods: [SHOP_GET, BILLING_GET] };
    expect(methodLikeCallId('GetOrder', served)).toEqual(both);
    expect(methodLikeCallId('OrderService/GetOrder', served)).toEqual(both);
    expect(methodLikeCallId('get-order', served)).toEqual(both);
    expect(methodLikeCallId('WatchOrder', served)).toStrictEqual({
      kind: 'method',
      method: 'acme.shop.v1.OrderService/WatchOrder',
    });
    expect(methodLikeCallId('acme.billing.v1.OrderService.GetOrder', served)).toStrictEqual({
      kind: 'method',
      method: BILLING_GET,
    });
    expect(methodLikeCallId('OrderService', served)).toEqual({
      kind: 'service',
      service: 'acme.shop.v1.OrderService',
      example: SHOP_GET,
      services: ['acme.shop.v1.OrderService', 'acme.billing.v1.OrderService'],
    });
  });
});

describe('attempts cut off by the server stopping', () => {
  it('are recorded cancelled and cutOffByStop, by stop(grace) and by forceStop()', async () => {
    for (const stop of [(s: FlakyServer) => s.stop(30), (s: FlakyServer) => s.forceStop()]) {
      const own = await FlakyServer.start({ scripts: { long: [{ delayMs: 10_000 }] } });
      const client = testClient(own.address);
      try {
        const pending = unary(client, 'long');
        await own.waitForAttempts('long', 1);
        await stop(own);
        await pending;
        await own.waitFor(() => own.attempts('long')[0]!.cancelled);
        const [attempt] = own.attempts('long');
        expect(attempt).toMatchObject({ cancelled: true, cutOffByStop: true, endedWith: undefined });
        expect(attempt!.endedAt).toBeTypeOf('number');
      } finally {
        client.close();
        own.forceStop();
      }
    }
  });

  it('are not mixed up with attempts the client cancelled', async () => {
    server = await FlakyServer.start({ scripts: { gone: [{ delayMs: 10_000 }] } });
    const client = testClient(server.address);
    clients.push(client);
    let call: { cancel(): void } | undefined;
    const pending = unary(client, 'gone', undefined, { onCall: (c) => (call = c) });
    await server.waitForAttempts('gone', 1);
    call?.cancel();
    await pending;
    await server.waitFor(() => server!.attempts('gone')[0]!.cancelled);
    expect(server.attempts('gone')[0]!.cutOffByStop).toBeUndefined();
  });
});

describe('waitForAttempts with the attempt log off', () => {
  it('says so at once, rather than time out', async () => {
    server = await FlakyServer.start({ maxRecordedAttempts: 0 });
    const client = testClient(server.address);
    clients.push(client);
    await unary(client, 'c1');
    const started = Date.now();
    await expect(server.waitForAttempts('c1', 1, 60_000)).rejects.toThrow(
      'FlakyServer.waitForAttempts: the attempt log is off (maxRecordedAttempts 0), so no attempt is ever recorded; count attempts with onAttemptEnd, or start the server with maxRecordedAttempts > 0',
    );
    expect(Date.now() - started).toBeLessThan(30_000); // not the 60 s timeout
  });
});

describe('an async onAttempt hook that rejects', () => {
  it('ends the attempt INTERNAL, with no unhandled rejection', async () => {
    server = await FlakyServer.start({
      onAttempt: (async () => {
        throw new Error('no script');
      }) as never,
    });
    const client = testClient(server.address);
    clients.push(client);
    const outcome = await unary(client, 'x');
    expect(outcome.error?.details).toMatch(/^flaky server onAttempt hook: returned a Promise/);
    await new Promise((resolve) => setTimeout(resolve, 20)); // an unhandled rejection would fail the run here
  });
});
