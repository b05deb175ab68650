/**
 * The replica-avoiding balancer inside grpc-js's load-balancer API, without a network: its child is a scripted
 * policy registered for these tests, so what the balancer hands the channel (state, pickers, extra arguments) and
 * what it hands its child (endpoints, the child's config, the calls it forwards) are seen directly. The end-to-end
 * suite (avoid-tried-replicas.e2e.test.ts) runs it over real replicas.
 */
import { createRequire } from 'node:module';
import { connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AVOID_TRIED_REPLICAS_POLICY,
  AvoidTriedReplicasBalancer,
  AvoidTriedReplicasConfig,
  registerAvoidTriedReplicas,
} from '../../src/lb/avoid-tried-balancer.js';
import { AvoidTriedPicker } from '../../src/lb/avoid-tried-picker.js';
import { replicaAvoidanceInUse } from '../../src/lb/tried-replicas.js';
import { hintedMetadata, rotatingPicker } from '../helpers/fake-picks.js';

type ChannelControlHelper = experimental.ChannelControlHelper;

const grpcJsVersion = (createRequire(import.meta.url)('@grpc/grpc-js/package.json') as { version: string })
  .version;
/** grpc-js 1.10 hands the channel options to a policy's constructor and has no return from updateAddressList. */
const isGrpcJs110 = grpcJsVersion.startsWith('1.10.');

const SCRIPTED = 'grpc_retry_hedging_test.scripted_child';

class ScriptedConfig implements experimental.TypedLoadBalancingConfig {
  constructor(readonly label: string) {}
  getLoadBalancerName(): string {
    return SCRIPTED;
  }
  toJsonObject(): object {
    return { [SCRIPTED]: { label: this.label } };
  }
  static createFromJson(obj: unknown): ScriptedConfig {
    return new ScriptedConfig(String((obj as { label?: unknown }).label ?? ''));
  }
}

/** Every scripted child made, in order, with what it was handed. */
const children: ScriptedChild[] = [];

/** A child policy that records each call and publishes the pickers a test gives it. */
class ScriptedChild {
  readonly constructedWith: unknown[];
  readonly updates: unknown[][] = [];
  readonly calls: string[] = [];
  /** What updateAddressList returns (grpc-js 1.11+ passes it up). */
  accept = true;

  constructor(
    readonly helper: ChannelControlHelper,
    ...rest: unknown[]
  ) {
    this.constructedWith = rest;
    children.push(this);
  }
  updateAddressList(...args: unknown[]): boolean {
    this.updates.push(args);
    return this.accept;
  }
  /** Publishes a state and picker to the parent, as a policy does. */
  publish(state: connectivityState, picker: experimental.Picker, errorMessage: string | null = null): void {
    (this.helper.updateState as (...args: unknown[]) => void)(state, picker, errorMessage);
  }
  exitIdle(): void {
    this.calls.push('exitIdle');
  }
  resetBackoff(): void {
    this.calls.push('resetBackoff');
  }
  destroy(): void {
    this.calls.push('destroy');
  }
  getTypeName(): string {
    return SCRIPTED;
  }
}

experimental.registerLoadBalancerType(
  SCRIPTED,
  ScriptedChild as unknown as Parameters<typeof experimental.registerLoadBalancerType>[1],
  ScriptedConfig,
);

/** The channel's side: what the balancer publishes. */
function fakeChannel() {
  const published: Array<{ state: connectivityState; picker: experimental.Picker; more: unknown[] }> = [];
  const helper = {
    createSubchannel: vi.fn(),
    updateState: (state: connectivityState, picker: experimental.Picker, ...more: unknown[]) => {
      published.push({ state, picker, more });
    },
    requestReresolution: vi.fn(),
    addChannelzChild: vi.fn(),
    removeChannelzChild: vi.fn(),
  };
  return { helper: helper as unknown as ChannelControlHelper, published, raw: helper };
}

function balancerOverScripted(label = 'one') {
  const channel = fakeChannel();
  const balancer = new AvoidTriedReplicasBalancer(channel.helper, { 'grpc.test': 1 });
  const config = AvoidTriedReplicasConfig.createFromJson({ childPolicy: [{ [SCRIPTED]: { label } }] });
  return { ...channel, balancer, config };
}

const endpoints = [{ addresses: [{ host: '127.0.0.1', port: 1 }] }];

afterEach(() => {
  children.length = 0;
});

describe('AvoidTriedReplicasBalancer: the child it runs', () => {
  it("makes the configured child on the first address list and hands it the endpoints and the child's own config", () => {
    const { balancer, config } = balancerOverScripted('first');
    expect(children).toHaveLength(0);
    const returned = balancer.updateAddressList(endpoints as never, config, { 'grpc.x': 2 } as never, 'note');
    expect(children).toHaveLength(1);
    const child = children[0] as ScriptedChild;
    expect(child.updates).toHaveLength(1);
    const [sentEndpoints, sentConfig, sentOptions] = child.updates[0] as unknown[];
    expect(sentEndpoints).toBe(endpoints);
    expect(sentConfig).toBeInstanceOf(ScriptedConfig);
    expect(sentConfig).toBe(config.child);
    expect((sentConfig as ScriptedConfig).label).toBe('first');
    // The arguments after the config are forwarded as grpc-js gave them (attributes in 1.10, options in 1.14).
    expect(sentOptions).toEqual({ 'grpc.x': 2 });
    expect(returned).toBe(isGrpcJs110 ? undefined : true);
  });

  it("passes up the child's refusal of an address list (grpc-js 1.11+)", () => {
    const { balancer, config } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    (children[0] as ScriptedChild).accept = false;
    const returned = balancer.updateAddressList(endpoints as never, config, {} as never, '');
    expect(children).toHaveLength(1);
    expect(returned).toBe(isGrpcJs110 ? undefined : false);
  });

  it('hands the child the channel options grpc-js 1.10 gives a policy', () => {
    const { balancer, config } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    const child = children[0] as ScriptedChild;
    if (isGrpcJs110) {
      expect(child.constructedWith[0]).toEqual({ 'grpc.test': 1 });
    } else {
      expect(child.constructedWith).toEqual([]);
    }
  });

  it("refuses a config that is not the policy's own, naming the policy and the config's", () => {
    const { balancer } = balancerOverScripted();
    expect(() =>
      balancer.updateAddressList(endpoints as never, new ScriptedConfig('x'), {} as never, ''),
    ).toThrow(`${AVOID_TRIED_REPLICAS_POLICY}: got a config of ${SCRIPTED}`);
    expect(children).toHaveLength(0);
  });

  it('forwards exitIdle, resetBackoff and destroy to the child, and names its own type', () => {
    const { balancer, config } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    balancer.exitIdle();
    balancer.resetBackoff();
    balancer.destroy();
    expect((children[0] as ScriptedChild).calls).toEqual(['exitIdle', 'resetBackoff', 'destroy']);
    expect(balancer.getTypeName()).toBe(AVOID_TRIED_REPLICAS_POLICY);
  });

  it("forwards the child's other requests to the channel untouched", () => {
    const { balancer, config, raw } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    const child = children[0] as ScriptedChild;
    child.helper.requestReresolution();
    const address = { host: '127.0.0.1', port: 2 };
    child.helper.createSubchannel(address as never, {});
    expect(raw.requestReresolution).toHaveBeenCalledTimes(1);
    expect(raw.createSubchannel).toHaveBeenCalledWith(address, {});
  });
});

describe('AvoidTriedReplicasBalancer: what it publishes', () => {
  it("wraps each of the child's pickers in a new AvoidTriedPicker, with the state and the error message", () => {
    const { balancer, config, published } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    const child = children[0] as ScriptedChild;
    child.publish(connectivityState.READY, rotatingPicker(['a', 'b']));
    child.publish(connectivityState.TRANSIENT_FAILURE, rotatingPicker(['a']), 'all replicas down');
    expect(published.map((p) => p.state)).toEqual([
      connectivityState.READY,
      connectivityState.TRANSIENT_FAILURE,
    ]);
    expect(published[0]?.picker).toBeInstanceOf(AvoidTriedPicker);
    expect(published[1]?.picker).toBeInstanceOf(AvoidTriedPicker);
    expect(published[1]?.picker).not.toBe(published[0]?.picker);
    // grpc-js 1.14's policies give an error message with the state; 1.10's ChildLoadBalancerHandler drops it.
    if (!isGrpcJs110) {
      expect(published.map((p) => p.more)).toEqual([[null], ['all replicas down']]);
    }
  });

  it("the picker it publishes gives a call without a hint the child's own pick, and a retry another replica", () => {
    const { balancer, config, published } = balancerOverScripted();
    balancer.updateAddressList(endpoints as never, config, {} as never, '');
    const childPicker = rotatingPicker(['a', 'b', 'c']);
    (children[0] as ScriptedChild).publish(connectivityState.READY, childPicker);
    const picker = published[0]?.picker as experimental.Picker;
    const pick = (metadata: Metadata) => picker.pick({ metadata, extraPickInfo: {} } as never);
    expect(pick(new Metadata()).subchannel?.getAddress()).toBe('a');
    expect(pick(new Metadata()).subchannel?.getAddress()).toBe('b');
    // A retry that went to b: the picker offers a replica it saw READY that the call has not tried (a), without
    // asking the child, whose rotation stays where first attempts left it.
    const retry = hintedMetadata(['b']);
    expect(pick(retry.metadata).subchannel?.getAddress()).toBe('a');
    expect(retry.picked()).toBe('a');
    expect(childPicker.picks).toBe(2);
  });
});

describe('registerAvoidTriedReplicas', () => {
  // Before the registration below: the check runs only while the policy is not registered.
  it('refuses a grpc-js whose Metadata.clone() drops the options the hint rides in, and registers nothing', () => {
    const clone = vi.spyOn(Metadata.prototype, 'clone').mockImplementation(() => new Metadata());
    try {
      expect(() => registerAvoidTriedReplicas()).toThrow(
        'grpc-retry-hedging: avoiding tried replicas needs grpc-js to copy metadata options into Metadata.clone(), and this @grpc/grpc-js does not',
      );
    } finally {
      clone.mockRestore();
    }
    expect(experimental.isLoadBalancerNameRegistered(AVOID_TRIED_REPLICAS_POLICY)).toBe(false);
  });

  it('registers the policy once, and marks replica avoidance as in use', () => {
    registerAvoidTriedReplicas();
    registerAvoidTriedReplicas();
    expect(experimental.isLoadBalancerNameRegistered(AVOID_TRIED_REPLICAS_POLICY)).toBe(true);
    expect(replicaAvoidanceInUse()).toBe(true);
    const config = experimental.parseLoadBalancingConfig({ [AVOID_TRIED_REPLICAS_POLICY]: {} });
    expect(config).toBeInstanceOf(AvoidTriedReplicasConfig);
    expect(config.toJsonObject()).toEqual({
      [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] },
    });
  });

  it('does not probe grpc-js again once the policy is registered', () => {
    registerAvoidTriedReplicas();
    const clone = vi.spyOn(Metadata.prototype, 'clone').mockImplementation(() => new Metadata());
    try {
      expect(() => registerAvoidTriedReplicas()).not.toThrow();
      expect(clone).not.toHaveBeenCalled();
    } finally {
      clone.mockRestore();
    }
  });
});
