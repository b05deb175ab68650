import { connect } from 'node:net';
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlakyCluster, type ReplicaScript, seededRandom } from '../../src/testing/index.js';
import { testClient, unary } from '../helpers/harness.js';
import { captureWarnings } from '../helpers/warnings.js';

let cluster: FlakyCluster | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await cluster?.stop();
  cluster = undefined;
});

/** A client of one replica only (a pick_first channel to its address). */
function clientOf(c: FlakyCluster, index: number) {
  return testClient(c.addresses[index] as string);
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused (nothing listens there). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('FlakyCluster', () => {
  it('names every replica in one target and records which replica served each attempt', async () => {
    cluster = await FlakyCluster.start([{}, {}, {}]);
    expect(cluster.target).toBe(`ipv4:${cluster.addresses.join(',')}`);
    expect(new Set(cluster.addresses).size).toBe(3);
    const client = clientOf(cluster, 1);
    try {
      const out = await unary(client, 'c1');
      expect(out.code).toBe(status.OK);
      expect(out.responses[0]?.attempt).toBe(1);
    } finally {
      client.close();
    }
    expect(cluster.served()).toEqual([0, 1, 0]);
    expect(cluster.attempts('c1')).toMatchObject([{ replica: 1, callId: 'c1', attempt: 1, endedWith: 0 }]);
    expect(cluster.replicaAt(cluster.addresses[2] as string)).toBe(2);
    cluster.reset();
    expect(cluster.served()).toEqual([0, 0, 0]);
  });

  it('plays each replica its own script: failures, latency, slow for a while', async () => {
    cluster = await FlakyCluster.start([
      { status: 'UNAVAILABLE' },
      { delayMs: 150 },
      { slow: { delayMs: 150, forMs: 60_000 } },
    ]);
    const clients = [0, 1, 2].map((i) => clientOf(cluster as FlakyCluster, i));
    try {
      expect((await unary(clients[0] as never, 'f')).code).toBe(status.UNAVAILABLE);
      for (const i of [1, 2]) {
        const t0 = Date.now();
        expect((await unary(clients[i] as never, `s${i}`)).code).toBe(status.OK);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
      }
      // The slow spell ends with a new script: answers are prompt again.
      await cluster.setScript(2, {});
      const t0 = Date.now();
      expect((await unary(clients[2] as never, 'fast')).code).toBe(status.OK);
      expect(Date.now() - t0).toBeLessThan(140);
    } finally {
      for (const c of clients) c.close();
    }
    expect(cluster.attempts('f')[0]?.endedWith).toBe(status.UNAVAILABLE);
  });

  it('takes a replica down and brings it back on the same port', async () => {
    cluster = await FlakyCluster.start([{}, { down: true }]);
    const address = cluster.addresses[1];
    const client = clientOf(cluster, 1);
    try {
      expect(
        (await unary(client, 'down', undefined, { callOptions: { deadline: Date.now() + 2000 } })).code,
      ).toBe(status.UNAVAILABLE);
      await cluster.setScript(1, {});
      expect(cluster.addresses[1]).toBe(address);
      // The client reconnects after its backoff: call until it gets through.
      let code = -1;
      for (let i = 0; i < 100 && code !== status.OK; i++) {
        code = (await unary(client, `up-${i}`)).code;
        if (code !== status.OK) await new Promise((r) => setTimeout(r, 100));
      }
      expect(code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(cluster.served()).toEqual([0, 1]);
  });

  it('a replica taken down ends its attempts in flight with UNAVAILABLE, as a crash would', async () => {
    cluster = await FlakyCluster.start([{ delayMs: 5_000 }, {}]);
    const client = clientOf(cluster, 0);
    try {
      const call = unary(client, 'in-flight');
      while (cluster.attempts('in-flight').length === 0) await new Promise((r) => setTimeout(r, 5));
      const started = Date.now();
      await cluster.setScript(0, { down: true });
      const out = await call;
      expect({ code: out.code, details: out.error?.details }).toEqual({
        code: status.UNAVAILABLE,
        details: 'replica 0 went down',
      });
      expect(Date.now() - started).toBeLessThan(2_000); // not the scripted 5 s
      expect(cluster.attempts('in-flight')).toMatchObject([
        { replica: 0, endedWith: status.UNAVAILABLE, cancelled: false },
      ]);
      // Down: its port refuses the next call.
      expect(
        (await unary(client, 'after', undefined, { callOptions: { deadline: Date.now() + 1000 } })).code,
      ).toBe(status.UNAVAILABLE);
      expect(cluster.attempts('after')).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('refuses a delay longer than a timer can wait, which Node would cut to 1 ms (an answer at once)', async () => {
    const over = 2 ** 31; // one past the largest delay setTimeout takes
    await expect(FlakyCluster.start([{ delayMs: over }])).rejects.toThrow(
      `scripts[0].delayMs must be a non-negative number of ms, at most 2147483647 (about 24.8 days), got ${over}`,
    );
    await expect(FlakyCluster.start([{}, { delayMs: [0, over] }])).rejects.toThrow(
      /scripts\[1\]\.delayMs\[1\] must be a non-negative number of ms, at most 2147483647/,
    );
    await expect(FlakyCluster.start([{ slow: { delayMs: over, forMs: 1000 } }])).rejects.toThrow(
      /scripts\[0\]\.slow\.delayMs must be a non-negative number of ms, at most 2147483647/,
    );
    cluster = await FlakyCluster.start([{ delayMs: 2 ** 31 - 1 }]);
    await expect(cluster.setScript(0, { delayMs: over })).rejects.toThrow(
      /setScript\(0\)\.delayMs must be a non-negative number of ms, at most 2147483647/,
    );
  });

  it('a replica brought up while the cluster stops is stopped too: nothing stays listening', async () => {
    cluster = await FlakyCluster.start([{ down: true }, {}]);
    const port = Number(cluster.addresses[0]?.split(':')[1]);
    const up = cluster.setScript(0, {}); // binding its port...
    await cluster.stop(); // ...while the cluster stops
    await up;
    cluster = undefined;
    expect(await connectionRefused(port)).toBe(true);
  });

  it('a replica taken down while it is being brought up stays down', async () => {
    cluster = await FlakyCluster.start([{ down: true }, {}]);
    const port = Number(cluster.addresses[0]?.split(':')[1]);
    const up = cluster.setScript(0, {});
    await cluster.setScript(0, { down: true });
    await up;
    expect(await connectionRefused(port)).toBe(true);
  });

  it('a random option that throws (seededRandom given uncalled) is reported, and the attempts are still served', async () => {
    const warnings = captureWarnings();
    const random = seededRandom as unknown as () => number; // meant: seededRandom(7)
    cluster = await FlakyCluster.start([{ delayMs: [1, 3] }], { random });
    const client = clientOf(cluster, 0);
    try {
      const out = await unary(client, 'drawn', undefined, { callOptions: { deadline: Date.now() + 2000 } });
      // before: grpc-js caught the throw and answered UNKNOWN "Unknown error", and the attempt never ended
      expect(out.code).toBe(status.OK);
    } finally {
      client.close();
    }
    expect(cluster.attempts('drawn')).toMatchObject([{ replica: 0, endedWith: status.OK }]);
    expect(warnings).toEqual([
      {
        message:
          'grpc-retry-hedging: FlakyCluster.start: options.random threw (seededRandom: seed must be a finite number, got nothing); Math.random is drawn instead; further errors of it are not reported',
        code: 'GRPC_RETRY_HEDGING_HOOK_ERROR',
      },
    ]);
  });

  it('a random option drawing outside [0, 1) is reported, not taken (a latency beyond the range)', async () => {
    const warnings = captureWarnings();
    cluster = await FlakyCluster.start([{ delayMs: [1, 3] }], { random: () => 1000 });
    const client = clientOf(cluster, 0);
    try {
      const started = Date.now();
      expect((await unary(client, 'far')).code).toBe(status.OK);
      expect(Date.now() - started).toBeLessThan(1500); // not 1 + 1000 × 2 ms
    } finally {
      client.close();
    }
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('FlakyCluster.start: options.random must return a number in [0, 1), got 1000'),
    ]);
  });

  it('rejects a bad script, naming the replica and the field', async () => {
    await expect(FlakyCluster.start([])).rejects.toThrow(/non-empty array/);
    await expect(FlakyCluster.start([{}, { delayMs: -1 }])).rejects.toThrow(
      /scripts\[1\]\.delayMs must be a non-negative/,
    );
    await expect(FlakyCluster.start([{ latencyMs: 5 } as ReplicaScript])).rejects.toThrow(
      /scripts\[0\]\.latencyMs was renamed to "delayMs"/,
    );
    await expect(
      FlakyCluster.start([{ slow: { latencyMs: 5, forMs: 10 } } as unknown as ReplicaScript]),
    ).rejects.toThrow(/scripts\[0\]\.slow\.latencyMs was renamed to "delayMs"/);
    await expect(FlakyCluster.start([{ status: 'NOPE' }])).rejects.toThrow(
      /scripts\[0\]\.status must be a gRPC status code/,
    );
    await expect(FlakyCluster.start([{ failureRate: 2 }])).rejects.toThrow(
      /failureRate must be a number from 0 to 1/,
    );
    await expect(FlakyCluster.start([{ latency: 3 } as never])).rejects.toThrow(
      /scripts\[0\]\.latency is not a replica script field/,
    );
    cluster = await FlakyCluster.start([{}]);
    await expect(cluster.setScript(3, {})).rejects.toThrow(/no replica 3 \(there are 1\)/);
  });

  it('attempts(callId) refuses a call id that is not a string, rather than finding none', async () => {
    cluster = await FlakyCluster.start([{}]);
    const client = clientOf(cluster, 0);
    try {
      await unary(client, 'c5');
    } finally {
      client.close();
    }
    expect(cluster.attempts('5')).toHaveLength(0);
    expect(cluster.attempts('c5')).toHaveLength(1);
    expect(() => cluster?.attempts(5 as never)).toThrow(
      new TypeError(
        'FlakyCluster.attempts: callId must be a string (the x-flaky-call-id a client sends), or left out for every attempt, got 5; did you mean "5" (a string)?',
      ),
    );
    expect(() => cluster?.attempts(null as never)).toThrow(/callId must be a string .*, got null$/);
  });
});
