/**
 * The per-call hint that tells the replica-avoiding load-balancing policy which replicas a call's earlier attempts
 * went to. It travels in the attempt's metadata *options* (grpc-js copies them by reference into every clone it
 * makes on the way to the picker, and never sends them), so it never reaches the wire, whatever policy the channel
 * runs. The picker writes back where it sent the attempt, which is how the next attempt learns what to avoid and
 * how events learn an attempt's peer before grpc-js knows it.
 */
import type { Metadata } from '@grpc/grpc-js';

/**
 * The metadata-options key of the hint. `Symbol.for`, so that the ESM and CJS copies of this package (which may
 * both be loaded) agree on it.
 * @internal
 */
export const TRIED_REPLICAS_OPTION: unique symbol = Symbol.for('grpc-retry-hedging.tried-replicas') as never;

/** One attempt's hint. @internal */
export interface ReplicaHint {
  /**
   * Addresses (`host:port`, as grpc-js's subchannels name them) the call's earlier attempts were sent to, as of
   * now: read when the attempt is picked, so that an earlier attempt picked after this one was made (both waited
   * for a channel still connecting) counts too.
   */
  readonly avoid: readonly string[];
  /** Where the picker sent this attempt (the last pick wins when grpc-js picks again); set by the picker. */
  picked: string | undefined;
}

interface SharedState {
  /** Whether the replica-avoiding policy was registered with grpc-js (by any copy of this package). */
  registered: boolean;
}

const STATE_KEY = Symbol.for('grpc-retry-hedging.replica-avoidance-state');

function sharedState(): SharedState {
  const holder = globalThis as { [STATE_KEY]?: SharedState };
  let state = holder[STATE_KEY];
  if (state === undefined) {
    state = { registered: false };
    holder[STATE_KEY] = state;
  }
  return state;
}

const state = sharedState();

/**
 * Whether a channel of the process may run the replica-avoiding policy: it was registered (by
 * `createChannelOptions(config, { avoidTriedReplicas: true })` or `registerAvoidTriedReplicas()`). Until then calls
 * add no hint, and a call costs one property read. Once it is, every call adds the hint, whichever channel it is on:
 * a channel creates its balancer only when its first call takes it out of IDLE, so whether a balancer is alive
 * cannot tell, when a call's first attempt starts, whether that attempt's pick must be remembered (counting live
 * balancers left the first calls of a new or idle channel without a hint, and their hedges free to go back to the
 * replica they had tried).
 * @internal
 */
export function replicaAvoidanceInUse(): boolean {
  return state.registered;
}

/** The policy is registered with grpc-js: from now on calls carry the hint. @internal */
export function markReplicaAvoidanceRegistered(): void {
  state.registered = true;
}

/**
 * The replicas one call's attempts were sent to. A call creates it with its first attempt (whose pick the second
 * must avoid), and only while replica avoidance is in use.
 * @internal
 */
export class TriedReplicas {
  private readonly hints: ReplicaHint[] = [];

  /**
   * Adds the hint to an attempt's outgoing metadata (its own copy): the replicas this call's earlier attempts were
   * sent to. Returns the hint, whose `picked` the picker fills in.
   */
  addHint(metadata: Metadata): ReplicaHint {
    const hint = new AttemptHint(this.hints, this.hints.length);
    const options = { ...metadata.getOptions(), [TRIED_REPLICAS_OPTION]: hint };
    metadata.setOptions(options as ReturnType<Metadata['getOptions']>);
    this.hints.push(hint);
    return hint;
  }
}

/** The hint of the `count`-th attempt of a call whose attempts' hints are `hints`. */
class AttemptHint implements ReplicaHint {
  picked: string | undefined = undefined;

  constructor(
    private readonly hints: readonly ReplicaHint[],
    private readonly count: number,
  ) {}

  get avoid(): readonly string[] {
    const avoid: string[] = [];
    for (let i = 0; i < this.count; i++) {
      const picked = this.hints[i]?.picked;
      if (picked !== undefined && !avoid.includes(picked)) {
        avoid.push(picked);
      }
    }
    return avoid;
  }
}

/** The hint an attempt's metadata carries, if any (read by the picker). @internal */
export function readReplicaHint(metadata: Metadata): ReplicaHint | undefined {
  const options = metadata.getOptions() as { [TRIED_REPLICAS_OPTION]?: ReplicaHint };
  return options[TRIED_REPLICAS_OPTION];
}
