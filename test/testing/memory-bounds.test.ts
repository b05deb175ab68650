/**
 * The bounds that keep a long load or soak test from growing the flaky server's and the cluster's memory: the
 * request bytes kept (`maxRecordedBytes`), the call ids counted (`maxTrackedCallIds`) and the cluster's record
 * cap (`maxRecordedAttempts`). Each is checked by counting what the public API still shows.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AttemptLog, type MutableAttempt } from '../../src/testing/attempt-recording.js';
import {
  createFlakyTestClient,
  FlakyCluster,
  FlakyServer,
  SCRIPT_METADATA_KEY,
} from '../../src/testing/index.js';
import { callMetadata, testClient, unary } from '../helpers/harness.js';

let server: FlakyServer | undefined;
let cluster: FlakyCluster | undefined;
afterEach(async () => {
  await server?.stop();
  await cluster?.stop();
  server = undefined;
  cluster = undefined;
});

/** Makes one unary call per id, in order; returns each response's attempt number (0 when it failed) and code. */
async function callEach(
  address: string,
  ids: string[],
  request: { payload?: string; blob?: Buffer } = { payload: 'x' },
  extra: Record<string, string> = {},
): Promise<Array<[number, number]>> {
  const client = testClient(address);
  const out: Array<[number, number]> = [];
  try {
    for (const id of ids) {
      const outcome = await unary(client, id, request, { metadata: callMetadata(id, extra) });
      out.push([outcome.code, outcome.responses[0]?.attempt ?? 0]);
    }
  } finally {
    client.close();
  }
  return out;
}

describe('FlakyServer: maxRecordedBytes', () => {
  it('forgets the oldest attempts once their requests hold more than the bound', async () => {
    server = await FlakyServer.start({ maxRecordedBytes: 10_000 });
    const ids = ['c0', 'c1', 'c2', 'c3', 'c4'];
    await callEach(server.address, ids, { payload: 'x', blob: Buffer.alloc(4000, 7) });
    // Each attempt holds a little over 4,000 bytes (its request on the wire and its headers): two fit.
    expect(server.allAttempts().map((a) => a.callId)).toEqual(['c3', 'c4']);
    expect(server.attempts('c0')).toEqual([]);
    // Small requests hold little: a few more fit beside them.
    await callEach(server.address, ['s0', 's1', 's2']);
    expect(server.allAttempts().map((a) => a.callId)).toEqual(['c3', 'c4', 's0', 's1', 's2']);
  });

  it('keeps the newest attempt even when it alone is bigger than the bound', async () => {
    server = await FlakyServer.start({ maxRecordedBytes: 100 });
    await callEach(server.address, ['big'], { blob: Buffer.alloc(4000, 7) });
    expect(server.allAttempts().map((a) => a.callId)).toEqual(['big']);
    await callEach(server.address, ['next']);
    expect(server.allAttempts().map((a) => a.callId)).toEqual(['next']);
  });

  it('keeps an attempt in progress and forgets the oldest ended ones first', () => {
    const log = new AttemptLog({ header: undefined, field: undefined }, Number.POSITIVE_INFINITY, {
      maxBytes: 250,
    });
    const begin = (id: string): MutableAttempt => {
      const record = log.begin(id, '/s/M', new grpc.Metadata(), 0);
      log.receive(record, { payload: 'p'.repeat(100) });
      return record;
    };
    const end = (record: MutableAttempt): void => {
      record.endedAt = 1;
      log.settle(record);
    };
    begin('live'); // still running
    end(begin('b'));
    expect(log.all().map((r) => r.callId)).toEqual(['live', 'b']);
    end(begin('c')); // 300 bytes: 'b', the oldest ended, goes
    expect(log.all().map((r) => r.callId)).toEqual(['live', 'c']);
    expect(log.recordedBytes).toBe(200);
  });

  it.each([-1, 1.5, Number.NaN])('rejects %s, naming the option', async (value) => {
    await expect(FlakyServer.start({ maxRecordedBytes: value })).rejects.toThrow(
      /option "maxRecordedBytes" must be an integer >= 0 or Infinity/,
    );
  });
});

describe('FlakyServer: maxTrackedCallIds', () => {
  it('forgets the counter of the least recent call id beyond the bound', async () => {
    server = await FlakyServer.start({ maxRecordedAttempts: 0, maxTrackedCallIds: 2 });
    // a, b, a: a is the most recent; c pushes b out, not a; b then counts from 1 again.
    const out = await callEach(server.address, ['a', 'b', 'a', 'c', 'a', 'b']);
    expect(out.map(([, attempt]) => attempt)).toEqual([1, 1, 2, 1, 3, 1]);
  });

  it('numbers every attempt as before while fewer call ids than the bound are used', async () => {
    server = await FlakyServer.start({ maxTrackedCallIds: 3 });
    const out = await callEach(server.address, ['a', 'b', 'c', 'a', 'b', 'c', 'a']);
    expect(out.map(([, attempt]) => attempt)).toEqual([1, 1, 1, 2, 2, 2, 3]);
  });

  it('forgets a shipped script with its call id', async () => {
    server = await FlakyServer.start({ maxRecordedAttempts: 0, maxTrackedCallIds: 1 });
    const first = await callEach(server.address, ['a'], undefined, {
      [SCRIPT_METADATA_KEY]: '[{"status":14},{}]',
    });
    expect(first).toEqual([[grpc.status.UNAVAILABLE, 0]]);
    await callEach(server.address, ['b', 'c']);
    // 'a' and its script were forgotten: another script for it is taken, not refused as a different one.
    const again = await callEach(server.address, ['a'], undefined, { [SCRIPT_METADATA_KEY]: '[{}]' });
    expect(again).toEqual([[grpc.status.OK, 1]]);
  });

  it('never forgets a script the test registered, nor its counter', async () => {
    server = await FlakyServer.start({ maxRecordedAttempts: 0, maxTrackedCallIds: 1 });
    server.script('mine', [{ status: grpc.status.UNAVAILABLE }, {}]);
    expect(await callEach(server.address, ['mine'])).toEqual([[grpc.status.UNAVAILABLE, 0]]);
    await callEach(server.address, ['b', 'c', 'd']);
    expect(await callEach(server.address, ['mine'])).toEqual([[grpc.status.OK, 2]]);
  });

  it('never forgets a call id with an attempt in progress', async () => {
    server = await FlakyServer.start({ maxRecordedAttempts: 0, maxTrackedCallIds: 1 });
    const client = createFlakyTestClient(server.address);
    try {
      let response: { attempt: number } | undefined;
      const done = new Promise<void>((resolve) => {
        const call = client.ClientStream(callMetadata('slow'), {}, (_err, res) => {
          response = res;
          resolve();
        });
        call.write({ payload: 'one' });
        void server
          ?.waitFor(() => server?.activeAttempts() === 1)
          .then(async () => {
            await callEach(server?.address ?? '', ['b', 'c', 'd']);
            call.end();
          });
      });
      await done;
      expect(response?.attempt).toBe(1);
      expect(await callEach(server.address, ['slow'])).toEqual([[grpc.status.OK, 2]]);
    } finally {
      client.close();
    }
  });

  it.each([0, -1, 2.5])('rejects %j with a RangeError naming the option', async (value) => {
    await expect(FlakyServer.start({ maxTrackedCallIds: value })).rejects.toThrow(
      /option "maxTrackedCallIds" must be an integer >= 1 or Infinity/,
    );
  });
});

describe('FlakyCluster: bounds', () => {
  it('keeps the latest maxRecordedAttempts attempts; served() still counts every one', async () => {
    cluster = await FlakyCluster.start([{}, {}], { maxRecordedAttempts: 2 });
    await callEach(cluster.addresses[1] as string, ['c1', 'c2', 'c3', 'c4']);
    expect(cluster.attempts().map((a) => a.callId)).toEqual(['c3', 'c4']);
    expect(cluster.attempts('c1')).toEqual([]);
    expect(cluster.served()).toEqual([0, 4]);
    cluster.reset();
    expect(cluster.served()).toEqual([0, 0]);
    expect(cluster.attempts()).toEqual([]);
  });

  it('keeps 100,000 attempts by default, and none with 0', async () => {
    cluster = await FlakyCluster.start([{}], { maxRecordedAttempts: 0 });
    await callEach(cluster.target, ['a', 'b']);
    expect(cluster.attempts()).toEqual([]);
    expect(cluster.served()).toEqual([2]);
  });

  it('forgets the counter of the least recent call id beyond maxTrackedCallIds', async () => {
    cluster = await FlakyCluster.start([{}], { maxTrackedCallIds: 1 });
    const out = await callEach(cluster.target, ['a', 'a', 'b', 'a']);
    expect(out.map(([, attempt]) => attempt)).toEqual([1, 2, 1, 1]);
  });

  it.each([
    [{ maxRecordedAttempts: -1 }, /option "maxRecordedAttempts" must be an integer >= 0 or Infinity/],
    [{ maxTrackedCallIds: 0 }, /option "maxTrackedCallIds" must be an integer >= 1 or Infinity/],
  ])('rejects %j with a RangeError', async (options, message) => {
    await expect(FlakyCluster.start([{}], options)).rejects.toThrow(message);
  });
});
