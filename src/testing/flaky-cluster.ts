/**
 * `FlakyCluster`: N replicas of the flaky test service behind one target, each a grpc-js server on its own
 * 127.0.0.1 port playing its own {@link ReplicaScript} (latency, failures, down, slow for a while). It records which
 * replica served each attempt, so that a test can check where retries and hedges went. The replicas serve the
 * package's FlakyTest `Unary` method only, not the services of your protos (`FlakyServer` serves those).
 */
import * as grpc from '@grpc/grpc-js';
import { guardedRandom } from '../util/guarded-random.js';
import { checkOptions, describeValue } from '../util/option-checks.js';
import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { CallIdCounters, DEFAULT_MAX_TRACKED_CALL_IDS } from './call-id-counters.js';
import { CALL_ID_METADATA_KEY } from './flaky-script.js';
import { checkBound, DEFAULT_MAX_RECORDED_ATTEMPTS } from './flaky-server-options.js';
import type { FlakyTestRequest, FlakyTestResponse } from './flaky-test-client.js';
import { loadFlakyTestService } from './flaky-test-service.js';
import { realClearTimeout, realNowMs, realSetTimeout } from './real-timers.js';
import { type CheckedReplicaScript, checkReplicaScript, type ReplicaScript } from './replica-script.js';

/** One attempt a replica received. */
export interface ClusterAttempt {
  /** 0-based index of the replica that served it. */
  readonly replica: number;
  /** The `x-flaky-call-id` request header, when the client sent one. */
  readonly callId: string | undefined;
  /** 1-based number of this attempt among those of its call id, across the cluster (0 without a call id). */
  readonly attempt: number;
  /** Every request header the replica received (to check what went on the wire). */
  readonly metadata: grpc.Metadata;
  /**
   * Status the replica ended the attempt with; undefined while it runs or when the client cancelled it (the name
   * `FlakyServer`'s `RecordedAttempt` uses).
   */
  endedWith: number | undefined;
  /** The client cancelled the attempt before the replica answered. */
  cancelled: boolean;
}

/** Options of {@link FlakyCluster.start}. */
export interface FlakyClusterOptions {
  /**
   * Random source in [0, 1) for latency ranges and failure rates (default `Math.random`), such as
   * `seededRandom(7)`. A draw that throws or falls outside [0, 1) is reported once as a process warning
   * (`GRPC_RETRY_HEDGING_HOOK_ERROR`), and `Math.random` is drawn in its place.
   */
  random?: (() => number) | undefined;
  /**
   * The most attempts kept for {@link FlakyCluster.attempts}: beyond it the oldest are forgotten, so that a long
   * load or soak test does not grow the cluster's memory without bound (`served()` still counts every attempt).
   * Default 100,000 (as `FlakyServer`'s); 0 keeps none; `Infinity` keeps all.
   */
  maxRecordedAttempts?: number | undefined;
  /**
   * The most call ids whose attempt counter is kept: beyond it the call id whose latest attempt is the oldest, with
   * no attempt in progress, is forgotten (a later attempt of it would count from 1 again). Default 100,000;
   * `Infinity` keeps all.
   */
  maxTrackedCallIds?: number | undefined;
}

const OPTION_NAMES: readonly string[] = ['random', 'maxRecordedAttempts', 'maxTrackedCallIds'];

interface Replica {
  server: grpc.Server | undefined;
  readonly port: number;
  script: CheckedReplicaScript;
  /** The attempts in flight: each one's answer timer, and what ends it with UNAVAILABLE when the replica goes down. */
  readonly inFlight: Map<NodeJS.Timeout, () => void>;
  /** A `setScript` bringing the replica up, while its server binds the port. */
  starting?: Promise<void> | undefined;
}

/** How long a replica going down waits for its in-flight attempts' UNAVAILABLE to reach their clients. */
const DOWN_FLUSH_MS = 1_000;

/**
 * @example
 * const cluster = await FlakyCluster.start([{ delayMs: 200 }, { delayMs: 3 }, { delayMs: 3 }]);
 * const client = new (loadFlakyTestService())(cluster.target, grpc.credentials.createInsecure(), {
 *   ...createChannelOptions(config, { avoidTriedReplicas: true }),
 *   interceptors: [createRetryInterceptor(config)],
 * });
 * // ... calls ...
 * cluster.served(); // e.g. [12, 500, 488]
 * await cluster.stop();
 */
export class FlakyCluster {
  /** The kept attempts in arrival order (a Set: the oldest goes in O(1)). */
  private readonly log = new Set<ClusterAttempt>();
  private readonly attemptsByCallId: CallIdCounters;
  /** Attempts served by each replica since the start or the last reset, kept or not. */
  private servedCounts: number[] = [];
  private stopped = false;

  private constructor(
    private readonly replicas: Replica[],
    private readonly random: () => number,
    private readonly maxRecorded: number,
    maxCallIds: number,
  ) {
    if (!Array.isArray(replicas)) {
      // Private in TypeScript only: from JavaScript, `new FlakyCluster()` would make a cluster with no replicas.
      throw new TypeError(
        'FlakyCluster: start one with `await FlakyCluster.start(scripts, options)`; the constructor is not public',
      );
    }
    this.attemptsByCallId = new CallIdCounters(maxCallIds);
  }

  /**
   * Starts one server per script on 127.0.0.1 (port 0), insecure; a replica whose script says `down` gets its port
   * but does not serve until {@link setScript} brings it up.
   *
   * @throws TypeError or RangeError naming the invalid script field (`scripts[1].delayMs`, ...).
   */
  static async start(
    scripts: readonly ReplicaScript[],
    options: FlakyClusterOptions = {},
  ): Promise<FlakyCluster> {
    if (!Array.isArray(scripts) || scripts.length === 0) {
      throw new TypeError(
        `FlakyCluster.start: scripts must be a non-empty array, one script per replica, got ${describeValue(scripts)}`,
      );
    }
    const owner = 'FlakyCluster.start';
    const checkedOptions = checkOptions(`${owner}: options`, options, OPTION_NAMES) as FlakyClusterOptions;
    const given = checkedOptions.random;
    if (given !== undefined && typeof given !== 'function') {
      throw new TypeError(`${owner}: options.random must be a function, got ${describeValue(given)}`);
    }
    // Drawn inside grpc-js's handler, where a throw became UNKNOWN "Unknown error" and an attempt that never ended:
    // a draw that throws or falls outside [0, 1) is reported once, and Math.random drawn instead.
    const random = given === undefined ? Math.random : guardedRandom(given, `${owner}: options`);
    const maxRecorded = checkBound(
      owner,
      'maxRecordedAttempts',
      checkedOptions.maxRecordedAttempts,
      DEFAULT_MAX_RECORDED_ATTEMPTS,
      0,
    );
    const maxCallIds = checkBound(
      owner,
      'maxTrackedCallIds',
      checkedOptions.maxTrackedCallIds,
      DEFAULT_MAX_TRACKED_CALL_IDS,
      1,
    );
    const now = realNowMs();
    const checked = scripts.map((script, index) => checkReplicaScript(script, `scripts[${index}]`, now));
    const replicas: Replica[] = [];
    const cluster = new FlakyCluster(replicas, random, maxRecorded, maxCallIds);
    try {
      for (const script of checked) {
        const { server, port } = await cluster.serve(replicas.length, 0);
        replicas.push({ server, port, script, inFlight: new Map() });
      }
      for (const replica of replicas) {
        if (replica.script.down) {
          await cluster.shutDown(replica);
        }
      }
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The client target naming every replica: `ipv4:127.0.0.1:p1,127.0.0.1:p2,...` (grpc-js's static resolver). */
  get target(): string {
    return `ipv4:${this.addresses.join(',')}`;
  }

  /** Each replica's `127.0.0.1:port`, by index (as grpc-js names its subchannels and attempts' peers). */
  get addresses(): string[] {
    return this.replicas.map((replica) => `127.0.0.1:${replica.port}`);
  }

  /** Index of the replica at `address` (`127.0.0.1:port`), or -1. */
  replicaAt(address: string): number {
    return this.addresses.indexOf(address);
  }

  /**
   * Replaces replica `index`'s script; `slow` counts from now. Taking a replica `down` ends its attempts in flight
   * with UNAVAILABLE (`replica <index> went down`), as a server that crashed leaves its clients, and closes its
   * server (its port refuses connections); leaving `down` starts it again on the same port.
   */
  async setScript(index: number, script: ReplicaScript): Promise<void> {
    const replica = this.replicaOf(index);
    const checked = checkReplicaScript(script, `setScript(${index})`, realNowMs());
    replica.script = checked;
    if (checked.down && replica.server !== undefined) {
      await this.takeDown(replica);
    } else if (!checked.down && replica.server === undefined && !this.stopped) {
      await this.bringUp(index, replica);
    }
  }

  /**
   * Serves the replica again on its port. Its server is kept only if, once bound, the replica is still meant to be
   * up: a `stop()` or a `setScript` taking it down while it was binding shuts the new server down, rather than
   * leave it listening (and the process alive). Two `setScript`s bringing it up share one bind.
   */
  private bringUp(index: number, replica: Replica): Promise<void> {
    replica.starting ??= this.serve(index, replica.port).then(
      ({ server }) => {
        replica.starting = undefined;
        if (this.stopped || replica.script.down) {
          server.forceShutdown();
        } else {
          replica.server = server;
        }
      },
      (error: unknown) => {
        replica.starting = undefined;
        throw error;
      },
    );
    return replica.starting;
  }

  /** Attempts served by each replica, by index, since the start or the last {@link reset} (kept or forgotten). */
  served(): number[] {
    return this.replicas.map((_, index) => this.servedCounts[index] ?? 0);
  }

  /**
   * The kept attempts (the latest `maxRecordedAttempts`) in arrival order (live objects: `endedWith` and `cancelled`
   * change as attempts end); with `callId`, those of that call id (the `x-flaky-call-id` header).
   * @throws TypeError when `callId` is given and is not a string.
   */
  attempts(callId?: string): readonly ClusterAttempt[] {
    if (callId !== undefined && typeof callId !== 'string') {
      throw new TypeError(
        `FlakyCluster.attempts: callId must be a string (the x-flaky-call-id a client sends), or left out for every attempt, got ${describeValue(callId)}${wrongTypeHint(callId, 'string')}`,
      );
    }
    const all = [...this.log];
    return callId === undefined ? all : all.filter((a) => a.callId === callId);
  }

  /** Forgets the recorded attempts, the attempt counters and the `served()` counts. */
  reset(): void {
    this.log.clear();
    this.attemptsByCallId.clear();
    this.servedCounts = [];
  }

  private record(attempt: ClusterAttempt): void {
    this.servedCounts[attempt.replica] = (this.servedCounts[attempt.replica] ?? 0) + 1;
    if (this.maxRecorded === 0) {
      return;
    }
    this.log.add(attempt);
    if (this.log.size > this.maxRecorded) {
      const oldest = this.log.values().next().value;
      if (oldest !== undefined) {
        this.log.delete(oldest);
      }
    }
  }

  /** Stops every replica (attempts in flight are cancelled). Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      this.replicas.map(async (replica) => {
        await this.shutDown(replica);
        // a replica binding its port (setScript) shuts its new server down once bound: stop returns after that
        await replica.starting?.catch(() => undefined);
      }),
    );
  }

  private replicaOf(index: number): Replica {
    if (typeof index !== 'number') {
      throw new TypeError(
        `FlakyCluster.setScript: index must be a number (0 to ${this.replicas.length - 1}), got ${describeValue(index)}${wrongTypeHint(index, 'number')}`,
      );
    }
    const replica = this.replicas[index];
    if (!Number.isInteger(index) || replica === undefined) {
      throw new RangeError(`FlakyCluster: no replica ${index} (there are ${this.replicas.length})`);
    }
    return replica;
  }

  /** Stops the replica at once: its attempts in flight are cancelled (the cluster's `stop`). */
  private async shutDown(replica: Replica): Promise<void> {
    const server = replica.server;
    replica.server = undefined;
    for (const timer of replica.inFlight.keys()) {
      realClearTimeout(timer);
    }
    replica.inFlight.clear();
    server?.forceShutdown();
  }

  /**
   * A replica going down: its attempts in flight end with UNAVAILABLE, and its server stops taking calls at once
   * and closes once those statuses are sent (at most {@link DOWN_FLUSH_MS} later, then by force).
   */
  private async takeDown(replica: Replica): Promise<void> {
    const server = replica.server;
    replica.server = undefined;
    const pending = [...replica.inFlight];
    replica.inFlight.clear();
    for (const [timer, failDown] of pending) {
      realClearTimeout(timer);
      failDown();
    }
    if (server === undefined) {
      return;
    }
    await new Promise<void>((resolve) => {
      const force = realSetTimeout(() => {
        server.forceShutdown();
        resolve();
      }, DOWN_FLUSH_MS);
      server.tryShutdown(() => {
        realClearTimeout(force);
        resolve();
      });
    });
  }

  private serve(index: number, port: number): Promise<{ server: grpc.Server; port: number }> {
    const server = new grpc.Server();
    const unimplemented = (call: { emit?: unknown }, callback?: grpc.sendUnaryData<FlakyTestResponse>) => {
      const error = { code: grpc.status.UNIMPLEMENTED, details: 'FlakyCluster serves Unary only' };
      if (callback) {
        callback(error);
      } else {
        (call as grpc.ServerWritableStream<unknown, unknown>).emit('error', error);
      }
    };
    server.addService(loadFlakyTestService().service, {
      Unary: (
        call: grpc.ServerUnaryCall<FlakyTestRequest, FlakyTestResponse>,
        callback: grpc.sendUnaryData<FlakyTestResponse>,
      ) => this.handleUnary(index, call, callback),
      ServerStream: unimplemented,
      ClientStream: unimplemented,
      Bidi: unimplemented,
    });
    return new Promise((resolve, reject) => {
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => {
        if (error) {
          reject(new Error(`FlakyCluster: replica ${index} cannot bind 127.0.0.1:${port}: ${error.message}`));
        } else {
          resolve({ server, port: bound });
        }
      });
    });
  }

  private handleUnary(
    index: number,
    call: grpc.ServerUnaryCall<FlakyTestRequest, FlakyTestResponse>,
    callback: grpc.sendUnaryData<FlakyTestResponse>,
  ): void {
    const replica = this.replicas[index] as Replica;
    const callIdValue = call.metadata.get(CALL_ID_METADATA_KEY)[0];
    const callId = typeof callIdValue === 'string' ? callIdValue : undefined;
    const attempt = callId === undefined ? 0 : this.attemptsByCallId.next(callId);
    let inFlight = callId !== undefined;
    const settle = (): void => {
      if (inFlight && callId !== undefined) {
        inFlight = false;
        this.attemptsByCallId.settle(callId);
      }
    };
    const record: ClusterAttempt = {
      replica: index,
      callId,
      attempt,
      metadata: call.metadata.clone(),
      endedWith: undefined,
      cancelled: false,
    };
    this.record(record);
    const script = replica.script;
    const fails = script.failureRate > 0 && this.random() < script.failureRate;
    const answer = (): void => {
      replica.inFlight.delete(timer);
      settle();
      record.endedWith = fails ? script.status : grpc.status.OK;
      if (fails) {
        callback({ code: script.status, details: `replica ${index} failed the attempt (scripted)` });
      } else {
        callback(null, { payload: call.request.payload ?? '', attempt, messagesReceived: 0, index: 0 });
      }
    };
    const failDown = (): void => {
      settle();
      record.endedWith = grpc.status.UNAVAILABLE;
      callback({ code: grpc.status.UNAVAILABLE, details: `replica ${index} went down` });
    };
    const timer = realSetTimeout(answer, this.latency(script));
    replica.inFlight.set(timer, failDown);
    call.on('cancelled', () => {
      realClearTimeout(timer);
      replica.inFlight.delete(timer);
      settle();
      if (record.endedWith === undefined) {
        record.cancelled = true;
      }
    });
  }

  private latency(script: CheckedReplicaScript): number {
    if (script.slow !== undefined && realNowMs() < script.slow.until) {
      return script.slow.delayMs;
    }
    const [min, max] = script.latency;
    return min === max ? min : min + this.random() * (max - min);
  }
}
