/**
 * The warnings for hedging behind one connection: under grpc-js's default `pick_first` (no `loadBalancingConfig`,
 * or `pick_first` first), or under the replica-avoiding policy around `pick_first`, every attempt of a call goes to
 * the same server, so a hedge can never leave a slow replica. `check` warns of both; `createChannelOptions` of the
 * second. Pure: it reads the raw config.
 */
import { formatJsonPath, type JsonPath } from '../config/json-path.js';
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
  if (child !== undefined && !policyNames(child).some(isKnown)) {
    return []; // a child list naming no policy it knows is an error of the policy's config (the validator's)
  }
  const names = policyNames(child ?? config.loadBalancingConfig);
  const why =
    child !== undefined
      ? AROUND_PICK_FIRST
      : names.length === 0
        ? 'the config has no loadBalancingConfig, so grpc-js uses pick_first'
        : names.some(isKnown)
          ? 'loadBalancingConfig is pick_first'
          : 'loadBalancingConfig names no policy grpc-js knows, so grpc-js uses pick_first';
  // avoidTriedReplicas wraps the config's own list, so it helps only a config without one.
  const advice =
    child !== undefined
      ? `Name round_robin (or another policy that keeps every replica connected) as its childPolicy`
      : names.length === 0
        ? `Use round_robin, or createChannelOptions(config, { avoidTriedReplicas: true }) (policy ${AVOID_TRIED_REPLICAS_POLICY}) so that hedges go to replicas the call has not tried`
        : `Use round_robin (createChannelOptions(config, { avoidTriedReplicas: true }) runs ${AVOID_TRIED_REPLICAS_POLICY} around the config's own loadBalancingConfig, so it needs round_robin there too)`;
  return hedgingPaths(config.methodConfig).map((path) => ({
    path,
    message:
      `${why}, which sends every attempt of a call down one connection to one server: a hedge ` +
      `cannot leave a slow replica. ${advice}`,
  }));
}

const AROUND_PICK_FIRST = `${AVOID_TRIED_REPLICAS_POLICY} runs around pick_first (its childPolicy)`;

/**
 * `createChannelOptions`' warning, given the `loadBalancingConfig` it hands grpc-js (after `avoidTriedReplicas`
 * wrapped the config's own) and the config's `methodConfig`: when grpc-js will run the replica-avoiding policy
 * around `pick_first` and an entry has a `hedgingPolicy`, one message naming every such entry; else `undefined`.
 * (Hedging under plain `pick_first` is `check`'s to point out: the channel then runs what the config says.)
 * @internal
 */
export function hedgingAroundPickFirstWarning(
  loadBalancingConfig: unknown,
  methodConfig: unknown,
  isKnown: (name: string) => boolean,
): string | undefined {
  if (effectivePolicy(loadBalancingConfig, isKnown) !== AVOID_TRIED_REPLICAS_POLICY) {
    return undefined;
  }
  const child = avoidChildList(loadBalancingConfig, isKnown);
  const paths = hedgingPaths(methodConfig);
  if (child === undefined || effectivePolicy(child, isKnown) !== 'pick_first' || paths.length === 0) {
    return undefined;
  }
  return (
    `${paths.map(formatJsonPath).join(', ')}: in loadBalancingConfig ${AROUND_PICK_FIRST}, which sends every ` +
    'attempt of a call down one connection to one server: the policy has no other replica to send a hedge to. Name round_robin (or ' +
    'another policy that keeps every replica connected) as its childPolicy; with avoidTriedReplicas, which wraps ' +
    "the config's own loadBalancingConfig, put round_robin there instead of pick_first (or leave loadBalancingConfig " +
    'out: round_robin is then wrapped)'
  );
}

/**
 * The paths of the methodConfig entries that have a `hedgingPolicy` (null or undefined is none, as the parser reads
 * it).
 */
function hedgingPaths(methodConfig: unknown): JsonPath[] {
  const entries = Array.isArray(methodConfig) ? methodConfig : [];
  const paths: JsonPath[] = [];
  entries.forEach((entry: unknown, index) => {
    const policy =
      typeof entry === 'object' && entry !== null
        ? (entry as { hedgingPolicy?: unknown }).hedgingPolicy
        : undefined;
    if (policy !== undefined && policy !== null) {
      paths.push(['methodConfig', index, 'hedgingPolicy']);
    }
  });
  return paths;
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
