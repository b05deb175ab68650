// The short snippets of docs/*.md, as code that runs: each doc block is an excerpt of one test below (see
// code-blocks.test.ts). The snippets call a helloworld.Greeter client (`client`, `Greeter`) served by the flaky
// server, with `config` loaded from examples/greeter-service-config.json.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  AdaptiveHedging,
  CancelRateLimiter,
  createAdaptiveThrottleInterceptor,
  createChannelOptions,
  createRequestIdInterceptor,
  createRetryInterceptor,
  encodeRetryInfoStatus,
  findMethodPolicy,
  isServiceConfigError,
  loadServiceConfig,
  parseServiceConfig,
  RetryBudget,
  type RetryEvent,
  retryOutcomeOf,
  STATUS_DETAILS_METADATA_KEY,
  serviceConfigFromProtos,
  validateServiceConfig,
  withRetryOptions,
} from 'grpc-retry-hedging';
import { createRetryMetrics, createRetryTracing } from 'grpc-retry-hedging/otel';
import { FlakyServer } from 'grpc-retry-hedging/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GREETER_PROTO, Greeter, type HelloRequest, type Reply } from '../helpers/greeter.js';

const PROTO = GREETER_PROTO;
const credentials = grpc.credentials.createInsecure();
const config = loadServiceConfig('examples/greeter-service-config.json');
const request: HelloRequest = { name: 'world' };
const metadata = new grpc.Metadata();

let server: FlakyServer;
let address: string;
const clients: grpc.Client[] = [];
beforeAll(async () => {
  server = await FlakyServer.start({ proto: PROTO });
  address = server.address;
});
afterAll(async () => {
  for (const c of clients) c.close();
  await server.stop();
});

/** Keeps a client to close at the end. */
function kept<T extends grpc.Client>(client: T): T {
  clients.push(client);
  return client;
}

/** Resolves when `count` calls have called back. */
function callbacks(count: number): { callback: grpc.requestCallback<Reply>; done: Promise<void> } {
  let left = count;
  let resolve = (): void => {};
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    callback: () => {
      left--;
      if (left === 0) resolve();
    },
    done,
  };
}

describe('docs/configuration.md', () => {
  it('parsing and validating a config', () => {
    const jsonTextOrObject = readFileSync('examples/greeter-service-config.json', 'utf8');
    const text =
      '{ "methodConfig": [{ "name": [{}], "retryPolicy": { "maxAttempts": 1 } }], "retry_throttling": {} }';
    const problems: string[] = [];
    const console = { error: (line: unknown) => problems.push(String(line)) };

    try {
      const config = parseServiceConfig(jsonTextOrObject); // normalized: durations in ms, codes as numbers
      findMethodPolicy(config, '/helloworld.Greeter/SayHello'); // { policy, methodConfigIndex, matchedBy }
    } catch (error) {
      if (isServiceConfigError(error)) {
        console.error(error.path); // "methodConfig[1].retryPolicy.maxAttempts" (the first problem)
        console.error(error.message); // "methodConfig[1].retryPolicy.maxAttempts: must be an integer greater than 1, got 1; for a single attempt, leave the retryPolicy out (without a policy, a call makes one attempt)"
        for (const { path, message, line, column } of error.errors) {
          console.error(`${line}:${column}: ${path}: ${message}`); // every problem; line/column for JSON text
        }
      }
    }

    const { config, errors, warnings } = validateServiceConfig(text); // the same, without throwing; warnings
    // name unknown fields ("did you mean ...?")

    expect(problems).toEqual([]);
    expect(config).toBeUndefined();
    expect(errors.map((e) => e.path)).toContain('methodConfig[0].retryPolicy.maxAttempts');
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/did you mean "retryThrottling"/)]);
  });

  it('interceptor order', () => {
    const seen: string[] = [];
    const logger: grpc.Interceptor = (options, next) => {
      seen.push(options.method_definition.path);
      return new grpc.InterceptingCall(next(options));
    };
    const outside = {
      interceptors: [logger, createRetryInterceptor(config)], // logger sees one call per call
    };
    const inside = {
      interceptors: [createRetryInterceptor(config), logger], // logger sees each attempt (retries and hedges)
    };
    expect(outside.interceptors).toHaveLength(2);
    expect(inside.interceptors).toHaveLength(2);
  });

  it('per-call control', async () => {
    const client = kept(
      new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] }),
    );
    const events: RetryEvent[] = [];
    const log = (e: RetryEvent) => events.push(e);
    server.scriptMethod('helloworld.Greeter/SayHello', [{ status: 'UNAVAILABLE' }, {}]);
    const { callback, done } = callbacks(3);

    // one attempt only for this call
    client.sayHello(request, withRetryOptions({ enabled: false }), callback);

    // another policy for this call (validated now; maxAttempts clamped to the interceptor's limit)
    client.sayHello(
      request,
      metadata,
      withRetryOptions(
        { policy: { hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.01s' } } },
        { deadline: Date.now() + 500 }, // ordinary call options are kept
      ),
      callback,
    );

    // events of this call only
    client.sayHello(request, withRetryOptions({ onEvent: (e) => log(e) }), callback);

    await done;
    expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(2);
  });

  it('one file for the interceptor and the channel options', () => {
    const config = readFileSync('examples/greeter-service-config.json', 'utf8'); // raw JSON text (or the parsed object)
    const client = new Greeter(address, credentials, {
      ...createChannelOptions(config), // 'grpc.service_config' and message size limits
      interceptors: [createRetryInterceptor(config)], // retries, hedging, throttling, timeout, waitForReady
    });
    kept(client);
    expect(createChannelOptions(config)['grpc.service_config']).toContain('helloworld.Greeter');
  });

  it('RetryInfo: the client option, and a server that sends a hint', async () => {
    const interceptor = createRetryInterceptor(config, { retryInfo: { maxDelayMs: 10_000 } });

    const greeter = new grpc.Server();
    let calls = 0;
    greeter.addService(Greeter.service, {
      SayHello: (_call: unknown, callback: grpc.sendUnaryData<Reply>) => {
        calls++;
        if (calls > 1) return callback(null, { message: 'hi' });
        const trailers = new grpc.Metadata();
        trailers.set(
          STATUS_DETAILS_METADATA_KEY,
          encodeRetryInfoStatus({ code: grpc.status.RESOURCE_EXHAUSTED, message: 'quota', retryDelay: 1500 }),
        );
        callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'quota', metadata: trailers });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      greeter.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    const events: RetryEvent[] = [];
    const retrying = createRetryInterceptor(
      {
        methodConfig: [
          {
            name: [{ service: 'helloworld.Greeter' }],
            retryPolicy: {
              maxAttempts: 2,
              initialBackoff: '0.01s',
              maxBackoff: '0.01s',
              backoffMultiplier: 1,
              retryableStatusCodes: ['RESOURCE_EXHAUSTED'],
            },
          },
        ],
      },
      { onEvent: (e) => events.push(e) },
    );
    const client = kept(new Greeter(`127.0.0.1:${port}`, credentials, { interceptors: [retrying] }));
    const reply = await new Promise((resolve) => client.sayHello(request, (_e, r) => resolve(r)));
    greeter.forceShutdown();
    expect(reply).toEqual({ message: 'hi' });
    expect(events.find((e) => e.type === 'retry-scheduled')).toMatchObject({
      delayMs: 1500,
      reason: 'retry-info',
    });
    expect(typeof interceptor).toBe('function');
  });

  it('a config from the protos idempotency levels', () => {
    const definition = protoLoader.loadSync('protos/catalog_demo.proto'); // or a protobufjs Root
    const config = serviceConfigFromProtos(definition, {
      noSideEffects: {
        hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
      },
      idempotent: {
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.1s',
          maxBackoff: '1s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
      // unknown: left alone (the default)
    });
    // { methodConfig: [ { name: [{service: 'catalog_demo.v1.Catalog', method: 'GetItem'}, ...ListItems], hedgingPolicy },
    //                   { name: [{service: 'catalog_demo.v1.Catalog', method: 'PutItem'}], retryPolicy } ],
    //   loadBalancingConfig: [{ round_robin: {} }] }
    expect(config.methodConfig?.map((m) => m.name?.map((n) => n.method))).toEqual([
      ['GetItem', 'ListItems'],
      ['PutItem'],
    ]);
    expect(config.loadBalancingConfig).toEqual([{ round_robin: {} }]);
  });

  it('request ids: the request-id interceptor goes first', () => {
    const Catalog = Greeter;
    const client = new Catalog(address, credentials, {
      interceptors: [
        createRequestIdInterceptor({ field: 'requestId' }), // FIRST: outside the retries
        createRetryInterceptor(config),
      ],
    });
    kept(client);
    expect(client).toBeInstanceOf(grpc.Client);
  });
});

describe('docs/hedging.md', () => {
  it('adaptive hedging', () => {
    const adaptive = new AdaptiveHedging({ maxExtraLoad: 0.05 }); // or just `adaptiveHedging: true`
    const interceptor = createRetryInterceptor(config, { adaptiveHedging: adaptive });
    adaptive.currentDelays(); // Map { '/db.Store/Get' => 3.1, ... } (ms)
    expect(adaptive.currentDelays()).toBeInstanceOf(Map);
    expect(typeof interceptor).toBe('function');
  });

  it('the cancel-rate limit', () => {
    createRetryInterceptor(config, {
      cancelRateLimit: { ratePerSecond: 25, burst: 250, loserCapMs: 30_000 },
    });
    createRetryInterceptor(config, { cancelRateLimit: false }); // cancel every loser at once
  });

  it('a prompt shutdown: the losers still waiting are cancelled at once', async () => {
    const limiter = new CancelRateLimiter();
    const client = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config, { cancelRateLimit: limiter })],
    });
    const { callback, done } = callbacks(1);
    client.sayHello(request, callback);
    await done;
    // ...
    // at shutdown, once the last call you wait for has ended:
    limiter.cancelWaiting();
    client.close();
    expect(limiter.queued).toBe(0);
  });
});

describe('docs/overload.md', () => {
  it('a retry budget is the gate', () => {
    const budget = new RetryBudget(); // 20% of calls, over 10 s; safe for any fleet size
    const client = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config, { gate: budget })],
    });
    kept(client);
    // No floor by default: the budget holds what calls deposit (20% of a retry each), nothing before.
    expect(budget.tokens).toBe(0);
    budget.recordCall();
    expect(budget.tokens).toBeCloseTo(0.2, 10);
  });

  it('the adaptive throttle, after the retry interceptor', () => {
    const log = { warn: (_line: string) => {} };
    const throttle = createAdaptiveThrottleInterceptor({
      onEvent: (e) => log.warn(`${e.method} rejected locally (P=${e.probability})`),
    });
    const client = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config), throttle], // retry first, then the throttle: every attempt is throttled
    });
    kept(client);
    throttle.counters(); // { calls, rejected, accepted, notAccepted, cancelled }
    throttle.state(); // { 'helloworld.Greeter': { requests, accepts, probability } }
    expect(throttle.counters().calls).toBe(0);
  });
});

describe('docs/observability.md', () => {
  it('a listener', async () => {
    const lines: string[] = [];
    const log = { warn: (line: string) => lines.push(line), info: (line: string) => lines.push(line) };
    const interceptor = createRetryInterceptor(config, {
      onEvent: (event) => {
        if (event.type === 'retry-scheduled') log.warn(`retrying ${event.method} in ${event.delayMs} ms`);
        if (event.type === 'call-end' && event.attempts > 1)
          log.info(`${event.method}: ${event.attempts} attempts`);
      },
    });
    server.scriptMethod('helloworld.Greeter/SayHello', [{ status: 'UNAVAILABLE' }, {}]);
    const client = kept(new Greeter(address, credentials, { interceptors: [interceptor] }));
    await new Promise((resolve) => client.sayHello(request, resolve));
    expect(lines).toEqual([
      expect.stringMatching(/^retrying \/helloworld.Greeter\/SayHello in \d+ ms$/),
      '/helloworld.Greeter/SayHello: 2 attempts',
    ]);
  });

  it('the outcome from the error in hand', async () => {
    const logged: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => logged.push(args) };
    server.scriptMethod('helloworld.Greeter/SayHello', [{ status: 'UNAVAILABLE' }]);
    const client = kept(
      new Greeter(address, credentials, { interceptors: [createRetryInterceptor(config)] }),
    );
    const { callback, done } = callbacks(1);
    client.sayHello(request, (error, reply) => {
      if (error) log.warn(error.message, retryOutcomeOf(error)); // { attempts: 4, reason: 'attempts-exhausted' }
      callback(error, reply);
    });
    await done;
    expect(logged).toEqual([
      [expect.stringMatching(/^14 UNAVAILABLE/), { attempts: 4, reason: 'attempts-exhausted' }],
    ]);
  });

  it('metrics and tracing adapters', () => {
    const retryMetrics = createRetryMetrics();
    const metered = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config, { onEvent: retryMetrics.onEvent })],
    });

    const tracing = createRetryTracing(); // the global tracer provider and propagator, once your SDK registers them
    const traced = new Greeter(address, credentials, {
      interceptors: [createRetryInterceptor(config, { onEvent: tracing.onEvent })],
    });
    kept(metered);
    kept(traced);
  });
});
