// The test docs/testing.md shows: your own service config, tested against your own service names, with the flaky
// server serving your proto. Only the two paths and the client interface are yours; the rest is the package's.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRetryInterceptor, loadServiceConfig, type RetryEvent } from 'grpc-retry-hedging';
import { FakeClock, FlakyServer, seededRandom } from 'grpc-retry-hedging/testing';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

const PROTO = 'examples/helloworld.proto'; // your proto
const CONFIG = 'examples/greeter-service-config.json'; // your service config, as your app loads it

// Your client type (what proto-loader-gen-types or your code generator gives you).
interface Reply {
  message: string;
}
interface GreeterClient extends grpc.Client {
  SayHello(request: { name: string }, callback: grpc.requestCallback<Reply>): grpc.ClientUnaryCall;
  GetCached(request: { name: string }, callback: grpc.requestCallback<Reply>): grpc.ClientUnaryCall;
}
type GreeterConstructor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => GreeterClient;
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO));
const Greeter = (loaded.helloworld as grpc.GrpcObject).Greeter as unknown as GreeterConstructor;

let server: FlakyServer;
beforeAll(async () => {
  server = await FlakyServer.start({ proto: PROTO }); // serves helloworld.Greeter, every method scriptable
});
beforeEach(() => server.reset()); // forget the last test's scripts and recordings
afterAll(() => server.stop());

// A fresh interceptor per test: its retryThrottling tokens are not spent by the tests before.
function greeter(events: RetryEvent[] = []): GreeterClient {
  const interceptor = createRetryInterceptor(loadServiceConfig(CONFIG), { onEvent: (e) => events.push(e) });
  return new Greeter(server.address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
  });
}

function call(client: GreeterClient, method: 'SayHello' | 'GetCached'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    client[method]({ name: 'world' }, (error, reply) => (error ? reject(error) : resolve(reply as Reply)));
  });
}

it('SayHello is retried on UNAVAILABLE', async () => {
  server.scriptMethod('helloworld.Greeter/SayHello', [
    { status: 'UNAVAILABLE' },
    { status: 'UNAVAILABLE' },
    {},
  ]);
  const client = greeter();
  await call(client, 'SayHello');
  const attempts = server.attemptsOf<{ name: string }>('helloworld.Greeter/SayHello');
  expect(attempts.map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
  expect(attempts.map((a) => a.requests[0]?.name)).toEqual(['world', 'world', 'world']);
  client.close();
});

it('GetCached is hedged: a slow first attempt loses to the hedge sent 20 ms later', async () => {
  server.scriptMethod('helloworld.Greeter/GetCached', [
    { delayMs: 2000 },
    { response: { message: 'hedge' } },
  ]);
  const events: RetryEvent[] = [];
  const client = greeter(events);
  expect(await call(client, 'GetCached')).toEqual({ message: 'hedge' });
  expect(events.filter((e) => e.type === 'hedge-sent')).toHaveLength(1);
  expect(server.attemptsOf('helloworld.Greeter/GetCached').map((a) => a.attempt)).toEqual([1, 2]);
  client.close();
});

it('in fake time, a retry waits for the clock, not for real time', async () => {
  const clock = new FakeClock();
  const events: RetryEvent[] = [];
  const interceptor = createRetryInterceptor(loadServiceConfig(CONFIG), {
    clock, // the interceptor's timers (backoff, hedging delays) run on it
    random: seededRandom(7), // the jitter is the same on every run
    onEvent: (e) => events.push(e),
  });
  const client = new Greeter(server.address, grpc.credentials.createInsecure(), {
    interceptors: [interceptor],
  });
  server.scriptMethod('helloworld.Greeter/SayHello', [{ status: 'UNAVAILABLE' }, {}]);

  const reply = call(client, 'SayHello');
  await server.waitFor(() => clock.pendingTimers === 1); // attempt 1 failed; the backoff timer is set
  const scheduled = events.find((e) => e.type === 'retry-scheduled');
  expect(scheduled).toMatchObject({ attempt: 2, reason: 'backoff' });
  expect(server.attemptsOf('helloworld.Greeter/SayHello')).toHaveLength(1);

  clock.advance(12); // initialBackoff (10 ms) × 1.2 at most: the retry goes now
  await reply;
  expect(server.attemptsOf('helloworld.Greeter/SayHello')).toHaveLength(2);
  client.close();
});
