import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createRequestIdInterceptor,
  DEFAULT_REQUEST_ID_HEADER,
} from '../../src/request-id/request-id-interceptor.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import {
  CALL_ID_METADATA_KEY,
  FlakyServer,
  loadFlakyTestService,
  type RecordedAttempt,
} from '../../src/testing/index.js';
import { testClient } from '../helpers/harness.js';
import { captureWarnings } from '../helpers/warnings.js';

const SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const retryConfig = {
  methodConfig: [
    {
      name: [{ service: SERVICE }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.01s',
        maxBackoff: '0.02s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};
const hedgingConfig = {
  methodConfig: [{ name: [{ service: SERVICE }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' } }],
};

type Callback = (error: grpc.ServiceError | null, response?: { payload: string; attempt: number }) => void;
interface Client extends grpc.Client {
  Unary(request: object, metadata: grpc.Metadata, callback: Callback): grpc.ClientUnaryCall;
  ClientStream(metadata: grpc.Metadata, callback: Callback): grpc.ClientWritableStream<object>;
  ServerStream(request: object, metadata: grpc.Metadata): grpc.ClientReadableStream<object>;
}
const _Service = loadFlakyTestService();

let server: FlakyServer;
const clients: grpc.Client[] = [];
beforeEach(async () => {
  server = await FlakyServer.start();
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await server.stop();
  vi.restoreAllMocks();
});

function client(interceptors: grpc.Interceptor[]): Client {
  const c = testClient(server.address, interceptors) as unknown as Client;
  clients.push(c);
  return c;
}

function metadataFor(callId: string, extra: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(CALL_ID_METADATA_KEY, callId);
  for (const [key, value] of Object.entries(extra)) md.set(key, value);
  return md;
}

function unary(c: Client, request: object, md: grpc.Metadata) {
  return new Promise<{ error: grpc.ServiceError | null; response?: { payload: string } | undefined }>(
    (resolve) => {
      c.Unary(request, md, (error, response) => resolve({ error, response }));
    },
  );
}

const headerOf = (a: RecordedAttempt) => a.metadata[DEFAULT_REQUEST_ID_HEADER];

describe('request id in a metadata header', () => {
  it('3 retry attempts carry the same generated UUID v4', async () => {
    server.script('r', [{ status: 14 }, { status: 14 }, {}]);
    const c = client([createRequestIdInterceptor(), createRetryInterceptor(retryConfig)]);
    const { error } = await unary(c, { payload: 'p' }, metadataFor('r'));
    expect(error).toBeNull();
    const attempts = server.attempts('r');
    expect(attempts.map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
    const ids = new Set(attempts.map(headerOf));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(UUID_V4);
  });

  it('2 hedges carry the same id', async () => {
    server.script('h', [{ delayMs: 2000 }, {}]);
    const c = client([createRequestIdInterceptor(), createRetryInterceptor(hedgingConfig)]);
    const { error } = await unary(c, { payload: 'p' }, metadataFor('h'));
    expect(error).toBeNull();
    await server.waitForAttempts('h', 2);
    const attempts = server.attempts('h');
    expect(attempts).toHaveLength(2);
    expect(headerOf(attempts[0]!)).toMatch(UUID_V4);
    expect(headerOf(attempts[1]!)).toBe(headerOf(attempts[0]!));
  });

  it("keeps the caller's id, gives each call its own, and never changes the caller's Metadata", async () => {
    const c = client([
      createRequestIdInterceptor({ header: 'x-goog-request-id' }),
      createRetryInterceptor(retryConfig),
    ]);
    await unary(c, {}, metadataFor('own', { 'x-goog-request-id': 'mine-1' }));
    expect(server.attempts('own')[0]!.metadata['x-goog-request-id']).toBe('mine-1');

    const shared = metadataFor('shared');
    await unary(c, {}, shared);
    await unary(c, {}, shared);
    const [first, second] = server.attempts('shared');
    expect(first!.metadata['x-goog-request-id']).toMatch(UUID_V4);
    expect(second!.metadata['x-goog-request-id']).toMatch(UUID_V4);
    expect(second!.metadata['x-goog-request-id']).not.toBe(first!.metadata['x-goog-request-id']);
    expect(shared.get('x-goog-request-id')).toEqual([]);
  });

  it('placed after the retry interceptor, each attempt gets a new id, and it says so once', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    server.script('wrong', [{ status: 14 }, { status: 14 }, {}]);
    const c = client([createRetryInterceptor(retryConfig), createRequestIdInterceptor()]);
    await unary(c, {}, metadataFor('wrong'));
    expect(new Set(server.attempts('wrong').map(headerOf)).size).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain(
      'put createRequestIdInterceptor before createRetryInterceptor',
    );
  });

  it('only for the methods asked', async () => {
    let n = 0;
    const c = client([
      createRequestIdInterceptor({
        methods: (path) => path.endsWith('/ServerStream'),
        generate: () => `id-${++n}`,
      }),
    ]);
    await unary(c, {}, metadataFor('skip'));
    expect(headerOf(server.attempts('skip')[0]!)).toBeUndefined();
    expect(n).toBe(0);
  });
});

describe('request id in a request field', () => {
  it('3 retry attempts and 2 hedges carry the same id in the field', async () => {
    server.script('fr', [{ status: 14 }, { status: 14 }, {}]);
    const retrying = client([
      createRequestIdInterceptor({ field: 'payload' }),
      createRetryInterceptor(retryConfig),
    ]);
    const { response } = await unary(retrying, {}, metadataFor('fr'));
    const retried = server.attempts('fr').map((a) => a.messages[0]);
    expect(retried).toHaveLength(3);
    expect(new Set(retried).size).toBe(1);
    expect(retried[0]).toMatch(UUID_V4);
    expect(response?.payload).toBe(retried[0]); // the server echoes the payload: the filled request reached it

    server.script('fh', [{ delayMs: 2000 }, {}]);
    const hedging = client([
      createRequestIdInterceptor({ field: 'payload' }),
      createRetryInterceptor(hedgingConfig),
    ]);
    await unary(hedging, { payload: '' }, metadataFor('fh'));
    await server.waitForAttempts('fh', 2);
    const hedged = server.attempts('fh').map((a) => a.messages[0]);
    expect(hedged).toHaveLength(2);
    expect(hedged[0]).toMatch(UUID_V4);
    expect(hedged[1]).toBe(hedged[0]);
  });

  it("keeps a caller's id and never changes the caller's request object", async () => {
    const c = client([createRequestIdInterceptor({ field: 'payload', generate: () => 'generated' })]);
    const request: { payload?: string } = {};
    await unary(c, request, metadataFor('f1'));
    await unary(c, { payload: 'mine' }, metadataFor('f2'));
    expect(request).toEqual({});
    expect(server.attempts('f1')[0]!.messages).toEqual(['generated']);
    expect(server.attempts('f2')[0]!.messages).toEqual(['mine']);
  });

  it('a field that is not a string ends the call with INTERNAL, once', async () => {
    const c = client([createRequestIdInterceptor({ field: 'payload' }), createRetryInterceptor(retryConfig)]);
    const { error } = await unary(c, { payload: 42 }, metadataFor('bad'));
    expect(error?.code).toBe(grpc.status.INTERNAL);
    expect(error?.details).toContain(
      'field payload of the /grpc_retry_hedging.testing.v1.FlakyTest/Unary request holds number',
    );
    expect(server.attempts('bad')).toHaveLength(0);
  });

  it('leaves request streams alone (each message would need its own id)', async () => {
    const c = client([createRequestIdInterceptor({ field: 'payload', generate: () => 'generated' })]);
    await new Promise<void>((resolve) => {
      const call = c.ClientStream(metadataFor('cs'), () => resolve());
      call.write({});
      call.write({ payload: 'b' });
      call.end();
    });
    expect(server.attempts('cs')[0]!.messages).toEqual(['', 'b']);
  });
});

describe('a field the serializer drops', () => {
  it("request_id under proto-loader's defaults: warns once per method, with the loader's spelling", async () => {
    const warnings = captureWarnings();
    const c = client([
      createRequestIdInterceptor({ field: 'request_id' }),
      createRetryInterceptor(retryConfig),
    ]);
    await unary(c, {}, metadataFor('snake-1'));
    await unary(c, {}, metadataFor('snake-2'));
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_FIELD']);
    expect(warnings[0]?.message).toContain(
      'field request_id is not in the /grpc_retry_hedging.testing.v1.FlakyTest/Unary request as it is serialized',
    );
    expect(warnings[0]?.message).toContain('did you mean requestId?');
    await new Promise<void>((resolve) => {
      c.ServerStream({}, metadataFor('snake-3'))
        .on('status', () => resolve())
        .resume();
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[1]?.message).toContain('/grpc_retry_hedging.testing.v1.FlakyTest/ServerStream request');
  });

  it('a field the request has in neither spelling: says so, and how to leave the method out, not to respell it', async () => {
    const warnings = captureWarnings();
    const c = client([createRequestIdInterceptor({ field: 'idempotencyKey' })]);
    await unary(c, {}, metadataFor('none'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain(
      ": the request has neither idempotencyKey nor idempotency_key, so this method's requests have no such field; leave it out with the interceptor's methods option",
    );
    expect(warnings[0]?.message).not.toContain('spell it');
  });

  it("a one-word name, which has no other spelling: the hint names the loader's two conventions", async () => {
    const warnings = captureWarnings();
    const c = client([createRequestIdInterceptor({ field: 'nonce' })]);
    await unary(c, {}, metadataFor('word'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain("requestId with @grpc/proto-loader's defaults");
  });

  it('the spelling the loader uses: no warning', async () => {
    const warnings = captureWarnings();
    const c = client([createRequestIdInterceptor({ field: 'requestId', generate: () => 'the-id' })]);
    const { error } = await unary(c, {}, metadataFor('camel'));
    expect(error).toBeNull();
    expect(warnings).toEqual([]);
  });
});

describe('createRequestIdInterceptor options', () => {
  it('names the bad option', () => {
    expect(() => createRequestIdInterceptor({ header: 'X-Request-Id' })).toThrow(
      'options.header must be a lowercase text metadata key',
    );
    expect(() => createRequestIdInterceptor({ header: 'x-id-bin' })).toThrow(TypeError);
    expect(() => createRequestIdInterceptor({ header: 'grpc-id' })).toThrow(TypeError);
    expect(() => createRequestIdInterceptor({ header: 'x-a', field: 'requestId' })).toThrow(
      'give field or header, not both',
    );
    expect(() => createRequestIdInterceptor({ field: 'request id' })).toThrow(
      'options.field must be a field name',
    );
    expect(() => createRequestIdInterceptor({ generate: 'uuid' as never })).toThrow(
      'options.generate must be a function',
    );
    expect(() => createRequestIdInterceptor({ fields: 'x' } as never)).toThrow(
      'options.fields is not an option',
    );
  });
});

describe('the field check, over many methods (a proxy calling paths without end)', () => {
  it('asks the serializer of the first 1,000 methods only, so that it keeps no more of them', () => {
    const interceptor = createRequestIdInterceptor({ field: 'requestId', generate: () => 'id' });
    let checks = 0;
    const sendOne = (path: string) => {
      const definition = {
        path,
        requestStream: false,
        responseStream: false,
        // Counts the check's serializations; keeps the field, so nothing is warned.
        requestSerialize: (value: object) => {
          checks += 1;
          return Buffer.from(JSON.stringify(value));
        },
        responseDeserialize: (bytes: Buffer) => bytes,
      };
      const sent: unknown[] = [];
      const next = {
        start: () => {},
        sendMessageWithContext: (_context: object, message: unknown) => sent.push(message),
        sendMessage: (message: unknown) => sent.push(message),
        halfClose: () => {},
        cancelWithStatus: () => {},
        startRead: () => {},
        getPeer: () => '',
      };
      const call = interceptor(
        { method_definition: definition } as unknown as grpc.InterceptorOptions,
        () => next as unknown as grpc.InterceptingCall,
      );
      call.start(new grpc.Metadata(), {});
      call.sendMessage({});
      expect(sent).toEqual([{ requestId: 'id' }]);
    };
    for (let i = 0; i < 1_000; i++) sendOne(`/pkg.S/M${i}`);
    expect(checks).toBe(2_000); // the filled request and the caller's, once per method
    sendOne('/pkg.S/M0'); // checked already
    sendOne('/pkg.S/M1000'); // past the limit: not checked, not kept
    sendOne('/pkg.S/M1001');
    expect(checks).toBe(2_000);
  });
});
