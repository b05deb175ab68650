/**
 * The channel's `loadBalancingConfig` with replica avoidance: what `createChannelOptions(config,
 * { avoidTriedReplicas: true })` writes, and the registration a hand-written config needs.
 */
import { ServiceConfigError } from '../config/service-config-error.js';
import { errorMessage } from '../util/error-message.js';
import {
  AVOID_TRIED_REPLICAS_POLICY,
  AvoidTriedReplicasConfig,
  registerAvoidTriedReplicas,
} from './avoid-tried-balancer.js';

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
  const list = (serviceConfig.loadBalancingConfig ?? []) as readonly Record<string, unknown>[];
  if (!on && !JSON.stringify(list).includes(AVOID_TRIED_REPLICAS_POLICY)) {
    return;
  }
  registerAvoidTriedReplicas();
  // grpc-js meets an invalid policy config by ignoring the service config (so: pick_first, silently); say it here.
  list.forEach((entry, index) => {
    if (AVOID_TRIED_REPLICAS_POLICY in entry) {
      try {
        AvoidTriedReplicasConfig.createFromJson(entry[AVOID_TRIED_REPLICAS_POLICY]);
      } catch (error) {
        throw new ServiceConfigError(`loadBalancingConfig[${index}]`, errorMessage(error));
      }
    }
  });
}
