import { experimental } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChannelOptions } from '../../src/config/channel-options.js';
import { ServiceConfigError } from '../../src/config/service-config-error.js';
import {
  AVOID_TRIED_REPLICAS_POLICY,
  AvoidTriedReplicasConfig,
  parseAvoidTriedReplicasConfig,
  registerAvoidTriedReplicas,
} from '../../src/lb/avoid-tried-balancer.js';
import { findAvoidPolicyProblems } from '../../src/lb/avoid-tried-config.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

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
      createChannelOptions(
        { ...hedged, loadBalancingConfig: own },
        { avoidTriedReplicas: true, onWarning: () => {} },
      ),
    );
    expect(config.loadBalancingConfig).toEqual([{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: own } }]);
  });

  it('leaves a config that already names the policy as it is, and leaves others alone without the option', () => {
    const named = [{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ pick_first: {} }] } }];
    const config = { ...hedged, loadBalancingConfig: named };
    const onWarning = () => {};
    expect(
      serviceConfigOf(createChannelOptions(config, { avoidTriedReplicas: true, onWarning }))
        .loadBalancingConfig,
    ).toEqual(named);
    expect(serviceConfigOf(createChannelOptions(config, { onWarning })).loadBalancingConfig).toEqual(named);
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

describe('createChannelOptions: a loadBalancingConfig list with fallbacks', () => {
  const roundRobinAvoiding = { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] } };

  it('keeps a list whose first policy grpc-js knows is the avoiding one, fallbacks included (grpc-js runs that first one)', () => {
    for (const list of [
      [roundRobinAvoiding, { round_robin: {} }],
      [roundRobinAvoiding, { pick_first: {} }],
      // A policy grpc-js does not know is skipped, by grpc-js and here.
      [{ grpclb: {} }, roundRobinAvoiding, { round_robin: {} }],
    ]) {
      const options = createChannelOptions(
        { ...hedged, loadBalancingConfig: list },
        { avoidTriedReplicas: true },
      );
      expect(serviceConfigOf(options).loadBalancingConfig).toEqual(list);
    }
  });

  it('wraps a list whose first known policy is another one: the avoiding entry further down would never run', () => {
    const list = [{ round_robin: {} }, roundRobinAvoiding];
    const options = createChannelOptions(
      { ...hedged, loadBalancingConfig: list },
      { avoidTriedReplicas: true },
    );
    expect(serviceConfigOf(options).loadBalancingConfig).toEqual([
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: list } },
    ]);
  });

  it('still rejects an avoiding entry whose own config is invalid, first or fallback', () => {
    const bad = { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robbin: {} }] } };
    expect(() =>
      createChannelOptions(
        { ...hedged, loadBalancingConfig: [bad, { round_robin: {} }] },
        { avoidTriedReplicas: true },
      ),
    ).toThrow(
      /loadBalancingConfig\[0\]: policy grpc_retry_hedging\.avoid_tried_replicas: childPolicy names no/,
    );
    expect(() =>
      createChannelOptions(
        { ...hedged, loadBalancingConfig: [roundRobinAvoiding, bad] },
        { avoidTriedReplicas: true },
      ),
    ).toThrow(/loadBalancingConfig\[1\]: .*round_robbin: did you mean round_robin\?/);
  });
});

describe('createChannelOptions: avoidTriedReplicas around a list it cannot run', () => {
  it("names the config's own list, as written, not the wrapper it made", () => {
    expect(() =>
      createChannelOptions(
        { ...hedged, loadBalancingConfig: [{ round_robbin: {} }] },
        { avoidTriedReplicas: true },
      ),
    ).toThrow(
      new ServiceConfigError(
        'loadBalancingConfig',
        'names no load-balancing policy this grpc-js knows (round_robbin: did you mean round_robin?); ' +
          `avoidTriedReplicas runs ${AVOID_TRIED_REPLICAS_POLICY} around this list, and it needs a policy there that grpc-js can run`,
      ).message,
    );
    expect(() =>
      createChannelOptions(
        {
          ...hedged,
          loadBalancingConfig: [{ round_robbin: {} }, { pick_first: { shuffleAddressList: 'yes' } }],
        },
        { avoidTriedReplicas: true },
      ),
    ).toThrow(
      /^loadBalancingConfig\[1\]: pick_first is invalid: .*shuffleAddressList.*; avoidTriedReplicas runs /,
    );
  });
});

describe("names of Object.prototype's properties (grpc-js's registry lookup finds them with `in`)", () => {
  it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])(
    '%s is no policy: warned of without avoidTriedReplicas, and refused with it, in plain words',
    (name) => {
      const warnings = captureWarnings();
      const list = [JSON.parse(`{"${name}": {}}`)];
      createChannelOptions({ ...hedged, loadBalancingConfig: list });
      expect(warnings.map((w) => w.code)).toContain('GRPC_RETRY_HEDGING_LB_POLICY');
      expect(() =>
        createChannelOptions({ ...hedged, loadBalancingConfig: list }, { avoidTriedReplicas: true }),
      ).toThrow(`names no load-balancing policy this grpc-js knows (${name})`);
      const wrapped = [{ [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: list } }];
      expect(() =>
        createChannelOptions({ ...hedged, loadBalancingConfig: wrapped }, { avoidTriedReplicas: true }),
      ).toThrow(/childPolicy names no load-balancing policy this grpc-js knows/);
    },
  );
});

describe('createChannelOptions: hedging under the avoiding policy around pick_first', () => {
  const retried = {
    name: [{ service: FLAKY, method: 'Other' }],
    retryPolicy: {
      maxAttempts: 2,
      initialBackoff: '0.1s',
      maxBackoff: '1s',
      backoffMultiplier: 2,
      retryableStatusCodes: ['UNAVAILABLE'],
    },
  };
  const warningsOf = (config: object, avoidTriedReplicas: boolean): string[] => {
    const warnings: string[] = [];
    createChannelOptions(config, { avoidTriedReplicas, onWarning: (message) => warnings.push(message) });
    return warnings;
  };

  it('warns once, naming every hedged entry, when avoidTriedReplicas wraps pick_first', () => {
    const config = {
      loadBalancingConfig: [{ pick_first: {} }],
      methodConfig: [
        retried,
        ...hedged.methodConfig,
        { ...hedged.methodConfig[0], name: [{ service: 'x.Y' }] },
      ],
    };
    const warnings = warningsOf(config, true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^createChannelOptions: methodConfig\[1\]\.hedgingPolicy, methodConfig\[2\]\.hedgingPolicy: in loadBalancingConfig grpc_retry_hedging\.avoid_tried_replicas runs around pick_first \(its childPolicy\)/,
    );
    expect(warnings[0]).toContain('a hedge');
    expect(warnings[0]).toContain('round_robin');
  });

  it('warns through process.emitWarning with the load-balancing code when there is no onWarning', () => {
    const captured = captureWarnings();
    createChannelOptions(
      { ...hedged, loadBalancingConfig: [{ pick_first: {} }] },
      { avoidTriedReplicas: true },
    );
    expect(captured).toEqual([
      { message: expect.stringContaining('runs around pick_first'), code: 'GRPC_RETRY_HEDGING_LB_POLICY' },
    ]);
  });

  it('warns for the policy named by hand around pick_first, with or without the option', () => {
    const named = {
      ...hedged,
      loadBalancingConfig: [{ [AVOID_TRIED_REPLICAS_POLICY]: { child_policy: [{ pick_first: {} }] } }],
    };
    expect(warningsOf(named, false)).toEqual([expect.stringContaining('runs around pick_first')]);
    expect(warningsOf(named, true)).toEqual([expect.stringContaining('runs around pick_first')]);
  });

  it('says nothing around round_robin, without a hedging policy, or without the avoiding policy', () => {
    expect(warningsOf(hedged, true)).toEqual([]); // round_robin is wrapped
    expect(warningsOf({ ...hedged, loadBalancingConfig: [{ round_robin: {} }] }, true)).toEqual([]);
    expect(warningsOf({ loadBalancingConfig: [{ pick_first: {} }], methodConfig: [retried] }, true)).toEqual(
      [],
    );
    // Plain pick_first runs what the config says: check warns of it, createChannelOptions does not.
    expect(warningsOf({ ...hedged, loadBalancingConfig: [{ pick_first: {} }] }, false)).toEqual([]);
    // A fallback list whose avoiding entry runs round_robin.
    const fallback = [
      { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robin: {} }] } },
      { pick_first: {} },
    ];
    expect(warningsOf({ ...hedged, loadBalancingConfig: fallback }, true)).toEqual([]);
  });
});

describe('findAvoidPolicyProblems (what check reports)', () => {
  it("gives each avoiding entry's problem with its JSON path, and nothing for valid or other entries", () => {
    expect(
      findAvoidPolicyProblems([
        { round_robin: {} },
        { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ round_robbin: {} }] } },
        { [AVOID_TRIED_REPLICAS_POLICY]: { child_policy: [{ outlier_detection: { interval: 'soon' } }] } },
        { [AVOID_TRIED_REPLICAS_POLICY]: { child: [] } },
        { [AVOID_TRIED_REPLICAS_POLICY]: { childPolicy: [{ [AVOID_TRIED_REPLICAS_POLICY]: {} }] } },
        { [AVOID_TRIED_REPLICAS_POLICY]: {} },
      ]),
    ).toEqual([
      {
        index: 1,
        path: ['loadBalancingConfig', 1, AVOID_TRIED_REPLICAS_POLICY, 'childPolicy'],
        problem:
          'childPolicy names no load-balancing policy this grpc-js knows (round_robbin: did you mean round_robin?)',
      },
      {
        index: 2,
        path: ['loadBalancingConfig', 2, AVOID_TRIED_REPLICAS_POLICY, 'child_policy', 0],
        problem: expect.stringMatching(/^childPolicy\[0\] \(outlier_detection\) is invalid: /),
      },
      {
        index: 3,
        path: ['loadBalancingConfig', 3, AVOID_TRIED_REPLICAS_POLICY, 'child'],
        problem: 'unknown field child (known: childPolicy)',
      },
      {
        index: 4,
        path: ['loadBalancingConfig', 4, AVOID_TRIED_REPLICAS_POLICY, 'childPolicy', 0],
        problem: `childPolicy cannot be ${AVOID_TRIED_REPLICAS_POLICY} itself`,
      },
    ]);
    expect(findAvoidPolicyProblems(undefined)).toEqual([]);
    expect(findAvoidPolicyProblems('round_robin')).toEqual([]);
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

describe('parseAvoidTriedReplicasConfig: where and what', () => {
  const problemOf = (obj: unknown) => {
    const parsed = parseAvoidTriedReplicasConfig(obj);
    return parsed instanceof AvoidTriedReplicasConfig
      ? parsed
      : { path: parsed.path, problem: parsed.problem };
  };

  it('a config that is not an object is wrong as a whole', () => {
    for (const [bad, shown] of [
      [[], '[]'],
      [null, 'null'],
      ['round_robin', '"round_robin"'],
    ] as const) {
      expect(problemOf(bad)).toEqual({ path: [], problem: `must be an object, got ${shown}` });
    }
  });

  it('names the avoiding entry among unknown ones by its own index', () => {
    expect(
      problemOf({ childPolicy: [{ no_such_policy: {} }, { [AVOID_TRIED_REPLICAS_POLICY]: {} }] }),
    ).toEqual({
      path: ['childPolicy', 1],
      problem: `childPolicy cannot be ${AVOID_TRIED_REPLICAS_POLICY} itself`,
    });
  });

  it('lists every entry when none is known, suggesting names only for entries that are objects', () => {
    expect(problemOf({ childPolicy: [{ round_robn: {} }, 'pick_frst', { a: {}, b: {} }] })).toEqual({
      path: ['childPolicy'],
      problem:
        'childPolicy names no load-balancing policy this grpc-js knows (round_robn: did you mean round_robin?, pick_frst, a|b)',
    });
  });
});
