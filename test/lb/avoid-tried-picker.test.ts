import { connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AvoidTriedPicker, MAX_PICKS_PER_ATTEMPT } from '../../src/lb/avoid-tried-picker.js';
import { TriedReplicas } from '../../src/lb/tried-replicas.js';
import { seededRandom } from '../../src/testing/index.js';
import { completePick, hintedMetadata as hinted, rotatingPicker } from '../helpers/fake-picks.js';

const { PickResultType } = experimental;
type PickResult = experimental.PickResult;

const CONSTANTS = { complete: PickResultType.COMPLETE, ready: connectivityState.READY };

/** Connectivity of the fake subchannels, by address (READY unless set). */
const states = new Map<string, connectivityState>();

const complete = (address: string): PickResult =>
  completePick(address, (at) => states.get(at) ?? connectivityState.READY);

/** What a child picker answers while it has no ready replica to hand out: the call waits. */
const queued: PickResult = {
  pickResultType: PickResultType.QUEUE,
  subchannel: null,
  status: null,
  onCallStarted: null,
  onCallEnded: null,
};

/** A child picker over `addresses` whose subchannels report `states`. */
const rotating = (addresses: string[]) => rotatingPicker(addresses, complete);

const pickArgs = (metadata: Metadata) => ({ metadata, extraPickInfo: {} });
const addressOf = (result: PickResult) => result.subchannel?.getAddress();
const newPicker = (child: experimental.Picker) => new AvoidTriedPicker(child, CONSTANTS);

/** A picker over `child` after `firsts` first attempts (which show it the child's replicas). */
function warmed(child: ReturnType<typeof rotating>, firsts: number): AvoidTriedPicker {
  const picker = newPicker(child);
  for (let i = 0; i < firsts; i++) {
    picker.pick(pickArgs(hinted([]).metadata));
  }
  return picker;
}

afterEach(() => states.clear());

describe('AvoidTriedPicker: a new picker (no replica seen yet) asks the child', () => {
  it('without a hint, returns the child pick after one pick', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = newPicker(child);
    expect(addressOf(picker.pick(pickArgs(new Metadata())))).toBe('a');
    expect(child.picks).toBe(1);
  });

  it('first attempt (nothing tried): the child pick, recorded as where it went', () => {
    const child = rotating(['a', 'b', 'c']);
    const { metadata, picked } = hinted([]);
    expect(addressOf(newPicker(child).pick(pickArgs(metadata)))).toBe('a');
    expect(picked()).toBe('a');
    expect(child.picks).toBe(1);
  });

  it('1 tried: skips it', () => {
    const { metadata, picked } = hinted(['a']);
    const result = newPicker(rotating(['a', 'b', 'c'])).pick(pickArgs(metadata));
    expect(addressOf(result)).toBe('b');
    expect(picked()).toBe('b');
  });

  it('2 tried: goes to the third', () => {
    const { metadata, picked } = hinted(['a', 'b']);
    const result = newPicker(rotating(['a', 'b', 'c'])).pick(pickArgs(metadata));
    expect(addressOf(result)).toBe('c');
    expect(picked()).toBe('c');
  });

  it('all tried: falls back to the child first pick once the child has gone round twice', () => {
    const child = rotating(['a', 'b', 'c']);
    const { metadata, picked } = hinted(['c', 'a', 'b']);
    const result = newPicker(child).pick(pickArgs(metadata));
    expect(addressOf(result)).toBe('a');
    expect(picked()).toBe('a');
    expect(child.picks).toBe(8);
  });

  it('a child that always picks one replica (pick_first): four picks, then its pick', () => {
    const child = rotating(['a']);
    const { metadata } = hinted(['a']);
    expect(addressOf(newPicker(child).pick(pickArgs(metadata)))).toBe('a');
    expect(child.picks).toBe(4);
  });

  it('a child that picks at random gets past a run of repeats of the tried replica', () => {
    // a, a, a, then b: a random child may offer the tried replica several times in a row.
    const child = rotating(['a', 'a', 'a', 'b']);
    const { metadata, picked } = hinted(['a']);
    expect(addressOf(newPicker(child).pick(pickArgs(metadata)))).toBe('b');
    expect(picked()).toBe('b');
  });

  it('bounds the picks under a child that never repeats', () => {
    let n = 0;
    const child = {
      picks: 0,
      pick(): PickResult {
        child.picks += 1;
        n += 1;
        return complete(`x${n - 1}`);
      },
    };
    const tried = Array.from({ length: 40 }, (_, i) => `x${i}`);
    const { metadata } = hinted(tried);
    expect(addressOf(newPicker(child).pick(pickArgs(metadata)))).toBe('x0');
    expect(child.picks).toBe(MAX_PICKS_PER_ATTEMPT);
  });

  it('passes a queued pick through and records nothing', () => {
    const { metadata, picked } = hinted(['a']);
    expect(newPicker({ pick: () => queued }).pick(pickArgs(metadata))).toBe(queued);
    expect(picked()).toBeUndefined();
  });
});

describe('AvoidTriedPicker: a child that queues while the picker looks past a tried replica', () => {
  it('the attempt goes to the tried replica the child first offered, not into the queue', () => {
    const first = complete('a');
    const answers = [first, queued, complete('b')];
    const child = { picks: 0, pick: () => answers[child.picks++] as PickResult };
    const { metadata, picked } = hinted(['a']);
    expect(newPicker(child).pick(pickArgs(metadata))).toBe(first);
    expect(picked()).toBe('a');
    expect(child.picks).toBe(2);
  });
});

describe('AvoidTriedPicker: once it has seen the child hand out the replicas', () => {
  it("first attempts get exactly the child's rotation, whatever retries and hedges come in between", () => {
    const replicas = ['a', 'b', 'c', 'd', 'e'];
    const random = seededRandom(21);
    const child = rotating(replicas);
    const picker = warmed(child, replicas.length);
    const control = warmed(rotating(replicas), replicas.length);
    const firsts: string[] = [];
    const expected: string[] = [];
    let avoidPicks = 0;
    for (let call = 0; call < 500; call++) {
      const first = addressOf(picker.pick(pickArgs(hinted([]).metadata))) as string;
      firsts.push(first);
      expected.push(addressOf(control.pick(pickArgs(hinted([]).metadata))) as string);
      // 0 to 4 retries or hedges, each avoiding every replica the call went to before it.
      const tried = [first];
      const more = Math.floor(random() * 5);
      for (let i = 0; i < more; i++) {
        const { metadata, picked } = hinted([...tried]);
        const next = addressOf(picker.pick(pickArgs(metadata))) as string;
        avoidPicks += 1;
        expect(tried).not.toContain(next);
        expect(picked()).toBe(next);
        tried.push(next);
      }
    }
    expect(avoidPicks).toBeGreaterThan(500);
    expect(firsts).toEqual(expected);
    expect(firsts.slice(0, 7)).toEqual(['a', 'b', 'c', 'd', 'e', 'a', 'b']);
    // The child was asked by first attempts only.
    expect(child.picks).toBe(replicas.length + 500);
  });

  it('1 tried: the replicas not tried take turns, and the child is not asked', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = warmed(child, 3);
    const picks = Array.from({ length: 4 }, () => {
      const { metadata, picked } = hinted(['a']);
      const address = addressOf(picker.pick(pickArgs(metadata)));
      expect(picked()).toBe(address);
      return address;
    });
    expect(picks).toEqual(['b', 'c', 'b', 'c']);
    expect(child.picks).toBe(3);
  });

  it('2 tried: always the third, and the child is not asked', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = warmed(child, 3);
    for (let i = 0; i < 3; i++) {
      expect(addressOf(picker.pick(pickArgs(hinted(['c', 'a']).metadata)))).toBe('b');
    }
    expect(child.picks).toBe(3);
  });

  it('all tried: asks the child, and falls back to its first pick once it has gone round twice', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = warmed(child, 4);
    const { metadata, picked } = hinted(['a', 'b', 'c']);
    expect(addressOf(picker.pick(pickArgs(metadata)))).toBe('b');
    expect(picked()).toBe('b');
    expect(child.picks).toBe(4 + 8);
  });

  it('hands out the result the child last made for that replica, as the child made it', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = warmed(child, 3);
    expect(picker.pick(pickArgs(hinted(['a', 'c']).metadata))).toBe(child.results[1]);
    picker.pick(pickArgs(hinted([]).metadata)); // a
    picker.pick(pickArgs(hinted([]).metadata)); // b, a new result
    expect(picker.pick(pickArgs(hinted(['a', 'c']).metadata))).toBe(child.results[4]);
  });

  it('skips a replica it saw that is no longer READY; with none left, asks the child', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = warmed(child, 3);
    states.set('b', connectivityState.CONNECTING);
    expect(addressOf(picker.pick(pickArgs(hinted(['a']).metadata)))).toBe('c');
    expect(addressOf(picker.pick(pickArgs(hinted(['a']).metadata)))).toBe('c');
    expect(child.picks).toBe(3);
    states.set('c', connectivityState.TRANSIENT_FAILURE);
    // The child (which the balancer would have replaced by now) is asked: a, then b.
    expect(addressOf(picker.pick(pickArgs(hinted(['a']).metadata)))).toBe('b');
    expect(child.picks).toBe(5);
  });

  it('what a picker saw stays with it: the picker for a new ready set never sends to a replica that left', () => {
    warmed(rotating(['a', 'b', 'c']), 3);
    const child = rotating(['a', 'c']);
    const picker = newPicker(child);
    for (let i = 0; i < 4; i++) {
      expect(addressOf(picker.pick(pickArgs(hinted(['a']).metadata)))).toBe('c');
    }
  });

  it('learns the replicas from attempts without a hint too', () => {
    const child = rotating(['a', 'b']);
    const picker = newPicker(child);
    picker.pick(pickArgs(new Metadata()));
    picker.pick(pickArgs(new Metadata()));
    expect(addressOf(picker.pick(pickArgs(hinted(['b']).metadata)))).toBe('a');
    expect(child.picks).toBe(2);
  });
});

describe('AvoidTriedPicker: attempts queued before their picks (a channel still connecting)', () => {
  it('a hedge made before its first attempt was picked still avoids the replica that attempt went to', () => {
    // Two calls start while the channel connects, and the first one's hedge comes due before it is ready: all three
    // attempts wait, and are picked in order once a picker arrives.
    const call1 = new TriedReplicas();
    const first = new Metadata();
    call1.addHint(first);
    const other = new Metadata();
    new TriedReplicas().addHint(other);
    const hedge = new Metadata();
    const hedgeHint = call1.addHint(hedge);
    const picker = newPicker(rotating(['a', 'b']));
    expect(addressOf(picker.pick(pickArgs(first)))).toBe('a');
    expect(addressOf(picker.pick(pickArgs(other)))).toBe('b');
    // round_robin's turn is back at a: the hedge goes to b, the replica its call has not tried.
    expect(addressOf(picker.pick(pickArgs(hedge)))).toBe('b');
    expect(hedgeHint.picked).toBe('b');
  });
});

describe('TriedReplicas', () => {
  it('hints each attempt with the distinct replicas of the earlier ones, in metadata options only', () => {
    const replicas = new TriedReplicas();
    const first = new Metadata();
    first.set('x-app', '1');
    first.setOptions({ waitForReady: true });
    const h1 = replicas.addHint(first);
    expect(h1.avoid).toEqual([]);
    h1.picked = 'a';
    const h2 = replicas.addHint(new Metadata());
    h2.picked = 'a';
    const third = new Metadata();
    expect(replicas.addHint(third).avoid).toEqual(['a']);
    // The application's options stay; nothing is added to the headers.
    expect(first.getOptions().waitForReady).toBe(true);
    expect(Object.keys(first.getMap())).toEqual(['x-app']);
    expect(Object.keys(third.getMap())).toEqual([]);
    // grpc-js clones metadata on the way to the picker: the hint goes with the clone.
    expect(Object.getOwnPropertySymbols(third.clone().getOptions())).toHaveLength(1);
  });
});
