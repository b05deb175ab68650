/**
 * Whether the grpc-js in use runs a load-balancing policy of this name: one it has registered (its own, at import),
 * or this package's replica-avoiding policy, which `createChannelOptions` registers when a config needs it.
 */
import * as grpc from '@grpc/grpc-js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';

/** @internal */
export function isPolicyKnownToGrpcJs(name: string): boolean {
  return name === AVOID_TRIED_REPLICAS_POLICY || grpc.experimental.isLoadBalancerNameRegistered(name);
}
