/**
 * `serviceConfigFromProtos`: a safe service config in one call, from what the protos say about each method
 * (`option idempotency_level`) and one policy per level.
 */
import { parseCallPolicy, parseServiceConfig } from '../config/parse-service-config.js';
import { describeValue, ServiceConfigError } from '../config/service-config-error.js';
import type {
  HedgingPolicyJson,
  MethodConfigJson,
  RetryPolicyJson,
  ServiceConfigJson,
} from '../config/service-config-json.js';
import { closestName } from '../util/closest-name.js';
import { warnOncePerMessage } from '../util/warn-once.js';
import {
  type IdempotencyLevel,
  methodsOf,
  type ProtoMethodIdempotency,
  type ProtoSource,
} from './idempotency-level.js';

/** What one idempotency level gets: a retry or a hedging policy, and optionally a timeout or waitForReady. */
export type LevelPolicy = (
  | { retryPolicy: RetryPolicyJson; hedgingPolicy?: never }
  | { hedgingPolicy: HedgingPolicyJson; retryPolicy?: never }
) & { timeout?: string; waitForReady?: boolean };

/** The policies of {@link serviceConfigFromProtos}, by idempotency level. `false` leaves those methods alone. */
export interface IdempotencyPolicies {
  /** Methods marked NO_SIDE_EFFECTS (reads). Default: the `idempotent` policy, since such methods are idempotent. */
  noSideEffects?: LevelPolicy | false | undefined;
  /** Methods marked IDEMPOTENT. Default: none. */
  idempotent?: LevelPolicy | false | undefined;
  /**
   * Methods not marked (IDEMPOTENCY_UNKNOWN). Default: none, which is what keeps the result free of `check`'s
   * idempotency warnings; a policy here retries methods the protos do not call safe.
   */
  unknown?: LevelPolicy | false | undefined;
  /** Copied to the result's `retryThrottling`. */
  retryThrottling?: { maxTokens: number; tokenRatio: number } | undefined;
  /** Only methods for which this returns true get a policy (default: every method of every service). */
  include?: ((method: ProtoMethodIdempotency) => boolean) | undefined;
}

/** A result that gives no method a policy, said once per process for each reason and protos. */
const warnNoPolicy = warnOncePerMessage('GRPC_RETRY_HEDGING_EMPTY_CONFIG');

const LEVEL_KEYS: ReadonlyArray<readonly [IdempotencyLevel, 'noSideEffects' | 'idempotent' | 'unknown']> = [
  ['NO_SIDE_EFFECTS', 'noSideEffects'],
  ['IDEMPOTENT', 'idempotent'],
  ['IDEMPOTENCY_UNKNOWN', 'unknown'],
];
const POLICY_KEYS: ReadonlySet<string> = new Set([
  'noSideEffects',
  'idempotent',
  'unknown',
  'retryThrottling',
  'include',
]);

/**
 * Builds a service config from loaded protos and a policy per idempotency level: one methodConfig entry per level,
 * naming each method of that level exactly (never a whole service, so a method added to the proto later gets no
 * policy until it is marked).
 *
 * ```ts
 * const definition = protoLoader.loadSync('catalog.proto');
 * const config = serviceConfigFromProtos(definition, {
 *   noSideEffects: { hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] } },
 *   idempotent: { retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s',
 *     backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } },
 * });
 * const client = new Catalog(address, credentials, { interceptors: [createRetryInterceptor(config)] });
 * ```
 *
 * @param source proto-loader's PackageDefinition, the GrpcObject `grpc.loadPackageDefinition` makes of it, one
 *   service's definition, or a protobufjs Root.
 * @returns Service-config JSON (also valid as text with `JSON.stringify`), already validated; with `round_robin` as
 *   its `loadBalancingConfig` when some method is hedged, so that hedges can reach another server.
 * @throws ServiceConfigError naming the bad field as `policies.<level>.…`; TypeError for an unknown key, a source
 *   that is not loaded protos (a file name, say), or protos that hold no service.
 */
export function serviceConfigFromProtos(
  source: ProtoSource,
  policies: IdempotencyPolicies,
): ServiceConfigJson & { methodConfig: MethodConfigJson[] } {
  if (typeof policies !== 'object' || policies === null || Array.isArray(policies)) {
    throw new TypeError(
      `serviceConfigFromProtos: policies must be an object (of policies by idempotency level), got ${describeValue(policies)}`,
    );
  }
  for (const key of Object.keys(policies)) {
    if (!POLICY_KEYS.has(key)) {
      const match = closestName(key, POLICY_KEYS);
      const hint = match === undefined ? '' : `; did you mean "${match}"?`;
      throw new TypeError(
        `serviceConfigFromProtos: policies.${key} is not an option${hint} (known: ${[...POLICY_KEYS].join(', ')})`,
      );
    }
  }
  if (policies.include !== undefined && typeof policies.include !== 'function') {
    throw new TypeError(
      `serviceConfigFromProtos: policies.include must be a function, got ${describeValue(policies.include)}`,
    );
  }
  const byLevel = new Map<IdempotencyLevel, LevelPolicy>();
  for (const [level, key] of LEVEL_KEYS) {
    const inherited = key === 'noSideEffects' && policies.noSideEffects === undefined;
    const policy = inherited ? policies.idempotent : policies[key];
    if (policy === undefined || policy === false) {
      continue;
    }
    const path = `policies.${inherited ? 'idempotent' : key}`;
    checkLevelPolicy(policy, path);
    byLevel.set(level, policy);
  }

  const found = methodsOf(source, 'serviceConfigFromProtos', 'so no method would get a policy');
  const methods = found.filter(policies.include ?? (() => true));
  const methodConfig: MethodConfigJson[] = [];
  for (const [level] of LEVEL_KEYS) {
    const policy = byLevel.get(level);
    if (policy === undefined) {
      continue;
    }
    const name = methods
      .filter((m) => m.level === level)
      .map((m) => ({ service: m.service, method: m.method }));
    if (name.length > 0) {
      methodConfig.push({ name, ...copyPolicy(policy) });
    }
  }
  if (methodConfig.length === 0) {
    warnNoPolicy(`grpc-retry-hedging: serviceConfigFromProtos: ${whyNoMethod(found, methods, byLevel)}`);
  }
  const config: ServiceConfigJson & { methodConfig: MethodConfigJson[] } = { methodConfig };
  const throttling: unknown = policies.retryThrottling;
  if (throttling !== undefined) {
    // Not spread blindly: a number, null or an array would become {} and read as "maxTokens: got nothing".
    if (typeof throttling !== 'object' || throttling === null || Array.isArray(throttling)) {
      throw new ServiceConfigError(
        'policies.retryThrottling',
        `must be an object, got ${describeValue(throttling)}`,
      );
    }
    config.retryThrottling = { ...(throttling as NonNullable<IdempotencyPolicies['retryThrottling']>) };
  }
  if (methodConfig.some((entry) => entry.hedgingPolicy !== undefined)) {
    // Hedges must be able to reach another server (docs/hedging-across-replicas.md).
    config.loadBalancingConfig = [{ round_robin: {} }];
  }
  try {
    parseServiceConfig(config);
  } catch (error) {
    // Only retryThrottling can still be wrong here; name it as the caller wrote it.
    if (error instanceof ServiceConfigError && error.path.startsWith('retryThrottling')) {
      throw new ServiceConfigError(`policies.${error.path}`, error.detail);
    }
    throw error;
  }
  return config;
}

/** Exactly one of retryPolicy and hedgingPolicy, valid, and nothing but the fields an entry may have. */
function checkLevelPolicy(policy: LevelPolicy, path: string): void {
  parseCallPolicy(policy, path, ['timeout', 'waitForReady']);
  // Validated in context: the whole entry goes through parseServiceConfig, which names the field.
  try {
    parseServiceConfig({ methodConfig: [{ name: [], ...policy }] });
  } catch (error) {
    if (error instanceof ServiceConfigError) {
      throw new ServiceConfigError(error.path.replace(/^methodConfig\[0\]/, path), error.detail);
    }
    throw error;
  }
}

/** A deep copy, so that the result can be edited without changing the caller's policies (or the other levels). */
function copyPolicy(policy: LevelPolicy): Omit<MethodConfigJson, 'name'> {
  return JSON.parse(JSON.stringify(policy)) as Omit<MethodConfigJson, 'name'>;
}

/**
 * Why no method got a policy, and what to do about it: no level has a policy, `include` left no method, or no
 * method is marked with a level that has one (the common case: most protos mark none).
 */
export function whyNoMethod(
  found: readonly ProtoMethodIdempotency[],
  included: readonly ProtoMethodIdempotency[],
  byLevel: ReadonlyMap<IdempotencyLevel, LevelPolicy>,
): string {
  const services = [...new Set(found.map((m) => m.service))];
  const shown = services.length <= 3 ? services.join(', ') : `${services.slice(0, 3).join(', ')}, …`;
  const of = `${found.length === 1 ? 'the 1 method' : `the ${found.length} methods`} of ${shown}`;
  if (byLevel.size === 0) {
    return `no method gets a policy, as no idempotency level has one: give policies.noSideEffects, policies.idempotent or policies.unknown a retryPolicy or hedgingPolicy`;
  }
  if (included.length === 0) {
    return `no method gets a policy: policies.include returned false for ${of}`;
  }
  const counts = new Map<IdempotencyLevel, number>();
  for (const m of included) {
    counts.set(m.level, (counts.get(m.level) ?? 0) + 1);
  }
  const marked = [...counts]
    .map(([level, n]) => `${n} ${level === 'IDEMPOTENCY_UNKNOWN' ? 'not marked' : `marked ${level}`}`)
    .join(', ');
  const advice = counts.has('IDEMPOTENCY_UNKNOWN')
    ? '. Mark the methods safe to repeat in the protos (option idempotency_level = IDEMPOTENT, or NO_SIDE_EFFECTS ' +
      'for reads), or give policies.unknown a policy for the methods not marked (a retried call may then run more ' +
      'than once on the server)'
    : '';
  return (
    `no method gets a policy: of ${included.length < found.length ? `the ${included.length} that policies.include kept of ${of}` : of}, ` +
    `${marked}, and only ${[...byLevel.keys()].join(' and ')} ${byLevel.size === 1 ? 'has' : 'have'} a policy${advice}`
  );
}
