/**
 * The channel's `loadBalancingConfig` with replica avoidance: what `createChannelOptions(config,
 * { avoidTriedReplicas: true })` writes, the registration a hand-written config needs, and the check of the
 * policy's config that `createChannelOptions` and `check` share.
 */
import * as grpc from '@grpc/grpc-js';
import type { JsonPath } from '../config/json-path.js';
import { ServiceConfigError } from '../config/service-config-error.js';
import {
  AVOID_TRIED_REPLICAS_POLICY,
  AvoidTriedReplicasConfig,
  parseAvoidTriedReplicasConfig,
  registerAvoidTriedReplicas,
} from './avoid-tried-balancer.js';
import { isPolicyKnownToGrpcJs } from './known-to-grpc-js.js';
import { effectivePolicy } from './lb-policy-names.js';

/**
 * Edits the channel's service config in place. With `on`, its `loadBalancingConfig` becomes the replica-avoiding
 * policy around the config's own list (or around `round_robin` when it has none: under grpc-js's default
 * `pick_first` every attempt goes down one connection), unless the policy grpc-js would run for that list (its
 * first entry grpc-js knows) already is the replica-avoiding one: then the list is kept as written, fallbacks
 * included. Whenever the config names the policy (by hand, or now), the policy is registered with grpc-js, which
 * would otherwise skip it silently.
 * @internal
 */
export function withReplicaAvoidance(serviceConfig: Record<string, unknown>, on: boolean): void {
  const current = serviceConfig.loadBalancingConfig as readonly object[] | undefined;
  const wraps = on && effectivePolicy(current, isPolicyKnownToGrpcJs) !== AVOID_TRIED_REPLICAS_POLICY;
  if (wraps) {
    serviceConfig.loadBalancingConfig = [
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: current?.length ? current : [{ round_robin: {} }] } },
    ];
  }
  const list = (serviceConfig.loadBalancingConfig ?? []) as readonly Record<string, unknown>[];
  if (!on && !JSON.stringify(list).includes(AVOID_TRIED_REPLICAS_POLICY)) {
    return;
  }
  registerAvoidTriedReplicas();
  // grpc-js meets an invalid policy config by skipping the entry (so: the next one, or pick_first, silently); say it
  // here.
  const [problem] = findAvoidPolicyProblems(list);
  if (problem !== undefined && wraps) {
    // The policy's child list is the config's own loadBalancingConfig: say what is wrong in the list as written.
    const child = problem.path[4];
    throw new ServiceConfigError(
      typeof child === 'number' ? `loadBalancingConfig[${child}]` : 'loadBalancingConfig',
      `${problem.problem.replace(/^childPolicy\[\d+\] \(([^)]*)\)/, '$1').replace(/^childPolicy /, '')}; avoidTriedReplicas runs ${AVOID_TRIED_REPLICAS_POLICY} around this list, and it needs a policy there that grpc-js can run`,
    );
  }
  if (problem !== undefined) {
    throw new ServiceConfigError(
      `loadBalancingConfig[${problem.index}]`,
      `policy ${AVOID_TRIED_REPLICAS_POLICY}: ${problem.problem}`,
    );
  }
}

/** A `loadBalancingConfig` entry naming the replica-avoiding policy with a config it rejects. @internal */
export interface AvoidPolicyProblem {
  /** The entry's index in the list. */
  readonly index: number;
  /** The JSON path of what is wrong, from the service config's root. */
  readonly path: JsonPath;
  /** What is wrong, without the path. */
  readonly problem: string;
}

/**
 * Every entry of a `loadBalancingConfig` list that names the replica-avoiding policy with a config it would reject
 * ({@link AvoidTriedReplicasConfig.createFromJson}'s own check: a child policy list naming no policy grpc-js knows,
 * a child config grpc-js refuses, an unknown field...). Nothing when the list is not an array, nor on a grpc-js
 * without the load-balancer API (`createChannelOptions` says what is missing then).
 * @internal
 */
export function findAvoidPolicyProblems(list: unknown): AvoidPolicyProblem[] {
  const api = grpc.experimental as unknown as Record<string, unknown> | undefined;
  if (!Array.isArray(list) || typeof api?.selectLbConfigFromList !== 'function') {
    return [];
  }
  const problems: AvoidPolicyProblem[] = [];
  list.forEach((entry: unknown, index) => {
    if (typeof entry !== 'object' || entry === null || !(AVOID_TRIED_REPLICAS_POLICY in entry)) {
      return;
    }
    const parsed = parseAvoidTriedReplicasConfig(
      (entry as Record<string, unknown>)[AVOID_TRIED_REPLICAS_POLICY],
    );
    if (!(parsed instanceof AvoidTriedReplicasConfig)) {
      problems.push({
        index,
        path: ['loadBalancingConfig', index, AVOID_TRIED_REPLICAS_POLICY, ...parsed.path],
        problem: parsed.problem,
      });
    }
  });
  return problems;
}
