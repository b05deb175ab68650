import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AVOID_TRIED_REPLICAS_POLICY } from '../../src/lb/avoid-tried-balancer.js';
import { eventsOf, hedgingConfig, retryConfig, unary } from '../helpers/harness.js';
import { type ReplicaHarness, startReplicaHarness, warmUp } from './replica-harness.js';

const FAIL = { status: 'UNAVAILABLE' };
let h: ReplicaHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Runs `calls` unary calls one after another, returning their codes by call id. */
async function run(harness: ReplicaHarness, prefix: string, calls: number): Promise<Map<string, number>> {
  const codes = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    const id = `${prefix}-${i}`;
    codes.set(id, (await unary(harness.client, id)).code);
  }
  return codes;
}

/**
 * Calls until six in a row sent no attempt to replica `index`: the client has dropped it then (round_robin over
 * three replicas would have offered it to two of those six first attempts).
 */
async function untilLeft(harness: ReplicaHarness, index: number): Promise<void> {
  const address = harness.cluster.addresses[index];
  let clean = 0;
  for (let i = 0; i < 100 && clean < 6; i++) {
    const before = harness.events.length;
    await unary(harness.client, `leave-${i}`);
    const ends = eventsOf(harness.events.slice(before), 'attempt-end');
    clean = ends.some((end) => end.peer === address) ? 0 : clean + 1;
  }
  expect(clean, `replica ${index} still picked`).toBe(6);
}

const distinct = (xs: readonly number[]) => new Set(xs).size === xs.length;

describe('avoiding tried replicas: retries', () => {
  it('1 tried: a retry after a failing replica goes to another one, and no call fails', async () => {
    h = await startReplicaHarness([FAIL, {}, {}], retryConfig({ maxAttempts: 2 }));
    await warmUp(h, [1, 2]);
    const codes = await run(h, 'one', 30);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    let retried = 0;
    for (const id of codes.keys()) {
      const replicas = h.replicasOf(id);
      if (replicas[0] === 0) {
        retried += 1;
        expect(replicas).toHaveLength(2);
        expect(replicas[1]).not.toBe(0);
      } else {
        expect(replicas).toHaveLength(1);
      }
    }
    expect(retried).toBeGreaterThan(0);
  });

  it('2 tried: the third attempt goes to the one replica not tried yet', async () => {
    h = await startReplicaHarness([FAIL, FAIL, {}], retryConfig({ maxAttempts: 3 }));
    await warmUp(h, [0, 1, 2]);
    const codes = await run(h, 'two', 20);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    for (const id of codes.keys()) {
      const replicas = h.replicasOf(id);
      expect(distinct(replicas)).toBe(true);
      expect(replicas.at(-1)).toBe(2);
    }
    expect(h.cluster.served()[2]).toBe(20);
  });

  it('all tried: attempts visit every replica once, then fall back to the child policy', async () => {
    h = await startReplicaHarness([FAIL, FAIL, FAIL], retryConfig({ maxAttempts: 5 }));
    await warmUp(h, [0, 1, 2]);
    const codes = await run(h, 'all', 10);
    expect([...codes.values()].every((code) => code === status.UNAVAILABLE)).toBe(true);
    for (const id of codes.keys()) {
      const replicas = h.replicasOf(id);
      expect(replicas).toHaveLength(5);
      expect(new Set(replicas.slice(0, 3)).size).toBe(3);
    }
  });

  it('without avoidance, retries under round_robin do return to the replica that failed', async () => {
    const config = retryConfig({ maxAttempts: 5 }, { loadBalancingConfig: [{ round_robin: {} }] });
    h = await startReplicaHarness([FAIL, FAIL, FAIL], config, {});
    await warmUp(h, [0, 1, 2]);
    await run(h, 'rr', 6);
    // Five attempts over three replicas: round_robin alone repeats one within a call.
    expect(h.cluster.attempts().length).toBe(30);
    const ids = [...new Set(h.cluster.attempts().map((a) => a.callId as string))];
    expect(ids.some((id) => !distinct(h?.replicasOf(id).slice(0, 4) ?? []))).toBe(true);
  });
});

describe('avoiding tried replicas: hedging', () => {
  it('a hedge leaves the slow replica: one slow replica of three', async () => {
    const config = hedgingConfig({ maxAttempts: 2, hedgingDelay: '0.03s' });
    h = await startReplicaHarness([{ delayMs: 1500 }, { delayMs: 1 }, { delayMs: 1 }], config);
    await warmUp(h, [1, 2]);
    h.cluster.reset();
    const codes = await run(h, 'hedge', 12);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    let hedged = 0;
    for (const id of codes.keys()) {
      const replicas = h.replicasOf(id);
      if (replicas[0] === 0) {
        hedged += 1;
        expect(replicas).toHaveLength(2);
        expect(replicas[1]).not.toBe(0);
      }
    }
    expect(hedged).toBeGreaterThan(0);
  });
});

describe('avoiding tried replicas: a new channel', () => {
  it('the first calls of a new channel (no warm-up, concurrent) never retry on a replica they tried', async () => {
    // The channel creates its balancer only when these calls take it out of IDLE, after their first attempts
    // started: those attempts must carry the hint all the same, or their picks are not remembered.
    const config = retryConfig({ maxAttempts: 3, initialBackoff: '0.1s', maxBackoff: '0.2s' });
    let collisions = 0;
    for (let round = 0; round < 3; round++) {
      const harness = await startReplicaHarness([FAIL, FAIL, FAIL], config);
      try {
        const ids = Array.from({ length: 6 }, (_, i) => `new-${round}-${i}`);
        const results = await Promise.all(ids.map((id) => unary(harness.client, id)));
        expect(results.map((r) => r.code)).toEqual(ids.map(() => status.UNAVAILABLE));
        for (const id of ids) {
          expect(harness.replicasOf(id)).toHaveLength(3);
          if (!distinct(harness.replicasOf(id))) collisions += 1;
        }
      } finally {
        await harness.close();
      }
    }
    expect(collisions).toBe(0);
  });
});

describe('avoiding tried replicas: events, the wire, child policies', () => {
  it('attempt-end events carry the address each attempt went to', async () => {
    h = await startReplicaHarness([FAIL, {}, {}], retryConfig({ maxAttempts: 2 }));
    await warmUp(h, [1, 2]);
    await run(h, 'peer', 9);
    const ends = eventsOf(h.events, 'attempt-end');
    expect(ends).toHaveLength(h.cluster.attempts().length);
    const served = h.cluster.attempts();
    const addresses = h.cluster.addresses;
    // One call at a time: the n-th attempt-end is the n-th attempt served.
    ends.forEach((end, i) => {
      expect(end.peer).toBe(addresses[served[i]?.replica ?? -1]);
    });
  });

  it('puts nothing on the wire: replicas see the same headers as without avoidance', async () => {
    const headerKeys = async (avoid: boolean): Promise<string[]> => {
      const config = retryConfig({ maxAttempts: 3 }, { loadBalancingConfig: [{ round_robin: {} }] });
      const harness = await startReplicaHarness([FAIL, {}, {}], config, { avoidTriedReplicas: avoid });
      try {
        await warmUp(harness, [1, 2]);
        await run(harness, 'wire', 9);
        const retries = harness.cluster.attempts().filter((a) => a.attempt > 1);
        expect(retries.length).toBeGreaterThan(0);
        return [...new Set(retries.flatMap((a) => Object.keys(a.metadata.getMap())))].sort();
      } finally {
        await harness.close();
      }
    };
    const withAvoidance = await headerKeys(true);
    expect(withAvoidance).toEqual(await headerKeys(false));
    expect(withAvoidance.some((key) => key.includes('replica') || key.includes('tried'))).toBe(false);
  });

  it('wraps a child policy other than round_robin (outlier_detection over round_robin)', async () => {
    const child = [{ outlier_detection: { child_policy: [{ round_robin: {} }] } }];
    const config = retryConfig({ maxAttempts: 3 }, { loadBalancingConfig: child });
    h = await startReplicaHarness([FAIL, FAIL, {}], config);
    await warmUp(h, [0, 1, 2]);
    const codes = await run(h, 'od', 10);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    for (const id of codes.keys()) {
      expect(distinct(h.replicasOf(id))).toBe(true);
    }
  });

  it('with pick_first as the child, every attempt stays on the one connection (the fallback)', async () => {
    const config = retryConfig({ maxAttempts: 3 }, { loadBalancingConfig: [{ pick_first: {} }] });
    h = await startReplicaHarness([FAIL, FAIL, FAIL], config);
    const codes = await run(h, 'pf', 4);
    expect([...codes.values()].every((code) => code === status.UNAVAILABLE)).toBe(true);
    expect(h.cluster.served().filter((n) => n > 0)).toHaveLength(1);
  });

  it('can be named by hand in loadBalancingConfig', async () => {
    const lb = [{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] } }];
    h = await startReplicaHarness(
      [FAIL, FAIL, {}],
      retryConfig({ maxAttempts: 3 }, { loadBalancingConfig: lb }),
      {},
    );
    await warmUp(h, [0, 1, 2]);
    const codes = await run(h, 'hand', 8);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
  });
});

describe('avoiding tried replicas: a loadBalancingConfig list with a fallback', () => {
  it('with avoidTriedReplicas, a list whose first entry is the policy runs it (grpc-js uses the first it knows)', async () => {
    const lb = [
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] } },
      { round_robin: {} },
    ];
    h = await startReplicaHarness(
      [FAIL, FAIL, {}],
      retryConfig({ maxAttempts: 3 }, { loadBalancingConfig: lb }),
    );
    await warmUp(h, [0, 1, 2]);
    const codes = await run(h, 'fallback', 10);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    for (const id of codes.keys()) {
      expect(distinct(h.replicasOf(id))).toBe(true);
    }
  });
});

describe('avoiding tried replicas: replicas joining and leaving', () => {
  it('a replica that comes up is used, one that goes down is left out', async () => {
    h = await startReplicaHarness([FAIL, {}, { down: true }], retryConfig({ maxAttempts: 3 }));
    await warmUp(h, [1]);
    let codes = await run(h, 'before', 10);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    expect(h.cluster.served()[2]).toBe(0);

    // Replica 2 joins; replica 1 starts failing: calls need replica 2 and get there by avoiding 0 and 1.
    await h.cluster.setScript(2, {});
    for (let i = 0; i < 100 && (h.cluster.served()[2] ?? 0) === 0; i++) {
      await unary(h.client, `join-warm-${i}`);
    }
    expect(h.cluster.served()[2]).toBeGreaterThan(0);
    await h.cluster.setScript(1, FAIL);
    h.cluster.reset();
    codes = await run(h, 'joined', 10);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    for (const id of codes.keys()) {
      expect(distinct(h.replicasOf(id))).toBe(true);
      expect(h.replicasOf(id).at(-1)).toBe(2);
    }

    // Replica 1 leaves: retries go from 0 straight to 2. Until the client sees its connection close, a call may
    // still be sent there (and end CANCELLED, as under round_robin alone): wait for that first.
    await h.cluster.setScript(1, { down: true });
    await untilLeft(h, 1);
    h.cluster.reset();
    codes = await run(h, 'left', 10);
    expect([...codes.values()].every((code) => code === status.OK)).toBe(true);
    expect(h.cluster.served()[1]).toBe(0);
    for (const id of codes.keys()) {
      expect(h.replicasOf(id).length).toBeLessThanOrEqual(2);
    }
  });
});
