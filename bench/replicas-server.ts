/**
 * Replica cluster for bench/replicas.ts, run in its own process: node --import tsx bench/replicas-server.ts
 *
 * Over IPC: `start` { scripts } replaces the running cluster with a new `FlakyCluster` (one grpc-js server per
 * replica on 127.0.0.1) and answers its target and addresses; `served` answers the attempts each replica received
 * since the last `reset`, and how many of them the client cancelled.
 */
import { FlakyCluster, type ReplicaScript } from 'grpc-retry-hedging/testing';
import { serveControl } from './lib/child-server.js';

let cluster: FlakyCluster | undefined;

serveControl(
  0,
  {
    async start(args: unknown) {
      await cluster?.stop();
      cluster = await FlakyCluster.start((args as { scripts: ReplicaScript[] }).scripts);
      return { target: cluster.target, addresses: cluster.addresses };
    },
    served() {
      const attempts = cluster?.attempts() ?? [];
      return {
        attempts: cluster?.served() ?? [],
        cancelled: attempts.filter((a) => a.cancelled).length,
      };
    },
    reset() {
      cluster?.reset();
      return true;
    },
  },
  async () => {
    await cluster?.stop();
  },
);
