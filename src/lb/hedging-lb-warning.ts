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
  if (effectivePolicy(config.loadBalancingConfig, isKnown) !== 'pick_first') {
    return [];
  }
  const entries = Array.isArray(config.methodConfig) ? config.methodConfig : [];
  const names = policyNames(config.loadBalancingConfig);
  const why =
    names.length === 0
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
