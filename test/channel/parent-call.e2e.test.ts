/**
 * `interceptChannel` and a server handler's child calls made with `{ parent: call }`. The retry interceptor takes
 * the parent out of the options it hands down and follows its cancellation once per call; the channel must not put
 * it back on each attempt, where grpc-js would add a 'cancelled' listener to the parent per attempt (and warn
 * MaxListenersExceededWarning past 10). With no interceptor taking it out, the parent still reaches the channel.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interceptChannel } from '../../src/channel/intercepted-channel.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { bindLocal } from '../helpers/bind-local.js';
import {
  type CallOutcome,
  callMetadata,
  type FlakyClient,
  retryConfig,
  testClient,
  unary,
} from '../helpers/harness.js';

const Service = loadFlakyTestService();
const CHILD_CALLS = 10;
let downstream: FlakyServer;
let middle: grpc.Server;
let middleAddress: string;
const children: Record<'retry' | 'plain', FlakyClient> = {} as never;
/** The parent's 'cancelled' listeners once all its child calls ended, per parent call id. */
const listenersLeft = new Map<string, number>();
/** Child calls that failed in the listener-count runs (each should succeed after one retry). */
let childFailures = 0;
/** What the (single) child call of a parent ended with, per parent call id. */
const childOutcomes = new Map<string, Promise<CallOutcome>>();

function channelClient(interceptors: grpc.Interceptor[]): FlakyClient {
  const channel = interceptChannel(
    new grpc.Channel(downstream.address, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 }),
    interceptors,
  );
  return testClient(downstream.address, [], { channelOverride: channel });
}

beforeAll(async () => {
  downstream = await FlakyServer.start();
  children.retry = channelClient([createRetryInterceptor(retryConfig())]);
  // An interceptor that hands the options down as they are, `parent` included.
  children.plain = channelClient([(options, next) => new grpc.InterceptingCall(next(options))]);
  middle = new grpc.Server();
  middle.addService(Service.service, {
    async Unary(
      call: grpc.ServerUnaryCall<{ payload: string }, object>,
      callback: grpc.sendUnaryData<object>,
    ) {
      const id = String(call.metadata.get('x-flaky-call-id')[0]);
      const child = id.includes('plain') ? children.plain : children.retry;
      if (id.startsWith('cancel')) {
        const outcome = unary(child, `${id}-child`, { payload: 'down' }, { callOptions: { parent: call } });
        childOutcomes.set(id, outcome);
        const o = await outcome;
        callback(o.error ?? null, {});
        return;
      }
      for (let i = 0; i < CHILD_CALLS; i++) {
        const o = await unary(child, `${id}-${i}`, { payload: 'down' }, { callOptions: { parent: call } });
        if (o.error) childFailures += 1;
      }
      listenersLeft.set(id, call.listenerCount('cancelled'));
      callback(null, {});
    },
  });
  const port = await bindLocal(middle);
  middleAddress = `127.0.0.1:${port}`;
});
afterAll(async () => {
  children.retry?.close();
  children.plain?.close();
  middle?.forceShutdown();
  await downstream?.stop();
});

function callMiddle(id: string, cancelAfterMs?: number): Promise<CallOutcome> {
  const client = testClient(middleAddress);
  return unary(
    client,
    id,
    { payload: 'up' },
    {
      metadata: callMetadata(id),
      onCall: (call) => {
        if (cancelAfterMs !== undefined) setTimeout(() => call.cancel(), cancelAfterMs);
      },
    },
  ).finally(() => client.close());
}

describe('interceptChannel: child calls of a server call', () => {
  it("leaves no 'cancelled' listener on the parent when the retry interceptor took it over", async () => {
    for (let i = 0; i < CHILD_CALLS; i++)
      downstream.script(`listeners-${i}`, [{ status: 'UNAVAILABLE' }, {}]);
    const outcome = await callMiddle('listeners');
    expect(outcome.error).toBeUndefined();
    expect(downstream.attempts('listeners-0')).toHaveLength(2); // each child call retried once
    expect(childFailures).toBe(0);
    expect(listenersLeft.get('listeners')).toBe(0);
  });

  it('cancelling the parent cancels a retried child call', async () => {
    downstream.script('cancel-retry-child', [{ delayMs: 5000 }]);
    const started = Date.now();
    await callMiddle('cancel-retry', 150);
    const child = await childOutcomes.get('cancel-retry');
    expect(child?.error?.code).toBe(grpc.status.CANCELLED);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('with no interceptor taking the parent out, the channel still gets it: cancelling the parent cancels the child', async () => {
    downstream.script('cancel-plain-child', [{ delayMs: 5000 }]);
    const started = Date.now();
    await callMiddle('cancel-plain', 150);
    const child = await childOutcomes.get('cancel-plain');
    expect(child?.error?.code).toBe(grpc.status.CANCELLED);
    expect(child?.error?.details).toBe('Cancelled by parent call');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
