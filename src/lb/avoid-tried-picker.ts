/**
 * The picker of the replica-avoiding policy: it asks the child policy's picker, and while the pick is a replica this
 * call already tried, asks again, until it gets one not tried, or the child has offered every replica it knows about
 * twice (two more picks than twice the distinct replicas seen), or {@link MAX_PICKS_PER_ATTEMPT} picks. Then it
 * returns the child's first pick: with every ready replica tried, the child decides as it would have.
 */
import type { experimental } from '@grpc/grpc-js';
import { readReplicaHint } from './tried-replicas.js';

type Picker = experimental.Picker;
type PickArgs = experimental.PickArgs;
type PickResult = experimental.PickResult;

/** Picks asked of the child for one attempt, at most (bounds the work under a child that picks at random). */
export const MAX_PICKS_PER_ATTEMPT = 16;

/** @internal */
export class AvoidTriedPicker implements Picker {
  constructor(
    private readonly child: Picker,
    /** `PickResultType.COMPLETE` of the grpc-js in use. */
    private readonly complete: number,
  ) {}

  pick(args: PickArgs): PickResult {
    const first = this.child.pick(args);
    const hint = readReplicaHint(args.metadata);
    if (hint === undefined) {
      return first;
    }
    const firstAddress = this.addressOf(first);
    if (firstAddress === undefined) {
      return first;
    }
    let chosen = first;
    let address = firstAddress;
    if (hint.avoid.length > 0 && hint.avoid.includes(address)) {
      // Every replica the child offered was tried once it has offered each of them about twice: round_robin has
      // gone round twice, pick_first has repeated itself, a random child has had a fair chance to show another.
      const seen = new Set<string>([firstAddress]);
      for (let picks = 1; picks < MAX_PICKS_PER_ATTEMPT && picks < 2 * seen.size + 2; picks++) {
        const next = this.child.pick(args);
        const nextAddress = this.addressOf(next);
        if (nextAddress === undefined) {
          break;
        }
        if (!hint.avoid.includes(nextAddress)) {
          chosen = next;
          address = nextAddress;
          break;
        }
        seen.add(nextAddress);
      }
    }
    hint.picked = address;
    return chosen;
  }

  private addressOf(result: PickResult): string | undefined {
    if (result.pickResultType !== this.complete || result.subchannel === null) {
      return undefined;
    }
    return result.subchannel.getAddress();
  }
}
