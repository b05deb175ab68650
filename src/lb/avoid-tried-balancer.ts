/**
 * The replica-avoiding load-balancing policy, registered with grpc-js's load-balancer API: it runs a child policy
 * (`round_robin` unless its config names another) and wraps every picker the child produces in a new
 * {@link AvoidTriedPicker} (so what a picker remembers of the child's picks never outlives the child's picker).
 *
 * Config (in `loadBalancingConfig`): `{ "grpc_retry_hedging.avoid_tried_replicas": { "childPolicy": [ ... ] } }`,
 * where `childPolicy` is a list of policies, the first one grpc-js knows is used (as in every grpc-js parent policy).
 */
import * as grpc from '@grpc/grpc-js';
import type { JsonPath } from '../config/json-path.js';
import { describeValue } from '../config/service-config-error.js';
import { errorMessage } from '../util/error-message.js';
import { AvoidTriedPicker } from './avoid-tried-picker.js';
import { isPolicyKnownToGrpcJs, isRegisteredInGrpcJs } from './known-to-grpc-js.js';
import { policyNameOf, suggestPolicyName } from './lb-policy-names.js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';
import { markReplicaAvoidanceRegistered } from './tried-replicas.js';

type ChannelControlHelper = grpc.experimental.ChannelControlHelper;
type LoadBalancer = grpc.experimental.LoadBalancer;
type TypedLoadBalancingConfig = grpc.experimental.TypedLoadBalancingConfig;
type Picker = grpc.experimental.Picker;

export { AVOID_TRIED_REPLICAS_POLICY };

/** The child policy when the config names none. */
const DEFAULT_CHILD_POLICY: readonly object[] = [{ round_robin: {} }];

/** What the policy needs of grpc-js's `experimental` namespace (present from grpc-js 1.10 to 1.14). */
const REQUIRED_API = [
  'registerLoadBalancerType',
  'isLoadBalancerNameRegistered',
  'selectLbConfigFromList',
  'parseLoadBalancingConfig',
  'createChildChannelControlHelper',
  'ChildLoadBalancerHandler',
  'PickResultType',
] as const;

/** The parsed config: the child policy's config. @internal */
export class AvoidTriedReplicasConfig implements TypedLoadBalancingConfig {
  constructor(readonly child: TypedLoadBalancingConfig) {}

  getLoadBalancerName(): string {
    return AVOID_TRIED_REPLICAS_POLICY;
  }

  toJsonObject(): object {
    return { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [this.child.toJsonObject()] } };
  }

  /** grpc-js calls this with the object under the policy's name; it throws to reject the service config. */
  static createFromJson(obj: unknown): AvoidTriedReplicasConfig {
    const parsed = parseAvoidTriedReplicasConfig(obj);
    if (!(parsed instanceof AvoidTriedReplicasConfig)) {
      throw new Error(`policy ${AVOID_TRIED_REPLICAS_POLICY}: ${parsed.problem}`);
    }
    return parsed;
  }
}

/**
 * What is wrong with the policy's config: where, under the object that follows the policy's name (`["childPolicy",
 * 1]`, say), and what. @internal
 */
export interface AvoidConfigProblem {
  readonly path: JsonPath;
  readonly problem: string;
}

/**
 * The config under the policy's name, or what is wrong with it: {@link AvoidTriedReplicasConfig.createFromJson}
 * (grpc-js, `createChannelOptions`) and `check` judge it by this one function.
 * @internal
 */
export function parseAvoidTriedReplicasConfig(obj: unknown): AvoidTriedReplicasConfig | AvoidConfigProblem {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return { path: [], problem: `must be an object, got ${describeValue(obj)}` };
  }
  const unknown = Object.keys(obj).filter((key) => key !== 'childPolicy' && key !== 'child_policy');
  if (unknown.length > 0) {
    return {
      path: [unknown[0] as string],
      problem: `unknown field ${unknown.join(', ')} (known: childPolicy)`,
    };
  }
  const fields = obj as { childPolicy?: unknown; child_policy?: unknown };
  const key = fields.childPolicy !== undefined ? 'childPolicy' : 'child_policy';
  const childPolicy = fields.childPolicy ?? fields.child_policy ?? DEFAULT_CHILD_POLICY;
  if (!Array.isArray(childPolicy) || childPolicy.length === 0) {
    return {
      path: [key],
      problem: `childPolicy must be a non-empty array of {"policy_name": {...}} objects, got ${describeValue(childPolicy)}`,
    };
  }
  // Before grpc-js's own choice, which skips this policy while it is not registered (as under `check`).
  const first = childPolicy.findIndex((entry) => {
    const name = policyNameOf(entry);
    return name !== undefined && isPolicyKnownToGrpcJs(name);
  });
  if (first >= 0 && policyNameOf(childPolicy[first]) === AVOID_TRIED_REPLICAS_POLICY) {
    return { path: [key, first], problem: `childPolicy cannot be ${AVOID_TRIED_REPLICAS_POLICY} itself` };
  }
  const child = grpc.experimental.selectLbConfigFromList(childPolicy);
  if (child === null) {
    return whyNoChild(childPolicy, key);
  }
  if (child.getLoadBalancerName() === AVOID_TRIED_REPLICAS_POLICY) {
    return { path: [key], problem: `childPolicy cannot be ${AVOID_TRIED_REPLICAS_POLICY} itself` };
  }
  return new AvoidTriedReplicasConfig(child);
}

/**
 * grpc-js's selectLbConfigFromList says only "none": find the first entry's own error, or say none is known (with
 * a "did you mean" for a misspelled name).
 */
function whyNoChild(childPolicy: readonly unknown[], key: string): AvoidConfigProblem {
  for (const [index, entry] of childPolicy.entries()) {
    const name = policyNameOf(entry);
    if (name !== undefined && isRegisteredInGrpcJs(name)) {
      try {
        grpc.experimental.parseLoadBalancingConfig(entry as never);
      } catch (error) {
        return {
          path: [key, index],
          problem: `childPolicy[${index}] (${name}) is invalid: ${errorMessage(error)}`,
        };
      }
    }
  }
  const names = childPolicy.map((c) => {
    const name = typeof c === 'object' && c !== null ? Object.keys(c).join('|') : String(c);
    const near =
      typeof c === 'object' && c !== null ? suggestPolicyName(name, isPolicyKnownToGrpcJs) : undefined;
    return near === undefined || near === AVOID_TRIED_REPLICAS_POLICY
      ? name
      : `${name}: did you mean ${near}?`;
  });
  return {
    path: [key],
    problem: `childPolicy names no load-balancing policy this grpc-js knows (${names.join(', ')})`,
  };
}

/** @internal */
export class AvoidTriedReplicasBalancer implements LoadBalancer {
  private readonly child: LoadBalancer;

  /** grpc-js 1.10 passes the channel options as a second argument, 1.11+ does not: both are forwarded. */
  constructor(helper: ChannelControlHelper, ...rest: unknown[]) {
    const constants = {
      complete: grpc.experimental.PickResultType.COMPLETE,
      ready: grpc.connectivityState.READY,
    };
    const childHelper = grpc.experimental.createChildChannelControlHelper(helper, {
      updateState: (state, picker: Picker, ...more: unknown[]) => {
        (helper.updateState as (...args: unknown[]) => void)(
          state,
          new AvoidTriedPicker(picker, constants),
          ...more,
        );
      },
    });
    const Handler = grpc.experimental.ChildLoadBalancerHandler as unknown as new (
      helper: ChannelControlHelper,
      ...rest: unknown[]
    ) => LoadBalancer;
    this.child = new Handler(childHelper, ...rest);
  }

  /** 1.10: (endpoints, config, attributes); 1.14: (endpoints or error, config, options, note) → boolean. */
  updateAddressList(
    endpoints: Parameters<LoadBalancer['updateAddressList']>[0],
    config: TypedLoadBalancingConfig,
    ...rest: unknown[]
  ): boolean {
    if (!(config instanceof AvoidTriedReplicasConfig)) {
      throw new Error(`${AVOID_TRIED_REPLICAS_POLICY}: got a config of ${config.getLoadBalancerName()}`);
    }
    const update = this.child.updateAddressList as (...args: unknown[]) => boolean;
    return update.call(this.child, endpoints, config.child, ...rest);
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.child.destroy();
  }

  getTypeName(): string {
    return AVOID_TRIED_REPLICAS_POLICY;
  }
}

/**
 * Registers the replica-avoiding policy with grpc-js (idempotent). `createChannelOptions(config,
 * { avoidTriedReplicas: true })` calls it; call it yourself when you name the policy in `loadBalancingConfig` and
 * build the channel options another way. It must run before the channel is created: grpc-js skips policies it does
 * not know.
 *
 * @throws Error when this grpc-js lacks a part of the load-balancer API the policy needs, or does not carry
 *   metadata options to the picker.
 */
export function registerAvoidTriedReplicas(): void {
  const api = grpc.experimental as unknown as Record<string, unknown> | undefined;
  const missing = REQUIRED_API.filter((name) => api?.[name] === undefined);
  if (missing.length > 0) {
    throw new Error(
      `grpc-retry-hedging: avoiding tried replicas needs grpc-js's load-balancer API, and this @grpc/grpc-js lacks experimental.${missing.join(', experimental.')} (grpc-js 1.10 to 1.14 have it)`,
    );
  }
  if (!grpc.experimental.isLoadBalancerNameRegistered(AVOID_TRIED_REPLICAS_POLICY)) {
    checkMetadataOptionsReachPicker();
    grpc.experimental.registerLoadBalancerType(
      AVOID_TRIED_REPLICAS_POLICY,
      AvoidTriedReplicasBalancer as Parameters<typeof grpc.experimental.registerLoadBalancerType>[1],
      AvoidTriedReplicasConfig,
    );
  }
  markReplicaAvoidanceRegistered();
}

/** The hint rides in metadata options, which grpc-js's `clone()` must carry (it does from 1.10 to 1.14). */
function checkMetadataOptionsReachPicker(): void {
  const probe = Symbol('probe');
  const metadata = new grpc.Metadata();
  metadata.setOptions({ [probe]: true } as never);
  if ((metadata.clone().getOptions() as Record<symbol, unknown>)[probe] !== true) {
    throw new Error(
      'grpc-retry-hedging: avoiding tried replicas needs grpc-js to copy metadata options into Metadata.clone(), and this @grpc/grpc-js does not',
    );
  }
}
