import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { interceptChannel } from '../../src/channel/intercepted-channel.js';
import { createRequestIdInterceptor } from '../../src/request-id/request-id-interceptor.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor, type RetryInterceptorOptions } from '../../src/retry/retry-interceptor.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  bidi,
  clientStream,
  eventsOf,
  FLAKY,
  type FlakyClient,
  hedgingConfig,
  retryConfig,
  serverStream,
  testClient,
  unary,
} from '../helpers/harness.js';
import { oneEntryConfig } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const { UNAVAILABLE, OK, DEADLINE_EXCEEDED } = grpc.status;
const RETRY_ON_UNAVAILABLE = {
  maxAttempts: 3,
  initialBackoff: '0.01s',
  maxBackoff: '0.05s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

let server: FlakyServer;
let n = 0;
const id = () => `ic-${++n}`;

beforeAll(async () => {
  server = await FlakyServer.start();
});
afterAll(async () => {
  await server.stop();
});

/** A client whose interceptors are only on its channel (as nice-grpc's are): the client itself has none. */
function channelClient(interceptors: grpc.Interceptor[]): {
  client: FlakyClient;
  channel: grpc.ChannelInterface;
} {
  const channel = interceptChannel(
    new grpc.Channel(server.address, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 }),
    interceptors,
  );
  return { client: testClient(server.address, [], { channelOverride: channel }), channel };
}

function retrying(config: object, options: RetryInterceptorOptions = {}) {
  const events: RetryEvent[] = [];
  const { client, channel } = channelClient([
    createRetryInterceptor(config, { ...options, onEvent: (e) => events.push(e) }),
  ]);
  return { client, channel, events };
}

describe('interceptChannel: the retry interceptor on a channel', () => {
  it('retries a unary call that fails twice; the server sees three attempts', async () => {
    const { client, events } = retrying(retryConfig());
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { status: UNAVAILABLE }, {}]);
      const out = await unary(client, c);
      expect(out.code).toBe(OK);
      expect(out.responses[0]).toMatchObject({ payload: 'hello', attempt: 3 });
      expect(server.attempts(c).map((a) => a.endedWith)).toEqual([UNAVAILABLE, UNAVAILABLE, OK]);
      expect(server.attempts(c).map((a) => a.previousRpcAttempts)).toEqual([undefined, 1, 2]);
      expect(eventsOf(events, 'call-end')).toEqual([expect.objectContaining({ attempts: 3, code: OK })]);
    } finally {
      client.close();
    }
  });

  it('replays a client stream to the next attempt', async () => {
    const { client } = retrying(retryConfig());
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await clientStream(client, c, [{ payload: 'm1' }, { payload: 'm2' }, { payload: 'm3' }]);
      expect(out.code).toBe(OK);
      expect(out.responses[0]?.payload).toBe('m1,m2,m3');
      expect(server.attempts(c).map((a) => a.messages)).toEqual([
        ['m1', 'm2', 'm3'],
        ['m1', 'm2', 'm3'],
      ]);
    } finally {
      client.close();
    }
  });

  it('replays a bidi stream to the next attempt', async () => {
    const { client } = retrying(retryConfig());
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await bidi(client, c, [{ payload: 'x' }, { payload: 'y' }]);
      expect(out.code).toBe(OK);
      expect(out.responses.map((r) => [r.payload, r.attempt])).toEqual([
        ['x', 2],
        ['y', 2],
      ]);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      client.close();
    }
  });

  it('charges the replay buffer the serialized size: a request over perRpcBufferBytes commits at once', async () => {
    const { client, events } = retrying(retryConfig(), { perRpcBufferBytes: 100 });
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      const out = await unary(client, c, { payload: 'big', blob: Buffer.alloc(200) });
      expect(out.code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
      expect(eventsOf(events, 'committed')).toEqual([expect.objectContaining({ reason: 'replay-buffer' })]);
    } finally {
      client.close();
    }
  });

  it('hedges a server-streaming read: the hedge answers, the slow first attempt is cancelled', async () => {
    const { client } = retrying(hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.05s' }));
    try {
      const c = id();
      server.script(c, [{ delayMs: 10_000 }, {}]);
      const out = await serverStream(client, c);
      expect(out.code).toBe(OK);
      expect(out.responses.map((r) => r.attempt)).toEqual([2]);
      await server.waitFor(() => server.attempts(c)[0]?.cancelled === true);
      expect(server.attempts(c)).toHaveLength(2);
    } finally {
      client.close();
    }
  });

  it("keeps the call's deadline across attempts", async () => {
    const { client } = retrying(retryConfig());
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { delayMs: 10_000 }]);
      const started = Date.now();
      const out = await unary(client, c, { payload: 'late' }, { deadlineMs: 400 });
      expect(out.code).toBe(DEADLINE_EXCEEDED);
      expect(Date.now() - started).toBeLessThan(5_000);
      const attempts = server.attempts(c);
      expect(attempts).toHaveLength(2);
      for (const attempt of attempts) expect(attempt.deadline).toBeLessThanOrEqual(started + 1_000);
    } finally {
      client.close();
    }
  });
  it("sends the service config's timeout to the server as the attempts' deadline", async () => {
    const { client } = retrying(
      oneEntryConfig(FLAKY, { retryPolicy: RETRY_ON_UNAVAILABLE }, { timeout: '0.4s' }),
    );
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, { delayMs: 10_000 }]);
      const started = Date.now();
      const out = await unary(client, c);
      expect(out.code).toBe(DEADLINE_EXCEEDED);
      const attempts = server.attempts(c);
      expect(attempts).toHaveLength(2);
      for (const attempt of attempts) {
        expect(attempt.deadline).toBeGreaterThan(started);
        expect(attempt.deadline).toBeLessThanOrEqual(started + 1_000);
      }
    } finally {
      client.close();
    }
  });
});

describe('interceptChannel: the chain', () => {
  it('runs the interceptors in order, the first outermost, each call through its own chain', async () => {
    const seen: string[] = [];
    const recording =
      (name: string): grpc.Interceptor =>
      (options, nextCall) =>
        new grpc.InterceptingCall(nextCall(options), {
          start(metadata, listener, next) {
            seen.push(`${name}:${options.method_definition.path}`);
            next(metadata, listener);
          },
        });
    const { client } = channelClient([recording('outer'), recording('inner')]);
    try {
      expect((await unary(client, id())).code).toBe(OK);
      expect((await unary(client, id())).code).toBe(OK);
      const path = '/grpc_retry_hedging.testing.v1.FlakyTest/Unary';
      expect(seen).toEqual([`outer:${path}`, `inner:${path}`, `outer:${path}`, `inner:${path}`]);
    } finally {
      client.close();
    }
  });

  it('with no interceptors is a plain channel, still an instance of grpc.Channel', async () => {
    const { client, channel } = channelClient([]);
    try {
      const c = id();
      server.script(c, [{ status: UNAVAILABLE }, {}]);
      expect((await unary(client, c)).code).toBe(UNAVAILABLE);
      expect(server.attempts(c)).toHaveLength(1);
      expect(channel.getTarget()).toContain(String(server.port));
      expect(channel).toBeInstanceOf(grpc.Channel);
    } finally {
      client.close();
    }
  });

  it('a call made after the channel closed throws when it is made, as on a plain channel', () => {
    for (const interceptors of [[], [createRetryInterceptor(retryConfig())]]) {
      const { client, channel } = channelClient(interceptors);
      channel.close();
      expect(() => client.Unary({ payload: 'x' }, () => {})).toThrow('Channel has been shut down');
      client.close();
    }
  });

  it('closed while an interceptor above holds the start back: the call ends UNAVAILABLE, nothing is thrown', async () => {
    const deferStart: grpc.Interceptor = (options, next) =>
      new grpc.InterceptingCall(next(options), {
        start: (metadata, listener, start) => setTimeout(() => start(metadata, listener), 30),
      });
    const thrown: unknown[] = [];
    const onThrown = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', onThrown);
    try {
      for (const interceptors of [[], [createRetryInterceptor(retryConfig())]]) {
        const channel = interceptChannel(
          new grpc.Channel(server.address, grpc.credentials.createInsecure(), {}),
          [...interceptors],
        );
        const client = testClient(server.address, [deferStart], { channelOverride: channel });
        const peers: string[] = [];
        const ended = new Promise<grpc.ServiceError | null>((resolve) => {
          const call = client.Unary({ payload: 'x' }, (error: grpc.ServiceError | null) =>
            resolve(error),
          ) as grpc.ClientUnaryCall;
          peers.push(call.getPeer());
        });
        client.close();
        const error = await ended;
        expect(error).toMatchObject({ code: UNAVAILABLE, details: 'Channel has been shut down' });
        // before the start, a call names the channel's target, as grpc-js's do
        expect(peers).toEqual([channel.getTarget()]);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(thrown).toEqual([]);
    } finally {
      process.off('uncaughtException', onThrown);
    }
  });

  it('rejects what is not a channel or not an interceptor, naming it', () => {
    const channel = new grpc.Channel(server.address, grpc.credentials.createInsecure(), {});
    try {
      expect(() => interceptChannel({} as grpc.ChannelInterface, [])).toThrow(
        /`channel` must be a grpc-js Channel/,
      );
      expect(() => interceptChannel(channel, {} as grpc.Interceptor[])).toThrow(
        /`interceptors` must be an array/,
      );
      expect(() => interceptChannel(channel, [createRetryInterceptor(retryConfig()), 'x' as never])).toThrow(
        /interceptors\[1\] is not a function \(got string\)/,
      );
    } finally {
      channel.close();
    }
  });
});

describe('interceptChannel: the request-id interceptor', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('in field mode it cannot fill the field of a serialized request: it says so once, and sends no id', async () => {
    const warnings = captureWarnings();
    const { client } = channelClient([createRequestIdInterceptor({ field: 'requestId' })]);
    try {
      const [a, b] = [id(), id()];
      expect((await unary(client, a)).code).toBe(OK);
      expect((await unary(client, b)).code).toBe(OK);
      expect(server.attempts(a)[0]?.requestId).toBeUndefined();
    } finally {
      client.close();
    }
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_REQUEST_ID_FIELD']);
    expect(warnings[0]?.message).toContain(
      'field mode cannot fill requestId at a channel (interceptChannel), where requests are already serialized',
    );
  });

  it('in header mode the id goes out, and nothing is said', async () => {
    const warnings = captureWarnings();
    const { client } = channelClient([createRequestIdInterceptor({ header: 'x-request-id' })]);
    try {
      const c = id();
      expect((await unary(client, c)).code).toBe(OK);
      expect(server.attempts(c)[0]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      client.close();
    }
    expect(warnings).toEqual([]);
  });
});
