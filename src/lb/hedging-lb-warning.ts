/**
 * `check`'s warning for hedging behind one connection: under grpc-js's default `pick_first` (no
 * `loadBalancingConfig`, or `pick_first` first), every attempt of a call goes to the same server, so a hedge can
 * never leave a slow replica. Pure: it reads the raw config.
 */
import type { JsonPath } from '../config/json-path.js';
import { effectivePolicy, policyNames } from './lb-policy-names.js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';

/** A warning at a path of the config. @internal */
export interface HedgingLbWarning {
  readonly path: JsonPath;
  readonly message: string;
}

/**
 * One warning per methodConfig entry with a `hedgingPolicy`, when the policy grpc-js runs for the config is
 * `pick_first` (no `loadBalancingConfig`, `pick_first` first, or no policy it knows). Nothing for a config that is
 * not an object (the validator reports those).
 * @internal
 */
export function findHedgingBehindPickFirst(
  raw: unknown,
  isKnown: (name: string) => boolean,
): HedgingLbWarning[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [];
  }
  const config = raw as Record<string, unknown>;
  const top = effectivePolicy(config.loadBalancingConfig, isKnown);
  // The avoiding policy only chooses among what its child hands out: around pick_first, that is one server.
  const child =
    top === AVOID_TRIED_REPLICAS_POLICY ? avoidChildList(config.loadBalancingConfig, isKnown) : undefined;
  if (child !== undefined ? effectivePolicy(child, isKnown) !== 'pick_first' : top !== 'pick_first') {
    return [];
  }
  const entries = Array.isArray(config.methodConfig) ? config.methodConfig : [];
  const names = policyNames(child ?? config.loadBalancingConfig);
  const why =
    child !== undefined
      ? `${AVOID_TRIED_REPLICAS_POLICY} runs around pick_first (its childPolicy), which hands it one server only, so it has no other replica to send a hedge to`
      : names.length === 0
        ? 'the config has no loadBalancingConfig, so grpc-js uses pick_first'
        : names.some(isKnown)
          ? 'loadBalancingConfig is pick_first'
          : 'loadBalancingConfig names no policy grpc-js knows, so grpc-js uses pick_first';
  const warnings: HedgingLbWarning[] = [];
  entries.forEach((entry, index) => {
    if (typeof entry === 'object' && entry !== null && 'hedgingPolicy' in entry) {
      warnings.push({
        path: ['methodConfig', index, 'hedgingPolicy'],
        message:
          `${why}, which sends every attempt of a call down one connection to one server: a hedge ` +
          `cannot leave a slow replica. Use round_robin, or createChannelOptions(config, { avoidTriedReplicas: true }) ` +
          `(policy ${AVOID_TRIED_REPLICAS_POLICY}) so that hedges go to replicas the call has not tried`,
      });
    }
  });
  return warnings;
}

/**
 * The child policy list of the first entry of `list` that grpc-js would run, when that entry is the avoiding
 * policy (`childPolicy`, or grpc-js's spelling `child_policy`); undefined otherwise, and when it names none (its
 * child is then round_robin).
 */
function avoidChildList(list: unknown, isKnown: (name: string) => boolean): unknown[] | undefined {
  if (!Array.isArray(list)) {
    return undefined;
  }
  for (const entry of list) {
    if (typeof entry !== 'object' || entry === null) {
      continue;
    }
    const [name, body] = Object.entries(entry as Record<string, unknown>)[0] ?? [];
    if (name === undefined || !isKnown(name)) {
      continue;
    }
    if (name !== AVOID_TRIED_REPLICAS_POLICY || typeof body !== 'object' || body === null) {
      return undefined;
    }
    const options = body as Record<string, unknown>;
    const children = options.childPolicy ?? options.child_policy;
    return Array.isArray(children) && children.length > 0 ? children : undefined;
  }
  return undefined;
}
