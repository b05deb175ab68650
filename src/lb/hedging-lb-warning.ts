/**
 * `check`'s warning for hedging behind one connection: under grpc-js's default `pick_first` (no
 * `loadBalancingConfig`, or `pick_first` first), every attempt of a call goes to the same server, so a hedge can
 * never leave a slow replica. Pure: it reads the raw config.
 */
import type { JsonPath } from '../config/json-path.js';
import { AVOID_TRIED_REPLICAS_POLICY } from './policy-name.js';

/** A warning at a path of the config. @internal */
export interface HedgingLbWarning {
  readonly path: JsonPath;
  readonly message: string;
}

/** The policy grpc-js would run: the first entry's name, or `pick_first` when there is none. */
function firstPolicy(config: Record<string, unknown>): string {
  const list = config.loadBalancingConfig;
  if (!Array.isArray(list) || list.length === 0) {
    return 'pick_first';
  }
  const first = list[0];
  return typeof first === 'object' && first !== null ? (Object.keys(first)[0] ?? 'pick_first') : 'pick_first';
}

/**
 * One warning per methodConfig entry with a `hedgingPolicy`, when the config's load balancing is absent or
 * `pick_first`. Nothing for a config that is not an object (the validator reports those).
 * @internal
 */
export function findHedgingBehindPickFirst(raw: unknown): HedgingLbWarning[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return [];
  }
  const config = raw as Record<string, unknown>;
  const policy = firstPolicy(config);
  if (policy !== 'pick_first') {
    return [];
  }
  const entries = Array.isArray(config.methodConfig) ? config.methodConfig : [];
  const absent = !Array.isArray(config.loadBalancingConfig) || config.loadBalancingConfig.length === 0;
  const why = absent
    ? 'the config has no loadBalancingConfig, so grpc-js uses pick_first'
    : 'loadBalancingConfig is pick_first';
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
