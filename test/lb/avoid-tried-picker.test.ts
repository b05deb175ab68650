import { experimental, Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AvoidTriedPicker, MAX_PICKS_PER_ATTEMPT } from '../../src/lb/avoid-tried-picker.js';
import { TriedReplicas } from '../../src/lb/tried-replicas.js';

const { PickResultType } = experimental;
type PickResult = experimental.PickResult;

function complete(address: string): PickResult {
  const subchannel = { getAddress: () => address } as unknown as experimental.SubchannelInterface;
  return {
    pickResultType: PickResultType.COMPLETE,
    subchannel,
    status: null,
    onCallStarted: null,
    onCallEnded: null,
  };
}

/** A child picker that hands out `addresses` in turn, as round_robin does, counting its picks. */
function rotating(addresses: string[]) {
  let next = 0;
  const child = {
    picks: 0,
    pick(): PickResult {
      child.picks += 1;
      const address = addresses[next % addresses.length] as string;
      next += 1;
      return complete(address);
    },
  };
  return child;
}

/** Metadata carrying a hint whose earlier attempts went to `tried`. */
function hinted(tried: string[]): { metadata: Metadata; picked: () => string | undefined } {
  const replicas = new TriedReplicas();
  for (const address of tried) {
    const earlier = replicas.addHint(new Metadata());
    earlier.picked = address;
  }
  const metadata = new Metadata();
  const hint = replicas.addHint(metadata);
  return { metadata, picked: () => hint.picked };
}

const pickArgs = (metadata: Metadata) => ({ metadata, extraPickInfo: {} });
const addressOf = (result: PickResult) => result.subchannel?.getAddress();

describe('AvoidTriedPicker', () => {
  it('without a hint, returns the child pick after one pick', () => {
    const child = rotating(['a', 'b', 'c']);
    const picker = new AvoidTriedPicker(child, PickResultType.COMPLETE);
    expect(addressOf(picker.pick(pickArgs(new Metadata())))).toBe('a');
    expect(child.picks).toBe(1);
  });

  it('first attempt (nothing tried): the child pick, recorded as where it went', () => {
    const child = rotating(['a', 'b', 'c']);
    const { metadata, picked } = hinted([]);
    expect(addressOf(new AvoidTriedPicker(child, PickResultType.COMPLETE).pick(pickArgs(metadata)))).toBe(
      'a',
    );
    expect(picked()).toBe('a');
    expect(child.picks).toBe(1);
  });

  it('1 tried: skips it', () => {
    const { metadata, picked } = hinted(['a']);
    const result = new AvoidTriedPicker(rotating(['a', 'b', 'c']), PickResultType.COMPLETE).pick(
      pickArgs(metadata),
    );
    expect(addressOf(result)).toBe('b');
    expect(picked()).toBe('b');
  });

  it('2 tried: goes to the third', () => {
    const { metadata, picked } = hinted(['a', 'b']);
    const result = new AvoidTriedPicker(rotating(['a', 'b', 'c']), PickResultType.COMPLETE).pick(
      pickArgs(metadata),
    );
    expect(addressOf(result)).toBe('c');
    expect(picked()).toBe('c');
  });

  it('all tried: falls back to the child first pick once the child has gone round twice', () => {
    const child = rotating(['a', 'b', 'c']);
    const { metadata, picked } = hinted(['c', 'a', 'b']);
    const result = new AvoidTriedPicker(child, PickResultType.COMPLETE).pick(pickArgs(metadata));
    expect(addressOf(result)).toBe('a');
    expect(picked()).toBe('a');
    expect(child.picks).toBe(8);
  });

  it('a child that always picks one replica (pick_first): four picks, then its pick', () => {
    const child = rotating(['a']);
    const { metadata } = hinted(['a']);
    expect(addressOf(new AvoidTriedPicker(child, PickResultType.COMPLETE).pick(pickArgs(metadata)))).toBe(
      'a',
    );
    expect(child.picks).toBe(4);
  });

  it('a child that picks at random gets past a run of repeats of the tried replica', () => {
    // a, a, a, then b: a random child may offer the tried replica several times in a row.
    const child = rotating(['a', 'a', 'a', 'b']);
    const { metadata, picked } = hinted(['a']);
    expect(addressOf(new AvoidTriedPicker(child, PickResultType.COMPLETE).pick(pickArgs(metadata)))).toBe(
      'b',
    );
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
    expect(addressOf(new AvoidTriedPicker(child, PickResultType.COMPLETE).pick(pickArgs(metadata)))).toBe(
      'x0',
    );
    expect(child.picks).toBe(MAX_PICKS_PER_ATTEMPT);
  });

  it('passes a queued pick through and records nothing', () => {
    const queued: PickResult = {
      pickResultType: PickResultType.QUEUE,
      subchannel: null,
      status: null,
      onCallStarted: null,
      onCallEnded: null,
    };
    const { metadata, picked } = hinted(['a']);
    expect(
      new AvoidTriedPicker({ pick: () => queued }, PickResultType.COMPLETE).pick(pickArgs(metadata)),
    ).toBe(queued);
    expect(picked()).toBeUndefined();
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
