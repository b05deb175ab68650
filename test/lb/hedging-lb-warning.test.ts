/**
 * The warnings for hedging behind one connection, as pure functions of the raw config (`check` and
 * `createChannelOptions` give them; their own suites check where they appear). Under pick_first, or the
 * replica-avoiding policy around it, every attempt of a call goes to one server: a hedge cannot leave a slow one.
 */
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  findHedgingBehindPickFirst,
  hedgingAroundPickFirstWarning,
} from '../../src/lb/hedging-lb-warning.js';
import { AVOID_TRIED_REPLICAS_POLICY as AVOID } from '../../src/lb/policy-name.js';

const known = new Set(['pick_first', 'round_robin', AVOID]);
const isKnown = (name: string) => known.has(name);

const hedging = { hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.05s' } };
const retrying = { retryPolicy: {} };
/** Entries 0 and 2 hedge; 1 retries; 3 is not an object. */
const methodConfig = [hedging, retrying, hedging, 'not an entry'];

/** The policy grpc-js builds for a service config's loadBalancingConfig list (falling back to pick_first). */
const runByGrpcJs = (list: unknown): string | undefined =>
  grpc.experimental.selectLbConfigFromList(list as never, true)?.getLoadBalancerName();

const ONE_SERVER =
  'which sends every attempt of a call down one connection to one server: a hedge cannot leave a slow replica.';
const around = (child: unknown[], spelling = 'childPolicy') => [{ [AVOID]: { [spelling]: child } }];

describe('findHedgingBehindPickFirst (check)', () => {
  describe('outlier_detection, which grpc-js skips over pick_first or without a child_policy list', () => {
    const withOutlier = (name: string) => isKnown(name) || name === 'outlier_detection';
    const outlier = (options: unknown) => ({ outlier_detection: options });
    const warn = (loadBalancingConfig: unknown) =>
      findHedgingBehindPickFirst({ loadBalancingConfig, methodConfig: [hedging] }, withOutlier).map(
        (w) => w.message,
      );
    const ADVICE =
      'Give outlier_detection a child_policy of round_robin: [{"outlier_detection": {"child_policy": [{"round_robin": {}}]}}]';

    it.each<[string, unknown, string]>([
      // grpc-js refuses pick_first under outlier_detection, skips the entry and falls back to pick_first
      [
        'over pick_first',
        [outlier({ child_policy: [{ pick_first: {} }] })],
        'has pick_first as its child_policy, which grpc-js refuses',
      ],
      // grpc-js reads child_policy only: a camelCase childPolicy leaves the entry without one
      [
        'with childPolicy',
        [outlier({ childPolicy: [{ pick_first: {} }] })],
        'has no child_policy list (grpc-js reads child_policy, not childPolicy)',
      ],
      [
        'with childPolicy round_robin',
        [outlier({ childPolicy: [{ round_robin: {} }] })],
        'has no child_policy list (grpc-js reads child_policy, not childPolicy)',
      ],
      ['without a child', [outlier({})], 'has no child_policy list'],
      ['with a null config', [outlier(null)], 'has no child_policy list'],
      [
        'over an unknown child',
        [outlier({ child_policy: [{ bogus: {} }] })],
        'has a child_policy naming no policy grpc-js can run',
      ],
      [
        'over outlier_detection over pick_first',
        [outlier({ child_policy: [outlier({ child_policy: [{ pick_first: {} }] })] })],
        'has a child_policy naming no policy grpc-js can run',
      ],
      [
        'over pick_first, before pick_first',
        [outlier({ child_policy: [{ pick_first: {} }] }), { pick_first: {} }],
        'has pick_first as its child_policy, which grpc-js refuses',
      ],
    ])('%s: warns that grpc-js runs pick_first', (_what, loadBalancingConfig, why) => {
      // what grpc-js itself makes of the list
      expect(runByGrpcJs(loadBalancingConfig)).toBe('pick_first');
      expect(warn(loadBalancingConfig)).toEqual([
        `loadBalancingConfig[0] (outlier_detection) ${why}, so grpc-js skips it and uses pick_first, ${ONE_SERVER} ${ADVICE}`,
      ]);
    });

    it('no warning where grpc-js runs outlier_detection over round_robin, or skips to round_robin', () => {
      expect(runByGrpcJs([outlier({ child_policy: [{ round_robin: {} }] })])).toBe('outlier_detection');
      expect(runByGrpcJs([outlier({ child_policy: [{ pick_first: {} }] }), { round_robin: {} }])).toBe(
        'round_robin',
      );
      expect(warn([outlier({ child_policy: [{ round_robin: {} }] })])).toEqual([]);
      expect(warn([outlier({ child_policy: [{ bogus: {} }, { round_robin: {} }] })])).toEqual([]);
      expect(warn([outlier({ child_policy: [{ pick_first: {} }] }), { round_robin: {} }])).toEqual([]);
    });

    it('the replica-avoiding policy after a skipped outlier_detection entry is read for its child', () => {
      expect(warn([outlier({}), ...around([{ pick_first: {} }])])).toEqual([
        `${AVOID} runs around pick_first (its childPolicy), ${ONE_SERVER} Name round_robin (or another policy that keeps every replica connected) as its childPolicy`,
      ]);
      expect(warn([outlier({}), ...around([{ round_robin: {} }])])).toEqual([]);
    });

    it('the replica-avoiding policy around a child list that skips an unknown name to pick_first', () => {
      expect(warn(around([{ bogus: {} }, { pick_first: {} }]))).toEqual([
        `${AVOID} runs around pick_first (its childPolicy), ${ONE_SERVER} Name round_robin (or another policy that keeps every replica connected) as its childPolicy`,
      ]);
    });

    it('the replica-avoiding policy with a config that is no object (the validator reports it): no throw', () => {
      for (const body of [null, 'round_robin', 7]) {
        expect(() => warn([{ [AVOID]: body }])).not.toThrow();
      }
    });

    it('a deep nest of outlier_detection is followed only so far, and does not overflow', () => {
      let list: unknown[] = [{ pick_first: {} }];
      for (let i = 0; i < 10_000; i++) {
        list = [outlier({ child_policy: list })];
      }
      expect(() => warn(list)).not.toThrow();
    });
  });

  it('one warning per hedging entry, at its hedgingPolicy, when there is no loadBalancingConfig', () => {
    const warnings = findHedgingBehindPickFirst({ methodConfig }, isKnown);
    expect(warnings.map((w) => w.path)).toEqual([
      ['methodConfig', 0, 'hedgingPolicy'],
      ['methodConfig', 2, 'hedgingPolicy'],
    ]);
    expect(warnings[0]?.message).toBe(
      `the config has no loadBalancingConfig, so grpc-js uses pick_first, ${ONE_SERVER} Use round_robin, or createChannelOptions(config, { avoidTriedReplicas: true }) (policy ${AVOID}) so that hedges go to replicas the call has not tried`,
    );
  });

  it('an entry whose hedgingPolicy is null or undefined does not hedge (the parser reads it as absent): no warning', () => {
    const entries = [
      { ...retrying, hedgingPolicy: null },
      { ...retrying, hedgingPolicy: undefined },
    ];
    expect(findHedgingBehindPickFirst({ methodConfig: entries }, isKnown)).toEqual([]);
    expect(hedgingAroundPickFirstWarning(around([{ pick_first: {} }]), entries, isKnown)).toBeUndefined();
  });

  it('pick_first named, first among the policies grpc-js knows', () => {
    for (const loadBalancingConfig of [
      [{ pick_first: {} }],
      [{ other_impl_policy: {} }, { pick_first: {} }],
    ]) {
      const warnings = findHedgingBehindPickFirst({ loadBalancingConfig, methodConfig: [hedging] }, isKnown);
      expect(warnings.map((w) => w.message)).toEqual([
        `loadBalancingConfig is pick_first, ${ONE_SERVER} Use round_robin (createChannelOptions(config, { avoidTriedReplicas: true }) runs ${AVOID} around the config's own loadBalancingConfig, so it needs round_robin there too)`,
      ]);
    }
  });

  it('a list naming no policy grpc-js knows: it falls back to pick_first, and says so', () => {
    const warnings = findHedgingBehindPickFirst(
      { loadBalancingConfig: [{ other_impl_policy: {} }], methodConfig: [hedging] },
      isKnown,
    );
    expect(warnings[0]?.message).toMatch(
      /^loadBalancingConfig names no policy grpc-js knows, so grpc-js uses pick_first, which sends/,
    );
  });

  it('the replica-avoiding policy around pick_first, in either spelling of childPolicy', () => {
    for (const spelling of ['childPolicy', 'child_policy']) {
      const warnings = findHedgingBehindPickFirst(
        { loadBalancingConfig: around([{ pick_first: {} }], spelling), methodConfig: [hedging] },
        isKnown,
      );
      expect(warnings.map((w) => w.message)).toEqual([
        `${AVOID} runs around pick_first (its childPolicy), ${ONE_SERVER} Name round_robin (or another policy that keeps every replica connected) as its childPolicy`,
      ]);
    }
  });

  it.each([
    ['round_robin', { loadBalancingConfig: [{ round_robin: {} }], methodConfig: [hedging] }],
    ['no hedging entry', { methodConfig: [retrying] }],
    ['no methodConfig list', { methodConfig: { 0: hedging } }],
    [
      'the avoiding policy around round_robin',
      { loadBalancingConfig: around([{ round_robin: {} }]), methodConfig: [hedging] },
    ],
    [
      'the avoiding policy with no child (round_robin then)',
      { loadBalancingConfig: [{ [AVOID]: {} }], methodConfig: [hedging] },
    ],
    [
      'the avoiding policy with an empty child list',
      { loadBalancingConfig: around([]), methodConfig: [hedging] },
    ],
    [
      'a child list naming no known policy (the validator reports it)',
      { loadBalancingConfig: around([{ nope: {} }]), methodConfig: [hedging] },
    ],
    ['a config that is null', null],
    ['a config that is an array', [{ methodConfig: [hedging] }]],
    ['a config that is a string', '{"methodConfig": []}'],
  ])('nothing for %s', (_name, raw) => {
    expect(findHedgingBehindPickFirst(raw, isKnown)).toEqual([]);
  });
});

describe('hedgingAroundPickFirstWarning (createChannelOptions)', () => {
  it('one message naming every hedging entry, when the avoiding policy runs around pick_first', () => {
    expect(hedgingAroundPickFirstWarning(around([{ pick_first: {} }]), methodConfig, isKnown)).toBe(
      `methodConfig[0].hedgingPolicy, methodConfig[2].hedgingPolicy: in loadBalancingConfig ${AVOID} runs around pick_first (its childPolicy), which sends every attempt of a call down one connection to one server: the policy has no other replica to send a hedge to. Name round_robin (or another policy that keeps every replica connected) as its childPolicy; with avoidTriedReplicas, which wraps the config's own loadBalancingConfig, put round_robin there instead of pick_first (or leave loadBalancingConfig out: round_robin is then wrapped)`,
    );
  });

  it.each([
    [
      'plain pick_first (check says so: the channel runs what the config says)',
      [{ pick_first: {} }],
      methodConfig,
    ],
    ['the avoiding policy around round_robin', around([{ round_robin: {} }]), methodConfig],
    ['the avoiding policy with no child', [{ [AVOID]: {} }], methodConfig],
    ['no hedging entry', around([{ pick_first: {} }]), [retrying]],
    [
      'a first known entry that is not the avoiding policy',
      [{ round_robin: {} }, ...around([{ pick_first: {} }])],
      methodConfig,
    ],
  ])('nothing for %s', (_name, loadBalancingConfig, entries) => {
    expect(hedgingAroundPickFirstWarning(loadBalancingConfig, entries, isKnown)).toBeUndefined();
  });
});
