import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRetryInterceptor, DEFAULT_REQUEST_ID_HEADER } from '../../src/index.js';
import {
  CALL_ID_METADATA_KEY,
  createFlakyTestClient,
  DEFAULT_REQUEST_ID_FIELD,
  FlakyServer,
  type FlakyServerOptions,
  type FlakyTestClient,
  type FlakyTestRequest,
  greeterProtoPath,
} from '../../src/testing/index.js';

let server: FlakyServer | undefined;
let client: FlakyTestClient | undefined;

async function start(options: FlakyServerOptions = {}, interceptors: grpc.Interceptor[] = []) {
  server = await FlakyServer.start(options);
  client = createFlakyTestClient(server.address, {
    interceptors,
    channelOptions: { 'grpc.enable_retries': 0 },
  });
  return { server, client };
}

afterEach(async () => {
  client?.close();
  await server?.stop();
  client = undefined;
  server = undefined;
});

function metadata(callId: string, headers: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(CALL_ID_METADATA_KEY, callId);
  for (const [key, value] of Object.entries(headers)) {
    md.set(key, value);
  }
  return md;
}

function unary(
  c: FlakyTestClient,
  request: FlakyTestRequest,
  md: grpc.Metadata,
): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) => {
    c.Unary(request, md, (error) => resolve(error));
  });
}

function clientStream(c: FlakyTestClient, requests: FlakyTestRequest[], md: grpc.Metadata): Promise<void> {
  return new Promise((resolve) => {
    const call = c.ClientStream(md, () => resolve());
    for (const request of requests) {
      call.write(request);
    }
    call.end();
  });
}

describe('request id recording (AIP-155)', () => {
  it('uses x-request-id and the request_id field by default', () => {
    expect(DEFAULT_REQUEST_ID_HEADER).toBe('x-request-id');
    expect(DEFAULT_REQUEST_ID_FIELD).toBe('request_id');
  });

  it('records the x-request-id header, or nothing when the attempt has no id', async () => {
    const { server, client } = await start();
    await unary(client, { payload: 'a' }, metadata('h', { 'x-request-id': 'id-h' }));
    await unary(client, { payload: 'a' }, metadata('none'));
    expect(server.attempts('h').map((a) => [a.requestId, a.requestIdSource])).toEqual([['id-h', 'header']]);
    expect(server.attempts('none')[0]!.requestId).toBeUndefined();
    expect(server.attempts('none')[0]!.requestIdSource).toBeUndefined();
  });

  it('prefers the request_id field over the header, and ignores an empty field', async () => {
    const { server, client } = await start();
    await unary(client, { requestId: 'from-field' }, metadata('f', { 'x-request-id': 'from-header' }));
    await unary(client, { requestId: '' }, metadata('e', { 'x-request-id': 'from-header' }));
    expect(server.attempts('f')[0]).toMatchObject({ requestId: 'from-field', requestIdSource: 'field' });
    expect(server.attempts('e')[0]).toMatchObject({ requestId: 'from-header', requestIdSource: 'header' });
  });

  it('takes the first message that carries the field in a client stream', async () => {
    const { server, client } = await start();
    await clientStream(
      client,
      [{ payload: '1' }, { requestId: 'second' }, { requestId: 'third' }],
      metadata('cs'),
    );
    expect(server.attempts('cs')[0]).toMatchObject({ requestId: 'second', requestIdSource: 'field' });
  });

  it('reads the header and field the options name, and neither when both are false', async () => {
    const { server, client } = await start({
      requestIdHeader: 'x-idempotency-key',
      requestIdField: 'payload',
    });
    await unary(
      client,
      { payload: '' },
      metadata('k', { 'x-idempotency-key': 'key-1', 'x-request-id': 'no' }),
    );
    await unary(client, { payload: 'p-1', requestId: 'no' }, metadata('p'));
    expect(server.attempts('k')[0]).toMatchObject({ requestId: 'key-1', requestIdSource: 'header' });
    expect(server.attempts('p')[0]).toMatchObject({ requestId: 'p-1', requestIdSource: 'field' });
    await server.stop();
    client.close();

    const off = await start({ requestIdHeader: false, requestIdField: false });
    await unary(off.client, { requestId: 'r' }, metadata('off', { 'x-request-id': 'h' }));
    expect(off.server.attempts('off')[0]!.requestId).toBeUndefined();
  });

  it('accepts the camelCase field name too', async () => {
    const { server, client } = await start({ requestIdField: 'requestId' });
    await unary(client, { requestId: 'camel' }, metadata('c'));
    expect(server.attempts('c')[0]!.requestId).toBe('camel');
  });

  it('shows the same id on every retry attempt of a call', async () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
          retryPolicy: {
            maxAttempts: 3,
            initialBackoff: '0.001s',
            maxBackoff: '0.001s',
            backoffMultiplier: 1,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const { server, client } = await start({}, [createRetryInterceptor(config)]);
    server.script('r', [{ status: 'UNAVAILABLE' }, { status: 'unavailable' }, {}]);
    const error = await unary(client, { requestId: 'same-id' }, metadata('r', { 'x-request-id': 'hdr' }));
    expect(error).toBeNull();
    const attempts = server.attempts('r');
    expect(attempts.map((a) => a.requestId)).toEqual(['same-id', 'same-id', 'same-id']);
    expect(attempts.map((a) => a.metadata['x-request-id'])).toEqual(['hdr', 'hdr', 'hdr']);
    expect(attempts.map((a) => a.endedWith)).toEqual([
      grpc.status.UNAVAILABLE,
      grpc.status.UNAVAILABLE,
      grpc.status.OK,
    ]);
  });
});

describe('request id over hedges', () => {
  it('shows the same id on both hedged attempts, the losing one cancelled', async () => {
    const config = {
      methodConfig: [
        {
          name: [{ service: 'grpc_retry_hedging.testing.v1.FlakyTest' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' },
        },
      ],
    };
    const { server, client } = await start({}, [createRetryInterceptor(config)]);
    server.script('h', [{ delayMs: 5_000 }, {}]);
    expect(await unary(client, { requestId: 'hedged-id' }, metadata('h'))).toBeNull();
    await server.waitFor(() => server.attempts('h')[0]?.cancelled === true);
    expect(server.attempts('h').map((a) => a.requestId)).toEqual(['hedged-id', 'hedged-id']);
  });
});

describe('FlakyServer.start options', () => {
  it.each([
    [{ requestIdHeader: 'X-Request-Id' }, /option "requestIdHeader" must be a lowercase metadata key/],
    [{ requestIdHeader: 'x-id-bin' }, /option "requestIdHeader"/],
    [{ requestIdHeader: 3 }, /option "requestIdHeader"/],
    [
      { requestIdField: 'blob' },
      /option "requestIdField" must name a string field of TestRequest \(payload, request_id\)/,
    ],
    [{ requestIdField: 'nope' }, /option "requestIdField".*got "nope"/],
    [
      { requestIdFeild: 'x' },
      /FlakyServer: options\.requestIdFeild is not an option; did you mean "requestIdField"\? \(known: port, host,/,
    ],
    [{ onAttempt: 'x' }, /option "onAttempt" must be a function/],
    [{ onAttemptEnd: 1 }, /option "onAttemptEnd" must be a function/],
    [{ host: '' }, /option "host"/],
    [{ scripts: 1 }, /option "scripts"/],
    [{ serverOptions: 1 }, /option "serverOptions"/],
  ])('rejects %j with a TypeError naming the option', async (options, message) => {
    const started = FlakyServer.start(options as FlakyServerOptions);
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(message);
  });

  it('with services of your own, a requestIdField that is no field name is refused without naming FlakyTest', async () => {
    for (const [requestIdField, shown] of [
      [5, '5'],
      ['', '""'],
      ['order-id', '"order-id"'],
    ] as const) {
      await expect(
        FlakyServer.start({
          proto: greeterProtoPath(),
          serveFlakyTest: false,
          requestIdField: requestIdField as never,
        }),
      ).rejects.toThrow(
        new TypeError(
          `FlakyServer: option "requestIdField" must be a field name (such as "request_id" or "requestId"), or false; got ${shown}`,
        ),
      );
    }
  });

  it('rejects a port out of range with a RangeError', async () => {
    await expect(FlakyServer.start({ port: -1 })).rejects.toThrow(RangeError);
    await expect(FlakyServer.start({ port: 1.5 })).rejects.toThrow(
      /option "port" must be an integer 0..65535/,
    );
  });

  it('accepts status names in initial scripts', async () => {
    const { server, client } = await start({ scripts: { s: [{ status: 'PERMISSION_DENIED' }] } });
    expect((await unary(client, {}, metadata('s')))?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(server.attempts('s')[0]!.endedWith).toBe(grpc.status.PERMISSION_DENIED);
  });
});
