/**
 * The channel's `loadBalancingConfig` with replica avoidance: what `createChannelOptions(config,
 * { avoidTriedReplicas: true })` writes, and the registration a hand-written config needs.
 */
import { AVOID_TRIED_REPLICAS_POLICY, registerAvoidTriedReplicas } from './avoid-tried-balancer.js';

/**
 * Edits the channel's service config in place. With `on`, its `loadBalancingConfig` becomes the replica-avoiding
 * policy around the config's own list (or around `round_robin` when it has none: under grpc-js's default
 * `pick_first` every attempt goes down one connection). Whenever the config names the policy (by hand, or now), the
 * policy is registered with grpc-js, which would otherwise skip it silently.
 * @internal
 */
export function withReplicaAvoidance(serviceConfig: Record<string, unknown>, on: boolean): void {
  const current = serviceConfig.loadBalancingConfig as readonly object[] | undefined;
  if (on && !(current?.length === 1 && AVOID_TRIED_REPLICAS_POLICY in (current[0] as object))) {
    serviceConfig.loadBalancingConfig = [
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: current?.length ? current : [{ round_robin: {} }] } },
    ];
  }
  if (on || JSON.stringify(serviceConfig.loadBalancingConfig ?? []).includes(AVOID_TRIED_REPLICAS_POLICY)) {
    registerAvoidTriedReplicas();
  }
}
