/**
 * A call the load-balancing policy drops (grpc-js-xds's `drop_overloads` and circuit breaking: `PickResultType.DROP`
 * with "Call dropped by load balancing policy") is never retried by gRPC: grpc-js commits its call to the drop,
 * C-core's retry_lb_drop test and grpc-go's drop error say the same. grpc-js hands an interceptor a drop as a plain
 * UNAVAILABLE, so the engine knows it by its details and by the attempt having reached no server. Here a policy of
 * the tests' own drops picks as cluster_impl does (test/helpers/dropping-balancer.ts), chosen per call by metadata,
 * in front of a FlakyServer; the interceptor's calls are set beside grpc-js's own retries where they agree.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRetryInterceptor, type RetryEvent, type ServiceConfigJson } from '../../src/index.js';
import { FlakyServer } from '../../src/testing/index.js';
import {
  DROP_DETAILS,
  DROP_KEY,
  DROPPING_POLICY,
  registerDroppingBalancer,
} from '../helpers/dropping-balancer.js';
import { GREETER_PROTO, Greeter, type Reply } from '../helpers/greeter.js';

const METHOD = 'helloworld.Greeter/SayHello';
const SERVICE = [{ service: 'helloworld.Greeter' }];
const LB = { loadBalancingConfig: [{ [DROPPING_POLICY]: {} }] };

const retry = (root: Partial<ServiceConfigJson> = {}): ServiceConfigJson => ({
  ...root,
  methodConfig: [
    {
      name: SERVICE,
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.01s',
        maxBackoff: '0.01s',
        backoffMultiplier: 1,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
});
const hedge: ServiceConfigJson = {
  methodConfig: [
    {
      name: SERVICE,
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.02s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    },
  ],
};

let server: FlakyServer;
beforeAll(async () => {
  registerDroppingBalancer();
  server = await FlakyServer.start({ proto: GREETER_PROTO });
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => {
  server.reset();
});

interface Outcome {
  readonly error: grpc.ServiceError | null;
  readonly reply: Reply | undefined;
  readonly events: RetryEvent[];
}

/** A client whose channel runs the dropping policy: through the interceptor, or with grpc-js's own retries. */
function client(config: ServiceConfigJson, through: 'interceptor' | 'grpc-js', events: RetryEvent[]) {
  return new Greeter(server.address, grpc.credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify(through === 'grpc-js' ? { ...LB, ...config } : LB),
    ...(through === 'interceptor'
      ? { interceptors: [createRetryInterceptor(config, { onEvent: (e) => events.push(e) })] }
      : {}),
  });
}

function sayHello(greeter: ReturnType<typeof client>, drop: string, events: RetryEvent[]): Promise<Outcome> {
  const metadata = new grpc.Metadata();
  metadata.set(DROP_KEY, drop);
  return new Promise((resolve) => {
    greeter.sayHello({ name: 'x' }, metadata, { deadline: Date.now() + 10_000 }, (error, reply) => {
      resolve({ error, reply, events });
    });
  });
}

async function once(
  config: ServiceConfigJson,
  through: 'interceptor' | 'grpc-js',
  drop: string,
): Promise<Outcome> {
  const events: RetryEvent[] = [];
  const greeter = client(config, through, events);
  try {
    return await sayHello(greeter, drop, events);
  } finally {
    greeter.close();
  }
}

const starts = (events: RetryEvent[]) => events.filter((e) => e.type === 'attempt-start').length;
const callEnd = (events: RetryEvent[]) => events.find((e) => e.type === 'call-end');

describe('a call the load balancer drops', () => {
  it.each(['interceptor', 'grpc-js'] as const)(
    'is not retried (%s): one attempt, the drop its status',
    async (through) => {
      const { error, events } = await once(retry(), through, 'all');
      expect([error?.code, error?.details]).toEqual([grpc.status.UNAVAILABLE, DROP_DETAILS]);
      expect(server.attemptsOf(METHOD)).toHaveLength(0);
      if (through === 'interceptor') {
        expect(starts(events)).toBe(1);
        expect(callEnd(events)).toMatchObject({ attempts: 1, reason: 'lb-drop', details: DROP_DETAILS });
      }
    },
  );

  it.each(['interceptor', 'grpc-js'] as const)(
    'ends a retry it drops with the drop (%s)',
    async (through) => {
      server.scriptMethod(METHOD, [{ status: 'UNAVAILABLE' }, {}]);
      const { error, events } = await once(retry(), through, 'later');
      expect([error?.code, error?.details]).toEqual([grpc.status.UNAVAILABLE, DROP_DETAILS]);
      expect(server.attemptsOf(METHOD)).toHaveLength(1);
      if (through === 'interceptor') {
        expect(starts(events)).toBe(2);
        expect(callEnd(events)).toMatchObject({ attempts: 2, reason: 'lb-drop' });
      }
    },
  );

  it('stops hedging at a dropped hedge, and the attempt in flight still answers', async () => {
    server.scriptMethod(METHOD, [{ delayMs: 300, response: { message: 'slow but sure' } }]);
    const { error, reply, events } = await once(hedge, 'interceptor', 'later');
    expect(error).toBeNull();
    expect(reply?.message).toBe('slow but sure');
    // The first hedge was dropped; no second one went (maxAttempts 3 would have allowed it at 40 ms).
    expect(starts(events)).toBe(2);
    expect(server.attemptsOf(METHOD)).toHaveLength(1);
    expect(callEnd(events)).toMatchObject({ code: grpc.status.OK, attempts: 2 });
  });

  it('ends a hedged call with the drop when no attempt reaches a server', async () => {
    const { error, events } = await once(hedge, 'interceptor', 'all');
    expect([error?.code, error?.details]).toEqual([grpc.status.UNAVAILABLE, DROP_DETAILS]);
    expect(starts(events)).toBe(1);
    expect(callEnd(events)).toMatchObject({ attempts: 1, reason: 'lb-drop' });
  });

  it('takes no retryThrottling token: a server failure after many drops is still retried', async () => {
    // maxTokens 10: six counted failures would leave 4, under the threshold of 5, and throttle the next retry.
    const config = retry({ retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } });
    const events: RetryEvent[] = [];
    const greeter = client(config, 'interceptor', events);
    try {
      for (let i = 0; i < 6; i++) {
        const dropped = await sayHello(greeter, 'all', events);
        expect(dropped.error?.details).toBe(DROP_DETAILS);
      }
      server.scriptMethod(METHOD, [{ status: 'UNAVAILABLE' }, { response: { message: 'second' } }]);
      const { error, reply } = await sayHello(greeter, 'none', events);
      expect(error).toBeNull();
      expect(reply?.message).toBe('second');
      expect(events.filter((e) => e.type === 'throttled')).toEqual([]);
    } finally {
      greeter.close();
    }
  });

  it("is told from a server's status with the same words: a server relaying a drop is retried", async () => {
    server.scriptMethod(METHOD, [
      { status: 'UNAVAILABLE', details: DROP_DETAILS },
      { response: { message: 'ok' } },
    ]);
    const { error, reply, events } = await once(retry(), 'interceptor', 'none');
    expect(error).toBeNull();
    expect(reply?.message).toBe('ok');
    expect(starts(events)).toBe(2);
  });
});

describe('grpc-js its own hedging, for comparison', () => {
  it('ends the call with a dropped hedge at once, the attempt in flight cancelled', async () => {
    server.scriptMethod(METHOD, [{ delayMs: 300, response: { message: 'slow but sure' } }]);
    const { error } = await once(hedge, 'grpc-js', 'later');
    expect([error?.code, error?.details]).toEqual([grpc.status.UNAVAILABLE, DROP_DETAILS]);
  });
});
