import { describe, expect, it } from 'vitest';
import { effectivePolicy, policyNames, unknownPoliciesWarning } from '../../src/lb/lb-policy-names.js';

/** A grpc-js that knows these policies (the real one is asked in the CLI and createChannelOptions). */
const known = (name: string): boolean => ['pick_first', 'round_robin', 'outlier_detection'].includes(name);

describe('load-balancing policy names', () => {
  it('reads the names in order, skipping entries that are not {name: {...}}', () => {
    expect(policyNames([{ grpclb: {} }, 'x', null, [], { round_robin: {} }])).toEqual([
      'grpclb',
      'round_robin',
    ]);
    expect(policyNames(undefined)).toEqual([]);
    expect(policyNames({ round_robin: {} })).toEqual([]);
  });

  it('grpc-js runs the first policy it knows, else pick_first', () => {
    expect(effectivePolicy([{ grpclb: {} }, { round_robin: {} }], known)).toBe('round_robin');
    expect(effectivePolicy([{ round_robbin: {} }], known)).toBe('pick_first');
    expect(effectivePolicy(undefined, known)).toBe('pick_first');
    expect(effectivePolicy([], known)).toBe('pick_first');
  });

  it('warns when a list names no policy grpc-js knows, with a "did you mean" for a misspelling', () => {
    expect(unknownPoliciesWarning([{ round_robbin: {} }, { grpclb: {} }], known)).toEqual({
      path: ['loadBalancingConfig'],
      message:
        'names no load-balancing policy this grpc-js knows ("round_robbin" (did you mean round_robin?), "grpclb"): ' +
        'grpc-js skips every entry and runs pick_first, which sends every attempt of a call down one connection to ' +
        'one server',
    });
  });

  it('says nothing of a list with one policy grpc-js knows (others may be for other gRPC implementations)', () => {
    expect(unknownPoliciesWarning([{ grpclb: {} }, { round_robin: {} }], known)).toBeUndefined();
    expect(unknownPoliciesWarning([], known)).toBeUndefined();
    expect(unknownPoliciesWarning(undefined, known)).toBeUndefined();
  });
});
