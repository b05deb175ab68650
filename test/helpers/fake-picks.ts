/**
 * Fake pick results and child pickers for the replica-avoiding policy's tests (its picker, and its balancer under a
 * scripted child), and the metadata a retry or hedge carries.
 */
import { connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import { TriedReplicas } from '../../src/lb/tried-replicas.js';

type PickResult = experimental.PickResult;

/** A complete pick of the replica at `address`, whose subchannel reports `stateOf(address)` (READY by default). */
export function completePick(
  address: string,
  stateOf: (address: string) => connectivityState = () => connectivityState.READY,
): PickResult {
  const subchannel = {
    getAddress: () => address,
    getConnectivityState: () => stateOf(address),
  } as unknown as experimental.SubchannelInterface;
  return {
    pickResultType: experimental.PickResultType.COMPLETE,
    subchannel,
    status: null,
    onCallStarted: null,
    onCallEnded: null,
  };
}

/** A child picker that hands out `addresses` in turn, as round_robin does, counting its picks. */
export function rotatingPicker(addresses: string[], pickOf: (address: string) => PickResult = completePick) {
  let next = 0;
  const child = {
    picks: 0,
    /** Every result handed out, in order. */
    results: [] as PickResult[],
    pick(): PickResult {
      child.picks += 1;
      const address = addresses[next % addresses.length] as string;
      next += 1;
      const result = pickOf(address);
      child.results.push(result);
      return result;
    },
  };
  return child;
}

/** Metadata carrying a hint whose earlier attempts went to `tried`; `picked` reads where this attempt went. */
export function hintedMetadata(tried: string[]): { metadata: Metadata; picked: () => string | undefined } {
  const replicas = new TriedReplicas();
  for (const address of tried) {
    const earlier = replicas.addHint(new Metadata());
    earlier.picked = address;
  }
  const metadata = new Metadata();
  const hint = replicas.addHint(metadata);
  return { metadata, picked: () => hint.picked };
}
