/**
 * A call made by a server handler with `{ parent: call }`: the parent's cancellation and deadline bound the whole
 * retried call, as they bound a call without retries. grpc-js ties a call to its parent only when the call is made,
 * so an engine that handed the parent to each attempt missed a cancellation that came during a backoff, and let
 * retries go on after the caller had gone.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyServer, loadFlakyTestService } from '../../src/testing/index.js';
import { bindLocal } from '../helpers/bind-local.js';
import { type CallOutcome, callMetadata, retryConfig, testClient, unary } from '../helpers/harness.js';

const Service = loadFlakyTestService();
let downstream: FlakyServer;
let middle: grpc.Server;
let middleAddress: string;
/** What the middle server's downstream call ended with, per call id. */
const downstreamOutcomes = new Map<string, Promise<CallOutcome>>();

beforeAll(async () => {
  downstream = await FlakyServer.start();
  // Backoffs of 300 ms: longer than the parent's deadline below, and time for the caller to cancel in.
  const client = testClient(downstream.address, [
    createRetryInterceptor(retryConfig({ initialBackoff: '0.3s', maxBackoff: '0.3s' })),
  ]);
  middle = new grpc.Server();
  middle.addService(Service.service, {
    Unary(call: grpc.ServerUnaryCall<{ payload: string }, object>, callback: grpc.sendUnaryData<object>) {
      const id = String(call.metadata.get('x-flaky-call-id')[0]);
      // Deadline only, for the deadline's test: the parent's own cancellation at its deadline would race it.
      const flags = id.endsWith('deadline') ? { propagate_flags: grpc.propagate.DEADLINE } : {};
      const outcome = unary(client, id, { payload: 'down' }, { callOptions: { parent: call, ...flags } });
      downstreamOutcomes.set(id, outcome);
      void outcome.then((o) => callback(o.error ?? null, o.responses[0] ?? {}));
    },
  });
  const port = await bindLocal(middle);
  middleAddress = `127.0.0.1:${port}`;
});
afterAll(async () => {
  middle.forceShutdown();
  await downstream.stop();
});

/** Calls the middle server, which calls the always-failing downstream with its call as the parent. */
function callThrough(
  id: string,
  opts: { deadlineMs?: number; cancelAfterMs?: number },
): Promise<CallOutcome> {
  downstream.script(id, [{ status: 'UNAVAILABLE' }]);
  const client = testClient(middleAddress);
  return unary(
    client,
    id,
    { payload: 'up' },
    {
      metadata: callMetadata(id),
      deadlineMs: opts.deadlineMs,
      onCall: (call) => {
        if (opts.cancelAfterMs !== undefined) setTimeout(() => call.cancel(), opts.cancelAfterMs);
      },
    },
  ).finally(() => client.close());
}

describe('a retried call whose parent server call goes away', () => {
  it('the caller cancels during the backoff: the downstream call ends CANCELLED and makes no retry', async () => {
    await callThrough('parent-cancel', { cancelAfterMs: 100 });
    const outcome = await downstreamOutcomes.get('parent-cancel');
    expect(outcome?.error?.code).toBe(grpc.status.CANCELLED);
    expect(outcome?.error?.details).toBe('Cancelled by parent call');
    expect(downstream.attempts('parent-cancel')).toHaveLength(1);
  });

  it("the parent's deadline comes during the backoff: the downstream call ends at it, with no retry", async () => {
    await callThrough('parent-deadline', { deadlineMs: 150 });
    const outcome = await downstreamOutcomes.get('parent-deadline');
    expect(outcome?.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(downstream.attempts('parent-deadline')).toHaveLength(1);
  });
});
