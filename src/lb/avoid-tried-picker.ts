/**
 * The picker of the replica-avoiding policy. The balancer makes one per picker of the child policy, so one lives
 * exactly as long as the child's picker, i.e. one set of ready replicas.
 *
 * - An attempt with nothing to avoid (a first attempt, or a call without a hint) gets the child's pick, untouched.
 *   The picker remembers the child's last pick result for each replica (address) it has handed out.
 * - An attempt with replicas to avoid (a retry or a hedge) goes, when the picker knows one, to a replica the child
 *   handed out earlier, that the call has not tried and that is still READY, taking those in the picker's own turn.
 *   The child is not asked: every child pick advances the child's own rotation (round_robin's turn), and a retry or
 *   hedge that consumed the child's turns would push first attempts onto the replicas it skipped, which are the
 *   ones calls fled from (the slow replica would then get more than its share of first attempts, and more calls
 *   would hedge).
 * - When the picker knows no such replica (it is new, or every replica it knows was tried), it asks the child, and
 *   asks again while the pick is a replica the call already tried, until the child has offered every replica it
 *   knows about twice (two more picks than twice the distinct replicas seen), or {@link MAX_PICKS_PER_ATTEMPT}
 *   picks. With no untried replica found, it returns the child's first pick: the child decides as it would have.
 *
 * A remembered result is reused as the child made it (its subchannel and its onCallStarted/onCallEnded, which
 * grpc-js's own policies tie to the replica, not to one pick). grpc-js makes a new child picker whenever a replica
 * leaves the ready set, so a remembered result goes with the picker that saw it; a replica seen not READY in the
 * meantime is skipped (and were grpc-js to get one, it picks again when the subchannel is not READY).
 */
import type { experimental } from '@grpc/grpc-js';
import { readReplicaHint } from './tried-replicas.js';

type Picker = experimental.Picker;
type PickArgs = experimental.PickArgs;
type PickResult = experimental.PickResult;

/** Picks asked of the child for one attempt, at most (bounds the work under a child that picks at random). */
export const MAX_PICKS_PER_ATTEMPT = 16;

/** The values of grpc-js's enums the picker compares with, from the grpc-js in use. @internal */
export interface PickerConstants {
  /** `experimental.PickResultType.COMPLETE`. */
  readonly complete: number;
  /** `connectivityState.READY`. */
  readonly ready: number;
}

/** @internal */
export class AvoidTriedPicker implements Picker {
  /** The child's last pick result for each replica it handed out, in the order it first handed each out. */
  private readonly seen = new Map<string, PickResult>();
  /** The picker's own turn over the untried replicas it knows (for attempts with replicas to avoid). */
  private turn = 0;

  constructor(
    private readonly child: Picker,
    private readonly constants: PickerConstants,
  ) {}

  pick(args: PickArgs): PickResult {
    const hint = readReplicaHint(args.metadata);
    if (hint === undefined) {
      const result = this.child.pick(args);
      this.remember(result);
      return result;
    }
    // Read once per pick: where the call's earlier attempts went, as of now.
    const avoid = hint.avoid;
    if (avoid.length > 0) {
      const known = this.knownUntried(avoid);
      if (known !== undefined) {
        hint.picked = known.address;
        return known.result;
      }
    }
    const first = this.child.pick(args);
    const firstAddress = this.remember(first);
    if (firstAddress === undefined) {
      return first;
    }
    let chosen = first;
    let address = firstAddress;
    if (avoid.length > 0 && avoid.includes(address)) {
      // Every replica the child offered was tried once it has offered each of them about twice: round_robin has
      // gone round twice, pick_first has repeated itself, a random child has had a fair chance to show another.
      const offered = new Set<string>([firstAddress]);
      for (let picks = 1; picks < MAX_PICKS_PER_ATTEMPT && picks < 2 * offered.size + 2; picks++) {
        const next = this.child.pick(args);
        const nextAddress = this.remember(next);
        if (nextAddress === undefined) {
          break;
        }
        if (!avoid.includes(nextAddress)) {
          chosen = next;
          address = nextAddress;
          break;
        }
        offered.add(nextAddress);
      }
    }
    hint.picked = address;
    return chosen;
  }

  /** The next (in the picker's own turn) READY replica it has seen the child hand out that `avoid` lacks. */
  private knownUntried(avoid: readonly string[]): { address: string; result: PickResult } | undefined {
    const candidates: Array<{ address: string; result: PickResult }> = [];
    for (const [address, result] of this.seen) {
      if (!avoid.includes(address) && result.subchannel?.getConnectivityState() === this.constants.ready) {
        candidates.push({ address, result });
      }
    }
    if (candidates.length === 0) {
      return undefined;
    }
    const chosen = candidates[this.turn % candidates.length];
    this.turn += 1;
    return chosen;
  }

  /** Records a complete pick as the replica's latest result; returns its address (undefined for other picks). */
  private remember(result: PickResult): string | undefined {
    if (result.pickResultType !== this.constants.complete || result.subchannel === null) {
      return undefined;
    }
    const address = result.subchannel.getAddress();
    this.seen.set(address, result);
    return address;
  }
}
