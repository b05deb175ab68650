// The recipes of docs/how-to.md, as code that runs: each code block there is an excerpt of one test below (see
// code-blocks.test.ts). The recipes call a helloworld.Greeter client served by the flaky server on 127.0.0.1.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { metrics } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  createChannelOptions,
  createRetryInterceptor,
  interceptChannel,
  loadServiceConfig,
  RetryBudget,
  type RetryEvent,
  type RetryPolicyJson,
  retryOutcomeOf,
  type ServiceConfigJson,
  serviceConfigFromProtos,
  withRetryOptions,
} from 'grpc-retry-hedging';
import { createRetryMetrics, createRetryTracing } from 'grpc-retry-hedging/otel';
import { FakeClock, FlakyServer, seededRandom } from 'grpc-retry-hedging/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  GREETER_PROTO,
  Greeter,
  type GreeterClient,
  type HelloRequest,
  type Reply,
} from '../helpers/greeter.js';

const PROTO = GREETER_PROTO;
const SAY_HELLO = 'helloworld.Greeter/SayHello';
const GET_CACHED = 'helloworld.Greeter/GetCached';
const credentials = grpc.credentials.createInsecure();
const request: HelloRequest = { name: 'world' };
const retryPolicy: RetryPolicyJson = {
  maxAttempts: 4,
  initialBackoff: '0.1s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

let server: FlakyServer;
let address: string;
const clients: grpc.Client[] = [];
beforeAll(async () => {
  server = await FlakyServer.start({ proto: PROTO });
  address = server.address;
});
beforeEach(() => server.reset());
afterAll(async () => {
  for (const c of clients) c.close();
  await server.stop();
});

/** Keeps a client to close at the end. */
function kept<T extends grpc.Client>(client: T): T {
  clients.push(client);
  return client;
}

interface Outcome {
  error: grpc.ServiceError | null;
  reply: Reply | undefined;
}

/** A callback, and the promise of what it was called with. */
function outcome(): { callback: grpc.requestCallback<Reply>; done: Promise<Outcome> } {
  let resolve = (_o: Outcome): void => {};
  const done = new Promise<Outcome>((r) => {
    resolve = r;
  });
  return { callback: (error, reply) => resolve({ error, reply }), done };
}

function sayHello(client: GreeterClient, options: grpc.CallOptions = {}): Promise<Outcome> {
  const { callback, done } = outcome();
  client.sayHello(request, options, callback);
  return done;
}

function getCached(client: GreeterClient): Promise<Outcome> {
  const { callback, done } = outcome();
  client.getCached(request, callback);
  return done;
}

describe('docs/how-to.md', () => {
  it('retry a method on UNAVAILABLE', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, { status: 'UNAVAILABLE' }, {}]);

    const config: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'helloworld.Greeter', method: 'SayHello' }], // without `method`: every method
          retryPolicy: {
            maxAttempts: 4,
            initialBackoff: '0.1s',
            maxBackoff: '1s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    };
    const client = new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] });

    kept(client);
    expect((await sayHello(client)).error).toBeNull();
    expect(server.attemptsOf(SAY_HELLO).map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
  });

  it('load the config from a JSON file', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);

    const config = loadServiceConfig('examples/greeter-service-config.json'); // throws on any mistake
    const client = new Greeter(address, credentials, {
      ...createChannelOptions(config), // the rest of the file: loadBalancingConfig, message size limits
      interceptors: [createRetryInterceptor(config)],
    });

    kept(client);
    expect((await sayHello(client)).error).toBeNull();
    expect(server.attemptsOf(SAY_HELLO)).toHaveLength(2);
  });

  it('hedge reads', async () => {
    server.scriptMethod(GET_CACHED, [{ delayMs: 5000 }, { response: { message: 'from the hedge' } }]);

    const config: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'helloworld.Greeter', method: 'GetCached' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
        },
      ],
    };
    const client = new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] });

    kept(client);
    expect((await getCached(client)).reply).toEqual({ message: 'from the hedge' });
    await server.waitFor(() => server.attemptsOf(GET_CACHED)[0]?.cancelled === true);
  });

  it('send retries and hedges to other replicas', async () => {
    const slow = await FlakyServer.start({ proto: PROTO });
    const fast = await FlakyServer.start({ proto: PROTO });
    slow.scriptMethod(GET_CACHED, [{ delayMs: 5000 }]);
    const config: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'helloworld.Greeter', method: 'GetCached' }],
          hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.2s' },
        },
      ],
    };
    const target = `ipv4:${slow.address},${fast.address}`;

    const client = new Greeter(target, credentials, {
      ...createChannelOptions(config, { avoidTriedReplicas: true }), // round_robin, hedges to untried replicas
      interceptors: [createRetryInterceptor(config)],
    });

    for (let i = 0; i < 6; i++) expect((await getCached(client)).error).toBeNull();
    // Every call ended on the fast replica; no hedge went back to the slow one.
    expect(fast.attemptsOf(GET_CACHED)).toHaveLength(6);
    expect(slow.attemptsOf(GET_CACHED).length).toBeGreaterThan(0);
    expect(slow.attemptsOf(GET_CACHED).every((a) => a.previousRpcAttempts === undefined)).toBe(true);
    client.close();
    await Promise.all([slow.stop(), fast.stop()]);
  });

  it('turn retries off, or use another policy, for one call', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    const config = loadServiceConfig('examples/greeter-service-config.json');
    const client = kept(
      new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] }),
    );
    const first = outcome();
    const second = outcome();

    client.sayHello(request, withRetryOptions({ enabled: false }), first.callback); // one attempt
    const policy = { retryPolicy: { ...retryPolicy, maxAttempts: 2 } }; // instead of the config's
    client.sayHello(request, withRetryOptions({ policy }, { deadline: Date.now() + 2000 }), second.callback);

    expect((await first.done).error?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await second.done).error).toBeNull();
  });

  it('a deadline over all attempts', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }]);

    const config: ServiceConfigJson = {
      methodConfig: [{ name: [{ service: 'helloworld.Greeter' }], timeout: '0.3s', retryPolicy }],
    };
    const client = new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] });

    kept(client);
    const fromTimeout = await sayHello(client);
    expect(fromTimeout.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const { callback, done } = outcome();

    client.sayHello(request, { deadline: Date.now() + 200 }, callback); // sooner than the timeout: it wins

    expect((await done).error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // Backoffs of 0.1 s and 0.2 s (± 20%): the deadline passes before the fourth attempt.
    expect(server.attemptsOf(SAY_HELLO).length).toBeLessThan(8);
  });

  it('a per-attempt timeout', async () => {
    server.scriptMethod(SAY_HELLO, [{ delayMs: 5000 }, { response: { message: 'second attempt' } }]);

    const config: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'helloworld.Greeter' }],
          retryPolicy: { ...retryPolicy, perAttemptRecvTimeout: '0.2s' }, // a silent attempt is retried
        },
      ],
    };

    const client = kept(
      new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] }),
    );
    expect((await sayHello(client)).reply).toEqual({ message: 'second attempt' });
    await server.waitFor(() => server.attemptsOf(SAY_HELLO)[0]?.cancelled === true);
  });

  it('see what happened to a call', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    const config = loadServiceConfig('examples/greeter-service-config.json');
    const lines: string[] = [];
    const log = { info: (line: string) => lines.push(line) };

    const interceptor = createRetryInterceptor(config, {
      onEvent: (event) => {
        if (event.type === 'retry-scheduled') log.info(`${event.method}: retry in ${event.delayMs} ms`);
        if (event.type === 'call-end')
          log.info(`${event.method}: ${event.attempts} attempts, code ${event.code}`);
      },
    });

    const client = kept(new Greeter(address, credentials, { interceptors: [interceptor] }));
    await sayHello(client);
    expect(lines).toEqual([
      expect.stringMatching(/^\/helloworld.Greeter\/SayHello: retry in \d+ ms$/),
      '/helloworld.Greeter/SayHello: 2 attempts, code 0',
    ]);
  });

  it('see what happened to a failed call, from its error', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }]);
    const config = loadServiceConfig('examples/greeter-service-config.json');
    const client = kept(
      new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] }),
    );
    const said: string[] = [];
    const log = { warn: (line: string) => said.push(line) };
    const { callback, done } = outcome();

    client.sayHello(request, (error, reply) => {
      if (error) {
        const { attempts, reason } = retryOutcomeOf(error) ?? {};
        log.warn(`${error.code}: ${attempts} attempts, then ${reason}`); // 14: 4 attempts, then attempts-exhausted
      }
      callback(error, reply);
    });

    await done;
    expect(said).toEqual(['14: 4 attempts, then attempts-exhausted']);
  });

  it('metrics and traces with OpenTelemetry', async () => {
    class TestReader extends MetricReader {
      protected override onShutdown(): Promise<void> {
        return Promise.resolve();
      }
      protected override onForceFlush(): Promise<void> {
        return Promise.resolve();
      }
    }
    const reader = new TestReader();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] })); // what your SDK set-up does
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    const config = loadServiceConfig('examples/greeter-service-config.json');

    const retryMetrics = createRetryMetrics();
    const tracing = createRetryTracing();
    const interceptor = createRetryInterceptor(config, { onEvent: [retryMetrics.onEvent, tracing.onEvent] });

    try {
      const client = kept(new Greeter(address, credentials, { interceptors: [interceptor] }));
      await sayHello(client);
      const { resourceMetrics } = await reader.collect();
      const retries = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === 'grpc.client.call.retries');
      expect(retries?.dataPointType).toBe(DataPointType.HISTOGRAM);
      expect(retries?.dataPoints[0]?.attributes).toMatchObject({
        'grpc.method': 'helloworld.Greeter/SayHello',
        'grpc.status': 'OK',
      });
    } finally {
      retryMetrics.close();
      metrics.disable();
    }
  });

  it('limit retries when the server is overloaded', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }]);
    const config: ServiceConfigJson = {
      methodConfig: [
        {
          name: [{ service: 'helloworld.Greeter' }],
          retryPolicy: { ...retryPolicy, initialBackoff: '0.01s' },
        },
      ],
    };

    const budget = new RetryBudget(); // retries at most about 20% of calls; share it between clients
    const client = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config, { gate: budget })],
    });

    kept(client);
    for (let i = 0; i < 10; i++) await sayHello(client);
    // Without the budget: 4 attempts a call, 40 in all.
    expect(server.attemptsOf(SAY_HELLO).length).toBeLessThan(20);
    expect(budget.denied).toBeGreaterThan(0);
  });

  it('a config from the protos idempotency levels', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);

    const config = serviceConfigFromProtos(protoLoader.loadSync('examples/helloworld.proto'), {
      idempotent: { retryPolicy }, // IDEMPOTENT methods; NO_SIDE_EFFECTS ones too, unless noSideEffects is given
    });
    const client = new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] });

    kept(client);
    expect(config.methodConfig?.[0]?.name?.map((n) => n.method)).toEqual([
      'SayHello',
      'GetCached',
      'StreamHellos',
    ]);
    expect((await sayHello(client)).error).toBeNull();
    expect(server.attemptsOf(SAY_HELLO)).toHaveLength(2);
  });

  it('test your client against failures', async () => {
    const CONFIG = 'examples/greeter-service-config.json';

    const server = await FlakyServer.start({ proto: 'examples/helloworld.proto' }); // your proto
    server.scriptMethod('helloworld.Greeter/SayHello', [
      { status: 'UNAVAILABLE' },
      { status: 'UNAVAILABLE' },
      {},
    ]);
    const interceptor = createRetryInterceptor(loadServiceConfig(CONFIG)); // a fresh one per test
    const client = new Greeter(server.address, credentials, { interceptors: [interceptor] });
    const { error } = await sayHello(client); // your code under test makes the call
    expect(error).toBeNull();
    expect(server.attemptsOf('helloworld.Greeter/SayHello')).toHaveLength(3);

    client.close();
    await server.stop();
  });

  it('test backoffs without waiting for them', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    const events: RetryEvent[] = [];

    const clock = new FakeClock();
    const interceptor = createRetryInterceptor(loadServiceConfig('examples/greeter-service-config.json'), {
      clock, // backoffs and hedging delays wait for clock.advance()
      random: seededRandom(7), // the same jitter on every run
      onEvent: (e) => events.push(e),
    });
    const client = kept(new Greeter(address, credentials, { interceptors: [interceptor] }));
    const reply = sayHello(client);

    await server.waitFor(() => clock.pendingTimers === 1); // attempt 1 failed: the backoff timer is set
    clock.advance(12); // initialBackoff (10 ms) × 1.2 at most: the retry goes now

    expect(await reply).toMatchObject({ error: null });
    expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(2);
  });

  it('use it with a client built on a channel (nice-grpc)', async () => {
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    const config = loadServiceConfig('examples/greeter-service-config.json');

    const channel = interceptChannel(new grpc.Channel(address, credentials, {}), [
      createRetryInterceptor(config),
    ]);
    const client = new Greeter(address, credentials, { channelOverride: channel });

    kept(client);
    expect((await sayHello(client)).error).toBeNull();
    expect(server.attemptsOf(SAY_HELLO)).toHaveLength(2);

    // Per-call options never reach an interceptor on the channel: the call still gets the policy's retry.
    server.reset();
    server.scriptMethod(SAY_HELLO, [{ status: 'UNAVAILABLE' }, {}]);
    expect((await sayHello(client, withRetryOptions({ enabled: false }))).error).toBeNull();
    expect(server.attemptsOf(SAY_HELLO)).toHaveLength(2);
  });
});
