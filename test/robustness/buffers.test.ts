/**
 * Messages larger than the replay buffers (A6 §"Memory management"): a call whose messages do not fit is committed
 * and sent once, never retried; the total limit is shared by the concurrent calls of one interceptor.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlakyServer } from '../../src/testing/index.js';
import {
  clientStream,
  eventsOf,
  type Harness,
  retryConfig,
  startHarness,
  unary,
} from '../helpers/harness.js';
import { callEnds, waitUntil, within } from './helpers.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const { OK, UNAVAILABLE } = status;

let server: FlakyServer;
const harnesses: Harness[] = [];
beforeAll(async () => {
  server = await FlakyServer.start({ serverOptions: { 'grpc.max_receive_message_length': 16 * MiB } });
});
afterAll(async () => {
  for (const h of harnesses) await h.close();
  await server.stop();
});

async function harness(perRpcBufferBytes: number, totalBufferBytes?: number): Promise<Harness> {
  const h = await startHarness(
    retryConfig({ maxAttempts: 5, initialBackoff: '0.01s', maxBackoff: '0.01s' }),
    { perRpcBufferBytes, ...(totalBufferBytes === undefined ? {} : { totalBufferBytes }) },
    server,
  );
  harnesses.push(h);
  return h;
}

const blob = (bytes: number) => Buffer.alloc(bytes, 7);

describe('messages larger than the replay buffer', () => {
  it('client streaming: a single message over perRpcBufferBytes commits; sent once, not retried', async () => {
    const h = await harness(1 * KiB);
    server.script('cs-big-fail', [{ status: UNAVAILABLE }, {}]);
    server.script('cs-big-ok', [{}]);
    const failed = await clientStream(h.client, 'cs-big-fail', [{ payload: 'big', blob: blob(4 * KiB) }]);
    const ok = await clientStream(h.client, 'cs-big-ok', [{ payload: 'big', blob: blob(4 * KiB) }]);

    expect(failed.code).toBe(UNAVAILABLE);
    expect(failed.statusEvents).toBe(1);
    expect(server.attempts('cs-big-fail')).toHaveLength(1);
    expect(server.attempts('cs-big-fail')[0]!.blobBytes).toBe(4 * KiB);
    expect(ok.code).toBe(OK);
    expect(ok.responses.map((r) => r.messagesReceived)).toEqual([1]);
    expect(server.attempts('cs-big-ok')[0]!.blobBytes).toBe(4 * KiB);
    expect(eventsOf(h.events, 'committed').map((e) => e.reason)).toEqual(['replay-buffer', 'replay-buffer']);
    expect(eventsOf(h.events, 'retry-scheduled')).toEqual([]);
  });

  it('client streaming: messages that fit are buffered; the one that overflows commits mid-stream', async () => {
    const h = await harness(3 * KiB);
    server.script('cs-grow', [{ status: UNAVAILABLE, delayMs: 200 }, {}]);
    const outcome = await clientStream(h.client, 'cs-grow', [
      { payload: 'a', blob: blob(KiB) },
      { payload: 'b', blob: blob(KiB) },
      { payload: 'c', blob: blob(2 * KiB) },
    ]);
    expect(outcome.code).toBe(UNAVAILABLE);
    expect(server.attempts('cs-grow')).toHaveLength(1);
    expect(server.attempts('cs-grow')[0]!.messages).toEqual(['a', 'b', 'c']);
    expect(eventsOf(h.events, 'committed').map((e) => e.reason)).toEqual(['replay-buffer']);
  });

  it('unary: a 4 MiB request under a 1 MiB per-RPC limit is sent once and succeeds', async () => {
    const h = await harness(1 * MiB);
    server.script('u-4mib-ok', [{}]);
    const outcome = await unary(h.client, 'u-4mib-ok', { payload: 'huge', blob: blob(4 * MiB) });
    expect(outcome.code, outcome.error?.details).toBe(OK);
    expect(outcome.statusEvents).toBe(1);
    expect(server.attempts('u-4mib-ok')).toHaveLength(1);
    expect(server.attempts('u-4mib-ok')[0]!.blobBytes).toBe(4 * MiB);
    // A single request is charged as it is written: over the limit, its attempt commits at once (A6).
    expect(eventsOf(h.events, 'committed').map((e) => e.reason)).toEqual(['replay-buffer']);
  });

  it('unary: a 4 MiB request that fails with UNAVAILABLE is not retried', async () => {
    const h = await harness(1 * MiB);
    server.script('u-4mib-fail', [{ status: UNAVAILABLE }, {}]);
    const outcome = await unary(h.client, 'u-4mib-fail', { payload: 'huge', blob: blob(4 * MiB) });
    expect(outcome.code).toBe(UNAVAILABLE);
    expect(outcome.statusEvents).toBe(1);
    expect(server.attempts('u-4mib-fail')).toHaveLength(1);
    expect(eventsOf(h.events, 'retry-scheduled')).toEqual([]);
    expect(eventsOf(h.events, 'call-end').map((e) => e.attempts)).toEqual([1]);
    // Charged as it was written: the attempt was committed then, and its failure ends the call.
    expect(eventsOf(h.events, 'committed').map((e) => e.reason)).toEqual(['replay-buffer']);
    expect(eventsOf(h.events, 'attempt-end').map((e) => e.committed)).toEqual([true]);
    expect(eventsOf(h.events, 'call-end').map((e) => e.reason)).toEqual(['replay-buffer']);
  });

  it('the total buffer is shared: the call that does not fit beside the others commits, they stay retryable', async () => {
    // 8 KiB per call, 10 KiB in all: three 3 KiB calls fit together, a fourth does not.
    const h = await harness(8 * KiB, 10 * KiB);
    const ids = ['share-1', 'share-2', 'share-3', 'share-4'];
    for (const id of ids) server.script(id, [{ status: UNAVAILABLE, delayMs: 800 }, {}]);
    const outcomes = [];
    for (const id of ids) {
      outcomes.push(clientStream(h.client, id, [{ payload: id, blob: blob(3 * KiB) }]));
      // One at a time, so which call overflows is known: each holds its bytes until it ends.
      await waitUntil(() => server.attempts(id)[0]?.halfClosed === true, 5000, `${id} on the server`);
    }
    const results = await within(Promise.all(outcomes), 10_000, 'shared-buffer calls');
    expect(results.map((r) => r.code)).toEqual([OK, OK, OK, UNAVAILABLE]);
    expect(ids.map((id) => server.attempts(id).length)).toEqual([2, 2, 2, 1]);
    expect(results.every((r) => r.statusEvents === 1)).toBe(true);
    const committed = eventsOf(h.events, 'committed').filter((e) => e.reason === 'replay-buffer');
    expect(committed.map((e) => e.callId)).toEqual([eventsOf(h.events, 'call-start')[3]!.callId]);
    // Everything was released: a new call of the same size is buffered (and so retried) again.
    server.script('share-5', [{ status: UNAVAILABLE }, {}]);
    const again = await clientStream(h.client, 'share-5', [{ payload: 'x', blob: blob(3 * KiB) }]);
    expect(again.code).toBe(OK);
    expect(server.attempts('share-5')).toHaveLength(2);
    expect([...callEnds(h.events).values()].every((list) => list.length === 1)).toBe(true);
  });

  it('the total is shared in the order the calls wrote, unary calls too: the one admitted last is not retried', async () => {
    // 8 KiB per call, 10 KiB in all: three 3 KiB requests fit together, a fourth does not. The first three fail
    // after the fourth was sent, so a retry asked late cannot take the room of a call admitted before it.
    const h = await harness(8 * KiB, 10 * KiB);
    const ids = ['u-share-1', 'u-share-2', 'u-share-3', 'u-share-4'];
    for (const id of ids) server.script(id, [{ status: UNAVAILABLE, delayMs: 800 }, {}]);
    server.script('u-share-4', [{ status: UNAVAILABLE }, {}]);
    const outcomes = [];
    for (const id of ids) {
      outcomes.push(unary(h.client, id, { payload: id, blob: blob(3 * KiB) }));
      await waitUntil(() => server.attempts(id)[0] !== undefined, 5000, `${id} on the server`);
    }
    const results = await within(Promise.all(outcomes), 10_000, 'shared-buffer unary calls');
    expect(results.map((r) => r.code)).toEqual([OK, OK, OK, UNAVAILABLE]);
    expect(ids.map((id) => server.attempts(id).length)).toEqual([2, 2, 2, 1]);
  });
});
