/**
 * Whether the grpc-js in use runs a load-balancing policy of this name: one it has registered (its own, at import),
 * or this package's replica-avoiding policy, which `createChannelOptions` registers when a config needs it.
 */
import * as grpc from '@grpc/grpc-js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';

/** @internal */
export function isPolicyKnownToGrpcJs(name: string): boolean {
  return name === AVOID_TRIED_REPLICAS_POLICY || isRegisteredInGrpcJs(name);
}

/**
 * Whether grpc-js has registered a policy of this name. grpc-js looks names up with `in` on a plain object, so it
 * also "knows" `constructor`, `toString`, `__proto__` and the rest of `Object.prototype`, then fails to build them
 * (its channel skips such an entry and runs `pick_first`): those are no policy.
 * @internal
 */
export function isRegisteredInGrpcJs(name: string): boolean {
  return !(name in Object.prototype) && grpc.experimental.isLoadBalancerNameRegistered(name);
}
