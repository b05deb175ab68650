import * as grpc from '@grpc/grpc-js';
import { type ChannelOptionsSettings, createChannelOptions } from '../../src/config/channel-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FlakyCluster, type ReplicaScript } from '../../src/testing/index.js';
import { callMetadata, type FlakyClient, testClient, unary } from '../helpers/harness.js';

export interface ReplicaHarness {
  cluster: FlakyCluster;
  client: FlakyClient;
  events: RetryEvent[];
  /** Replica index of each attempt of `callId`, in arrival order. */
  replicasOf(callId: string): number[];
  close(): Promise<void>;
}

/** A client of a fresh cluster, its channel options built by createChannelOptions from `config` and `settings`. */
export async function startReplicaHarness(
  scripts: ReplicaScript[],
  config: object,
  settings: ChannelOptionsSettings = { avoidTriedReplicas: true },
): Promise<ReplicaHarness> {
  const cluster = await FlakyCluster.start(scripts);
  const events: RetryEvent[] = [];
  const client = testClient(
    cluster.target,
    [createRetryInterceptor(config, { onEvent: (e) => events.push(e) })],
    createChannelOptions(config, settings),
  );
  return {
    cluster,
    client,
    events,
    replicasOf: (callId) => cluster.attempts(callId).map((a) => a.replica),
    async close() {
      client.close();
      await cluster.stop();
    },
  };
}

/** Calls until every serving replica in `replicas` has answered once (all subchannels READY), then forgets them. */
export async function warmUp(h: ReplicaHarness, replicas: readonly number[]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const served = h.cluster.served();
    if (replicas.every((r) => (served[r] ?? 0) > 0)) {
      break;
    }
    await unary(h.client, `warm-${i}`, { payload: 'warm' }, { metadata: callMetadata(`warm-${i}`) });
  }
  const served = h.cluster.served();
  if (!replicas.every((r) => (served[r] ?? 0) > 0)) {
    throw new Error(`warm-up: replicas ${replicas.join(', ')} did not all serve (${served.join(', ')})`);
  }
  h.cluster.reset();
  h.events.length = 0;
}

export { grpc };
