import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CALL_ID_METADATA_KEY,
  createFlakyTestClient,
  FlakyServer,
  type FlakyTestClient,
  type FlakyTestRequest,
  type FlakyTestResponse,
  flakyTestProtoPath,
  loadFlakyTestService,
} from '../../src/testing/index.js';

/** Field names of a message of flaky_test.proto, as proto-loader delivers them (camelCase). */
function protoFields(message: string): string[] {
  const definition = protoLoader.loadSync(flakyTestProtoPath(), { keepCase: false })[
    `grpc_retry_hedging.testing.v1.${message}`
  ] as { type: { field: Array<{ name: string }> } };
  return definition.type.field.map((f) => f.name).sort();
}

describe('the hand-typed client agrees with flaky_test.proto', () => {
  it('types every request and response field, and no other', () => {
    // Required<> and the object literals make tsc fail when the interface gains or loses a field.
    const request: Required<FlakyTestRequest> = { payload: '', blob: '', requestId: '' };
    const response: FlakyTestResponse = { payload: '', attempt: 0, messagesReceived: 0, index: 0 };
    expect(Object.keys(request).sort()).toEqual(protoFields('TestRequest'));
    expect(Object.keys(response).sort()).toEqual(protoFields('TestResponse'));
  });

  it('types every method with its streaming kind, under both names grpc-js installs', () => {
    const FlakyTest = loadFlakyTestService();
    const kinds = Object.fromEntries(
      Object.entries(FlakyTest.service).map(([name, m]) => [name, [m.requestStream, m.responseStream]]),
    );
    expect(kinds).toEqual({
      Unary: [false, false],
      ServerStream: [false, true],
      ClientStream: [true, false],
      Bidi: [true, true],
    });
    const methods: Array<keyof FlakyTestClient> = ['Unary', 'unary', 'ServerStream', 'serverStream'];
    methods.push('ClientStream', 'clientStream', 'Bidi', 'bidi');
    for (const name of methods) {
      expect(typeof FlakyTest.prototype[name], name).toBe('function');
    }
    expect(FlakyTest.serviceName).toBe('FlakyTest');
  });
});

describe('createFlakyTestClient', () => {
  let server: FlakyServer;
  beforeAll(async () => {
    server = await FlakyServer.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('makes a typed client that calls all four methods', async () => {
    const seen: string[] = [];
    const interceptor: grpc.Interceptor = (options, next) => {
      seen.push(options.method_definition.path);
      return new grpc.InterceptingCall(next(options));
    };
    const client = createFlakyTestClient(server.address, {
      interceptors: [interceptor],
      channelOptions: { 'grpc.enable_retries': 0 },
    });
    try {
      server.script('typed', [{ status: 'UNAVAILABLE' }, {}]);
      const metadata = new grpc.Metadata();
      metadata.set(CALL_ID_METADATA_KEY, 'typed');
      const failed = await new Promise<grpc.ServiceError | null>((resolve) => {
        client.Unary({ payload: 'a' }, metadata, (error) => resolve(error));
      });
      expect(failed?.code).toBe(grpc.status.UNAVAILABLE);
      const response = await new Promise<FlakyTestResponse | undefined>((resolve, reject) => {
        client.unary({ payload: 'b' }, metadata, {}, (error, value) =>
          error ? reject(error) : resolve(value),
        );
      });
      expect(response).toEqual({ payload: 'b', attempt: 2, messagesReceived: 0, index: 0 });

      const streamed: number[] = [];
      await new Promise<void>((resolve, reject) => {
        const call = client.ServerStream({ payload: 's' });
        call.on('data', (r: FlakyTestResponse) => streamed.push(r.index));
        call.on('error', reject);
        call.on('end', resolve);
      });
      expect(streamed).toEqual([0]);

      const joined = await new Promise<string | undefined>((resolve, reject) => {
        const call = client.ClientStream((error, value) => (error ? reject(error) : resolve(value?.payload)));
        call.write({ payload: 'x' });
        call.write({ payload: 'y' });
        call.end();
      });
      expect(joined).toBe('x,y');

      const echoed: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const call = client.Bidi();
        call.on('data', (r: FlakyTestResponse) => echoed.push(r.payload));
        call.on('error', reject);
        call.on('end', resolve);
        call.write({ payload: 'p' });
        call.end();
      });
      expect(echoed).toEqual(['p']);
      expect(seen.map((path) => path.split('/')[2])).toEqual([
        'Unary',
        'Unary',
        'ServerStream',
        'ClientStream',
        'Bidi',
      ]);
    } finally {
      client.close();
    }
  });

  it('rejects a bad address or option with a TypeError naming it', () => {
    expect(() => createFlakyTestClient('')).toThrow(TypeError);
    expect(() => createFlakyTestClient('127.0.0.1:1', { interceptor: [] } as never)).toThrow(
      /createFlakyTestClient: options\.interceptor is not an option; did you mean "interceptors"\? \(known: credentials, interceptors, channelOptions\)/,
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', null as never)).toThrow(/options must be an object/);
    expect(() => createFlakyTestClient('127.0.0.1:1', { interceptors: [1] } as never)).toThrow(
      /option "interceptors"/,
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', { credentials: 'insecure' } as never)).toThrow(
      /option "credentials"/,
    );
    expect(() => createFlakyTestClient('127.0.0.1:1', { channelOptions: 5 } as never)).toThrow(
      /option "channelOptions"/,
    );
  });
});
