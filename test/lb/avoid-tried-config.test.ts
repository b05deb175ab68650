import { experimental } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import {
  AVOID_TRIED_REPLICAS_POLICY,
  AvoidTriedReplicasConfig,
  registerAvoidTriedReplicas,
} from '../../src/lb/avoid-tried-balancer.js';

const FLAKY = 'grpc_retry_hedging.testing.v1.FlakyTest';
const hedged = {
  methodConfig: [{ name: [{ service: FLAKY }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.02s' } }],
};
const serviceConfigOf = (options: Record<string, unknown>) =>
  JSON.parse(options['grpc.service_config'] as string) as Record<string, unknown>;

describe('createChannelOptions({ avoidTriedReplicas })', () => {
  it('wraps round_robin when the config has no loadBalancingConfig, and registers the policy', () => {
    const config = serviceConfigOf(createChannelOptions(hedged, { avoidTriedReplicas: true }));
    expect(config.loadBalancingConfig).toEqual([
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] } },
    ]);
    expect(experimental.isLoadBalancerNameRegistered(AVOID_TRIED_REPLICAS_POLICY)).toBe(true);
  });

  it("wraps the config's own loadBalancingConfig", () => {
    const own = [{ pick_first: { shuffleAddressList: true } }, { round_robin: {} }];
    const config = serviceConfigOf(
      createChannelOptions({ ...hedged, loadBalancingConfig: own }, { avoidTriedReplicas: true }),
    );
    expect(config.loadBalancingConfig).toEqual([{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: own } }]);
  });

  it('leaves a config that already names the policy as it is, and leaves others alone without the option', () => {
    const named = [{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ pick_first: {} }] } }];
    const config = { ...hedged, loadBalancingConfig: named };
    expect(
      serviceConfigOf(createChannelOptions(config, { avoidTriedReplicas: true })).loadBalancingConfig,
    ).toEqual(named);
    expect(serviceConfigOf(createChannelOptions(config)).loadBalancingConfig).toEqual(named);
    expect(serviceConfigOf(createChannelOptions(hedged)).loadBalancingConfig).toBeUndefined();
  });

  it('rejects a bad option value and names the option among the known ones', () => {
    expect(() => createChannelOptions(hedged, { avoidTriedReplicas: 'yes' as never })).toThrow(
      /options\.avoidTriedReplicas must be true or false, got "yes"/,
    );
    expect(() => createChannelOptions(hedged, { avoidTried: true } as never)).toThrow(
      /known: .*avoidTriedReplicas/,
    );
    expect(() => createChannelOptions(hedged, { avoidTriedReplica: true } as never)).toThrow(
      'createChannelOptions: options.avoidTriedReplica is not an option; did you mean "avoidTriedReplicas"?',
    );
  });

  it('fails at once, naming the entry, for a child policy grpc-js would reject (grpc-js would fall back silently)', () => {
    const bad = [
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ outlier_detection: { interval: 'soon' } }] } },
    ];
    expect(() => createChannelOptions({ ...hedged, loadBalancingConfig: bad })).toThrow(
      /loadBalancingConfig\[0\].*childPolicy\[0\] \(outlier_detection\) is invalid/,
    );
    const unknown = [{ no_such_policy: {} }];
    expect(() =>
      createChannelOptions({ ...hedged, loadBalancingConfig: unknown }, { avoidTriedReplicas: true }),
    ).toThrow(/names no load-balancing policy this grpc-js knows \(no_such_policy\)/);
  });
});

describe('the policy config', () => {
  it('defaults the child to round_robin and round-trips through toJsonObject', () => {
    const config = AvoidTriedReplicasConfig.createFromJson({});
    expect(config.child.getLoadBalancerName()).toBe('round_robin');
    expect(config.toJsonObject()).toEqual({
      [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] },
    });
    expect(
      AvoidTriedReplicasConfig.createFromJson({
        child_policy: [{ pick_first: {} }],
      }).child.getLoadBalancerName(),
    ).toBe('pick_first');
  });

  it('rejects what it cannot use, saying what is wrong', () => {
    expect(() => AvoidTriedReplicasConfig.createFromJson([])).toThrow(/must be an object/);
    expect(() => AvoidTriedReplicasConfig.createFromJson({ child: [] })).toThrow(/unknown field child/);
    expect(() => AvoidTriedReplicasConfig.createFromJson({ childPolicy: [] })).toThrow(/non-empty array/);
    registerAvoidTriedReplicas();
    expect(() =>
      AvoidTriedReplicasConfig.createFromJson({ childPolicy: [{ [AVOID_TRIED_REPLICAS_POLICY]: {} }] }),
    ).toThrow(/cannot be .* itself/);
  });
});
