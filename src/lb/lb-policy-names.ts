/**
 * Which load-balancing policy grpc-js runs for a `loadBalancingConfig` list: the first entry whose policy it knows,
 * skipping the others, as the service-config spec asks; with none known, or no list, its default, `pick_first`.
 * A misspelled name (`round_robbin`) is thus skipped without a word, and a list of only such names leaves the channel
 * on `pick_first`, where a hedge cannot leave a slow replica. Pure: the known names are the caller's.
 */
import type { JsonPath } from '../config/json-path.js';
import { closestName } from '../util/closest-name.js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';

/** The policies of grpc-js 1.10 to 1.14 that a service config may name, for "did you mean" (and ours). */
const COMMON_POLICIES = [
  'pick_first',
  'round_robin',
  'outlier_detection',
  'weighted_round_robin',
  'ring_hash',
  AVOID_TRIED_REPLICAS_POLICY,
];

/** The policy an entry of a policy list names (its first key), if it is an object. */
export function policyNameOf(entry: unknown): string | undefined {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry)
    ? Object.keys(entry)[0]
    : undefined;
}

/** The policy names of a `loadBalancingConfig` list, in order (an entry that is not `{name: {...}}` gives none). */
export function policyNames(list: unknown): string[] {
  if (!Array.isArray(list)) {
    return [];
  }
  return list.flatMap((entry: unknown) => policyNameOf(entry) ?? []);
}

/** The policy grpc-js runs for `list`: the first name it knows, else `pick_first`. */
export function effectivePolicy(list: unknown, isKnown: (name: string) => boolean): string {
  return policyNames(list).find(isKnown) ?? 'pick_first';
}

/** A known policy `name` is likely a misspelling of ("did you mean"), if any. */
export function suggestPolicyName(name: string, isKnown: (name: string) => boolean): string | undefined {
  return closestName(name, COMMON_POLICIES.filter(isKnown));
}

/**
 * When a non-empty list names no policy grpc-js knows: a warning saying so, with a "did you mean" per name, at the
 * list's path. `undefined` when the list is absent, empty, or names a policy grpc-js knows (a list may name
 * policies of other gRPC implementations before one grpc-js has).
 */
export function unknownPoliciesWarning(
  list: unknown,
  isKnown: (name: string) => boolean,
): { path: JsonPath; message: string } | undefined {
  const names = policyNames(list);
  if (names.length === 0 || names.some(isKnown)) {
    return undefined;
  }
  const described = names.map((name) => {
    const near = suggestPolicyName(name, isKnown);
    return near === undefined ? `"${name}"` : `"${name}" (did you mean ${near}?)`;
  });
  return {
    path: ['loadBalancingConfig'],
    message:
      `names no load-balancing policy this grpc-js knows (${described.join(', ')}): grpc-js skips every entry and ` +
      'runs pick_first, which sends every attempt of a call down one connection to one server',
  };
}
