/**
 * A load-balancing policy for tests that drops picks as grpc-js-xds's cluster_impl policy does (drop_overloads,
 * circuit breaking): `PickResultType.DROP` with UNAVAILABLE and its details, "Call dropped by load balancing
 * policy. Category: …". Which picks it drops is chosen per call by the `x-test-drop` metadata key: `all`, `first`
 * (the call's first attempt only) or `later` (the attempts that carry `grpc-previous-rpc-attempts`: retries and
 * hedges). Every other pick goes to its child, pick_first. Name it in the channel's `grpc.service_config`:
 * `{"loadBalancingConfig": [{"test_drop_by_metadata": {}}]}` after `registerDroppingBalancer()`.
 */
import * as grpc from '@grpc/grpc-js';

type LoadBalancer = grpc.experimental.LoadBalancer;
type ChannelControlHelper = grpc.experimental.ChannelControlHelper;
type Picker = grpc.experimental.Picker;
type PickArgs = grpc.experimental.PickArgs;
type PickResult = grpc.experimental.PickResult;

export const DROPPING_POLICY = 'test_drop_by_metadata';
export const DROP_KEY = 'x-test-drop';
export const DROP_DETAILS = 'Call dropped by load balancing policy. Category: test';

class DroppingConfig implements grpc.experimental.TypedLoadBalancingConfig {
  getLoadBalancerName(): string {
    return DROPPING_POLICY;
  }
  toJsonObject(): object {
    return { [DROPPING_POLICY]: {} };
  }
  static createFromJson(): DroppingConfig {
    return new DroppingConfig();
  }
}

function drops(args: PickArgs): boolean {
  const mode = args.metadata.get(DROP_KEY)[0];
  const later = args.metadata.get('grpc-previous-rpc-attempts').length > 0;
  return mode === 'all' || (mode === 'first' && !later) || (mode === 'later' && later);
}

class DroppingPicker implements Picker {
  constructor(private readonly child: Picker) {}
  pick(args: PickArgs): PickResult {
    if (!drops(args)) {
      return this.child.pick(args);
    }
    return {
      pickResultType: grpc.experimental.PickResultType.DROP,
      status: { code: grpc.status.UNAVAILABLE, details: DROP_DETAILS, metadata: new grpc.Metadata() },
      subchannel: null,
      onCallStarted: null,
      onCallEnded: null,
    };
  }
}

class DroppingBalancer implements LoadBalancer {
  private readonly child: LoadBalancer;
  private readonly childConfig = grpc.experimental.parseLoadBalancingConfig({ pick_first: {} });

  constructor(helper: ChannelControlHelper, ...rest: unknown[]) {
    const childHelper = grpc.experimental.createChildChannelControlHelper(helper, {
      updateState: (state, picker: Picker, ...more: unknown[]) => {
        (helper.updateState as (...args: unknown[]) => void)(state, new DroppingPicker(picker), ...more);
      },
    });
    const Handler = grpc.experimental.ChildLoadBalancerHandler as unknown as new (
      helper: ChannelControlHelper,
      ...rest: unknown[]
    ) => LoadBalancer;
    this.child = new Handler(childHelper, ...rest);
  }
  updateAddressList(
    endpoints: Parameters<LoadBalancer['updateAddressList']>[0],
    _config: unknown,
    ...rest: unknown[]
  ) {
    const update = this.child.updateAddressList as (...args: unknown[]) => boolean;
    return update.call(this.child, endpoints, this.childConfig, ...rest);
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
    return DROPPING_POLICY;
  }
}

/** Registers the policy with grpc-js (idempotent). */
export function registerDroppingBalancer(): void {
  if (!grpc.experimental.isLoadBalancerNameRegistered(DROPPING_POLICY)) {
    grpc.experimental.registerLoadBalancerType(
      DROPPING_POLICY,
      DroppingBalancer as unknown as Parameters<typeof grpc.experimental.registerLoadBalancerType>[1],
      DroppingConfig as unknown as Parameters<typeof grpc.experimental.registerLoadBalancerType>[2],
    );
  }
}

/** Channel options that put the policy on a channel. */
export const DROPPING_CHANNEL_OPTIONS = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ [DROPPING_POLICY]: {} }] }),
};
