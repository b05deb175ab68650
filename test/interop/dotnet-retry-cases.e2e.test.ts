/**
 * The grpc-dotnet retry and hedging cases that need a real grpc-js channel (the rest are in
 * test/engine/dotnet-retry-cases.engine.test.ts, whose comment lists what .NET does differently from A6). A
 * server on 127.0.0.1 counts the attempts it runs; each test checks that count, the status the application gets and
 * the interceptor's `call-end` event.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/index.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { bindLocal } from '../helpers/bind-local.js';

const SERVICE = 'dotnet.Cases';
const bytes = {
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
};
const unary = (name: string) => ({
  path: `/${SERVICE}/${name}`,
  requestStream: false,
  responseStream: false,
  ...bytes,
});

/** How many attempts of each method the server ran. */
const served = { PushedBack: 0, NoMessage: 0 };
let server: grpc.Server;
let address: string;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(
    {
      PushedBack: unary('PushedBack'),
      // Served as a server stream that ends without a message; the client calls it as a unary method.
      NoMessage: { ...unary('NoMessage'), responseStream: true },
    } as grpc.ServiceDefinition,
    {
      PushedBack: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        served.PushedBack++;
        const metadata = new grpc.Metadata();
        metadata.set('grpc-retry-pushback-ms', '1000');
        callback({ code: grpc.status.UNAVAILABLE, details: 'pushed back', metadata });
      },
      NoMessage: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
        served.NoMessage++;
        call.end();
      },
    },
  );
  address = `127.0.0.1:${await bindLocal(server)}`;
});

afterAll(() => {
  server.forceShutdown();
});

interface CasesClient extends grpc.Client {
  PushedBack(request: Buffer, callback: grpc.requestCallback<Buffer>): grpc.ClientUnaryCall;
  NoMessage(request: Buffer, callback: grpc.requestCallback<Buffer>): grpc.ClientUnaryCall;
}
const CasesClient = grpc.makeGenericClientConstructor(
  { PushedBack: unary('PushedBack'), NoMessage: unary('NoMessage') },
  'Cases',
) as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
) => CasesClient;

function client(policy: Record<string, unknown>): { stub: CasesClient; events: RetryEvent[] } {
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(
    { methodConfig: [{ name: [{ service: SERVICE }], ...policy }] },
    { onEvent: (e) => events.push(e) },
  );
  const stub = new CasesClient(address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
    'grpc.enable_retries': 0,
  });
  return { stub, events };
}

function call(method: (request: Buffer, callback: grpc.requestCallback<Buffer>) => grpc.ClientUnaryCall): {
  done: Promise<grpc.ServiceError | null>;
  ended: () => boolean;
} {
  let ended = false;
  const done = new Promise<grpc.ServiceError | null>((resolve) => {
    method(Buffer.from('World'), (error) => {
      ended = true;
      resolve(error);
    });
  });
  return { done, ended: () => ended };
}

const RETRY = {
  retryPolicy: {
    maxAttempts: 5,
    initialBackoff: '0.001s',
    maxBackoff: '0.001s',
    backoffMultiplier: 1,
    retryableStatusCodes: ['UNAVAILABLE', 'UNIMPLEMENTED'],
  },
};
const HEDGING = {
  hedgingPolicy: { maxAttempts: 5, hedgingDelay: '10s', nonFatalStatusCodes: ['UNAVAILABLE'] },
};

describe('grpc-dotnet cases on a real channel', () => {
  // .NET RetryTests.AsyncUnaryCall_ChannelDisposeDuringBackoff_CanceledStatus and HedgingTests' namesake assert:
  // disposing the channel while the call waits out a 10 s pushback (nothing in flight) ends it at once, CANCELLED
  // "gRPC call disposed.". Differs on purpose: grpc-js's close() lets the calls already made run on, and so does the
  // interceptor; the attempt due after the wait cannot start on the closed channel, and the call ends then with
  // UNAVAILABLE naming that (docs/hedging.md, "A channel closed while a hedge is due"). The pushback is 1 s here.
  it.each([
    ['retry', RETRY],
    ['hedging', HEDGING],
  ] as const)(
    '%s: the client closed during a pushback wait: no second attempt, UNAVAILABLE',
    async (_name, policy) => {
      served.PushedBack = 0;
      const { stub, events } = client(policy);
      const c = call(stub.PushedBack.bind(stub));
      while (!events.some((e) => e.type === 'attempt-end')) await new Promise((r) => setTimeout(r, 5));
      stub.close();
      await new Promise((r) => setImmediate(r));
      expect(c.ended()).toBe(false); // the wait goes on after close()
      const error = await c.done;
      expect(error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details).toMatch(/could not start attempt 2: Channel has been shut down/);
      expect(served.PushedBack).toBe(1);
      const end = events.filter((e) => e.type === 'call-end');
      expect(end).toEqual([expect.objectContaining({ code: grpc.status.UNAVAILABLE, attempts: 1 })]);
      expect(end[0]?.retryDelayMs).toBeGreaterThanOrEqual(990);
    },
  );

  // .NET RetryTests.AsyncUnaryCall_NoMessagesSuccess_Failure asserts: a unary call answered OK with no message fails
  // INTERNAL ("Failed to deserialize response message"), committed on a fatal status, one call. Here grpc-js's
  // client turns it into UNIMPLEMENTED "No message received" (its code for that, not .NET's INTERNAL) above the
  // interceptor, which saw an OK: even with UNIMPLEMENTED retryable, nothing is retried (A6: the server's OK ends it).
  it('a unary call answered OK with no message: UNIMPLEMENTED from grpc-js, one attempt, not retried', async () => {
    served.NoMessage = 0;
    const { stub, events } = client(RETRY);
    const error = await call(stub.NoMessage.bind(stub)).done;
    stub.close();
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(error?.details).toBe('No message received');
    expect(served.NoMessage).toBe(1);
    expect(events.filter((e) => e.type === 'call-end')).toEqual([
      expect.objectContaining({ code: grpc.status.OK, attempts: 1 }),
    ]);
  });
});
