/**
 * The warnings for hedging behind one connection: under grpc-js's default `pick_first` (no `loadBalancingConfig`,
 * or `pick_first` first), or under the replica-avoiding policy around `pick_first`, every attempt of a call goes to
 * the same server, so a hedge can never leave a slow replica. `check` warns of both; `createChannelOptions` of the
 * second. Pure: it reads the raw config.
 */
import { formatJsonPath, type JsonPath } from '../config/json-path.js';
import { effectivePolicy, policyNameOf, policyNames } from './lb-policy-names.js';
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
  const run = runPolicy(config.loadBalancingConfig, isKnown, 0);
  const top = run?.name ?? 'pick_first';
  // The avoiding policy only chooses among what its child hands out: around pick_first, that is one server.
  const child = top === AVOID_TRIED_REPLICAS_POLICY ? avoidChildList(run?.entry, isKnown) : undefined;
  if (child !== undefined ? effectivePolicy(child, isKnown) !== 'pick_first' : top !== 'pick_first') {
    return [];
  }
  if (child !== undefined && !policyNames(child).some(isKnown)) {
    return []; // a child list naming no policy it knows is an error of the policy's config (the validator's)
  }
  const names = policyNames(child ?? config.loadBalancingConfig);
  const skipped = child === undefined ? run?.skipped : undefined;
  const why =
    child !== undefined
      ? AROUND_PICK_FIRST
      : skipped !== undefined
        ? `loadBalancingConfig[${skipped.index}] (outlier_detection) ${skipped.why}, so grpc-js skips it and uses pick_first`
        : names.length === 0
          ? 'the config has no loadBalancingConfig, so grpc-js uses pick_first'
          : names.some(isKnown)
            ? 'loadBalancingConfig is pick_first'
            : 'loadBalancingConfig names no policy grpc-js knows, so grpc-js uses pick_first';
  // avoidTriedReplicas wraps the config's own list, so it helps only a config without one.
  const advice =
    child !== undefined
      ? `Name round_robin (or another policy that keeps every replica connected) as its childPolicy`
      : skipped !== undefined
        ? 'Give outlier_detection a child_policy of round_robin: [{"outlier_detection": {"child_policy": [{"round_robin": {}}]}}]'
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
 * child is then round_robin). Given one entry (not a list), that entry's.
 */
function avoidChildList(list: unknown, isKnown: (name: string) => boolean): unknown[] | undefined {
  for (const entry of Array.isArray(list) ? list : [list]) {
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

/** How deep {@link runPolicy} follows outlier_detection into its child_policy (grpc-js sets no bound). */
const MAX_WRAPPING_DEPTH = 8;

/** The entry grpc-js runs from a policy list, and the first outlier_detection entry it skipped before it. */
interface RunPolicy {
  readonly name: string;
  readonly entry: unknown;
  readonly skipped: { readonly index: number; readonly why: string } | undefined;
}

/**
 * The policy grpc-js builds from `list` (its `selectLbConfigFromList`): the first entry whose name it knows and
 * whose config it can parse; undefined when none (at the top, grpc-js then runs pick_first). Of the configs only
 * outlier_detection's child is read, as grpc-js reads it: it needs a `child_policy` list (not `childPolicy`) whose
 * own choice is not pick_first (grpc-js refuses outlier_detection over pick_first), else the entry is skipped, and
 * grpc-js says so only at debug level.
 */
function runPolicy(list: unknown, isKnown: (name: string) => boolean, depth: number): RunPolicy | undefined {
  if (!Array.isArray(list)) {
    return undefined;
  }
  let skipped: RunPolicy['skipped'];
  for (const [index, entry] of list.entries()) {
    const name = policyNameOf(entry);
    if (name === undefined || !isKnown(name)) {
      continue;
    }
    const why = name === 'outlier_detection' ? outlierDetectionRefusal(entry, isKnown, depth) : undefined;
    if (why === undefined) {
      return { name, entry, skipped };
    }
    skipped ??= { index, why };
  }
  return skipped === undefined ? undefined : { name: 'pick_first', entry: undefined, skipped };
}

/** Why grpc-js refuses an outlier_detection entry for its child policy; undefined when it does not. */
function outlierDetectionRefusal(
  entry: unknown,
  isKnown: (name: string) => boolean,
  depth: number,
): string | undefined {
  const body = (entry as Record<string, unknown>).outlier_detection;
  const options = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const children = options.child_policy;
  if (!Array.isArray(children)) {
    return Array.isArray(options.childPolicy)
      ? 'has no child_policy list (grpc-js reads child_policy, not childPolicy)'
      : 'has no child_policy list';
  }
  if (depth >= MAX_WRAPPING_DEPTH) {
    return undefined;
  }
  const child = runPolicy(children, isKnown, depth + 1);
  if (child === undefined || child.entry === undefined) {
    return 'has a child_policy naming no policy grpc-js can run';
  }
  return child.name === 'pick_first'
    ? 'has pick_first as its child_policy, which grpc-js refuses'
    : undefined;
}
