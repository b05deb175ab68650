/**
 * Finding the policy a call runs under: the most specific `methodConfig` name wins and its whole entry is used.
 */

import { wrongTypeHint } from '../util/wrong-type-hint.js';
import { isNormalizedServiceConfig } from './normalized-config.js';
import { parseServiceConfig } from './parse-service-config.js';
import { describeValue } from './service-config-error.js';
import type { ServiceConfigJson } from './service-config-json.js';
import type {
  CallPolicy,
  HedgingPolicy,
  MethodConfig,
  MethodPolicyMatch,
  RetryPolicy,
  ServiceConfig,
} from './types.js';
import { DEFAULT_MAX_ATTEMPTS_LIMIT } from './types.js';

/**
 * What the interceptor applies to a call of one method: the matched entry's policy (maxAttempts clamped),
 * timeout and waitForReady. @internal
 */
export interface ResolvedMethodConfig {
  readonly methodConfigIndex: number;
  /** The entry's policy with maxAttempts clamped, or `undefined` for an entry without a policy. */
  readonly policy: CallPolicy | undefined;
  readonly timeoutMs: number | undefined;
  readonly waitForReady: boolean | undefined;
}

type IndexedEntry = ResolvedMethodConfig;

/** Per-config index of names: exact `service/method`, whole service, and the default `{}`. */
interface NameIndex {
  readonly byMethod: ReadonlyMap<string, IndexedEntry>;
  readonly byService: ReadonlyMap<string, IndexedEntry>;
  readonly byDefault: IndexedEntry | undefined;
}

/** Cache bound for {@link createMethodConfigLookup}: method paths come from stubs, so this is only a safety net. */
const MAX_CACHED_PATHS = 10_000;

/** Indexes built by {@link findMethodPolicy}, per config and limit. Parsed configs are frozen, so this is safe. */
const indexCache = new WeakMap<ServiceConfig, Map<number, NameIndex>>();

/**
 * Looks up the policy for a grpc-js method path such as `/pkg.Service/Method`.
 *
 * Precedence: an exact `{service, method}` name, then `{service}`, then the default `{}`. The whole matched entry
 * is used; nothing is merged from less specific entries, so a matched entry without a policy shadows them and the
 * result is `undefined`.
 *
 * @param config A config from `parseServiceConfig` (any other object is validated by it first, so a copy of a parsed
 *   config, which has lost the mark that says it was validated, is refused as everywhere else).
 * @param methodPath The grpc-js method path (`/pkg.Service/Method`; the leading slash is optional).
 * @param maxAttemptsLimit Client-side cap on maxAttempts (A6 default 5); an integer >= 1.
 * @returns The clamped policy and where it came from, or `undefined` when no policy applies.
 * @throws ServiceConfigError for a config `parseServiceConfig` rejects; TypeError when `config` is not an object,
 *   `methodPath` not a string or `maxAttemptsLimit` not a number; RangeError when `maxAttemptsLimit` is a number but
 *   not an integer >= 1.
 */
export function findMethodPolicy(
  config: ServiceConfig | ServiceConfigJson,
  methodPath: string,
  maxAttemptsLimit: number = DEFAULT_MAX_ATTEMPTS_LIMIT,
): MethodPolicyMatch | undefined {
  if (typeof config !== 'object' || config === null) {
    const advice =
      typeof config === 'string'
        ? ': parse the JSON text once with parseServiceConfig and pass what it returns'
        : '';
    throw new TypeError(
      `findMethodPolicy: config must be a config from parseServiceConfig or loadServiceConfig, got ${describeValue(config)}${advice}`,
    );
  }
  if (typeof methodPath !== 'string') {
    throw new TypeError(
      `findMethodPolicy: methodPath must be a method path such as "/pkg.Service/Method", got ${describeValue(methodPath)}`,
    );
  }
  if (typeof maxAttemptsLimit !== 'number' || !Number.isInteger(maxAttemptsLimit) || maxAttemptsLimit < 1) {
    const message = `findMethodPolicy: maxAttemptsLimit must be an integer >= 1, got ${describeValue(maxAttemptsLimit)}${wrongTypeHint(maxAttemptsLimit, 'number')}`;
    throw typeof maxAttemptsLimit === 'number' ? new RangeError(message) : new TypeError(message);
  }
  // As createRetryInterceptor does: a config parseServiceConfig did not return is validated (and a copy refused).
  const parsed = isNormalizedServiceConfig(config) ? config : parsedOnce(config);
  const index = cachedNameIndex(parsed, maxAttemptsLimit);
  const { service, method } = splitMethodPath(methodPath);
  const exact = service !== undefined ? index.byMethod.get(methodKey(service, method)) : undefined;
  if (exact !== undefined) {
    return toMatch(exact, 'method');
  }
  const byService = service !== undefined ? index.byService.get(service) : undefined;
  if (byService !== undefined) {
    return toMatch(byService, 'service');
  }
  return index.byDefault === undefined ? undefined : toMatch(index.byDefault, 'default');
}

/**
 * The interceptor's lookup: the same index and precedence as {@link findMethodPolicy}, with every path's answer
 * cached (hits and misses), so that a call costs one Map get. @internal
 */
export function createMethodConfigLookup(
  config: ServiceConfig,
  maxAttemptsLimit: number = DEFAULT_MAX_ATTEMPTS_LIMIT,
): (methodPath: string) => ResolvedMethodConfig | undefined {
  checkMaxAttemptsLimit(maxAttemptsLimit);
  const index = cachedNameIndex(config, maxAttemptsLimit);
  const cache = new Map<string, ResolvedMethodConfig | undefined>();
  return (methodPath: string): ResolvedMethodConfig | undefined => {
    const cached = cache.get(methodPath);
    if (cached !== undefined || cache.has(methodPath)) {
      return cached;
    }
    const entry = resolveEntry(index, methodPath);
    if (cache.size < MAX_CACHED_PATHS) {
      cache.set(methodPath, entry);
    }
    return entry;
  };
}

/**
 * Clamps a policy's maxAttempts to the client limit; returns the same object when no clamping is needed.
 *
 * @throws RangeError when `maxAttemptsLimit` is not an integer >= 1.
 */
export function clampPolicy(policy: RetryPolicy, maxAttemptsLimit: number): RetryPolicy;
export function clampPolicy(policy: HedgingPolicy, maxAttemptsLimit: number): HedgingPolicy;
export function clampPolicy(policy: CallPolicy, maxAttemptsLimit: number): CallPolicy;
export function clampPolicy(policy: CallPolicy, maxAttemptsLimit: number): CallPolicy {
  checkMaxAttemptsLimit(maxAttemptsLimit);
  if (policy.maxAttempts <= maxAttemptsLimit) {
    return policy;
  }
  return Object.freeze({ ...policy, maxAttempts: maxAttemptsLimit });
}

/**
 * The entry a call of `methodPath` runs under, policy or not, and how specific the name that matched it is (the
 * precedence of {@link findMethodPolicy}); undefined when none matches. @internal
 */
export function matchedEntry(
  config: ServiceConfig,
  methodPath: string,
): Pick<MethodPolicyMatch, 'methodConfigIndex' | 'matchedBy'> | undefined {
  const index = cachedNameIndex(config, DEFAULT_MAX_ATTEMPTS_LIMIT);
  const { service, method } = splitMethodPath(methodPath);
  const exact = service !== undefined ? index.byMethod.get(methodKey(service, method)) : undefined;
  if (exact !== undefined) {
    return { methodConfigIndex: exact.methodConfigIndex, matchedBy: 'method' };
  }
  const byService = service !== undefined ? index.byService.get(service) : undefined;
  if (byService !== undefined) {
    return { methodConfigIndex: byService.methodConfigIndex, matchedBy: 'service' };
  }
  return index.byDefault === undefined
    ? undefined
    : { methodConfigIndex: index.byDefault.methodConfigIndex, matchedBy: 'default' };
}

function resolveEntry(index: NameIndex, methodPath: string): ResolvedMethodConfig | undefined {
  const { service, method } = splitMethodPath(methodPath);
  if (service !== undefined) {
    const entry = index.byMethod.get(methodKey(service, method)) ?? index.byService.get(service);
    if (entry !== undefined) {
      return entry;
    }
  }
  return index.byDefault;
}

function checkMaxAttemptsLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`maxAttemptsLimit must be an integer >= 1, got ${String(limit)}`);
  }
}

function cachedNameIndex(config: ServiceConfig, maxAttemptsLimit: number): NameIndex {
  if (!Object.isFrozen(config)) {
    return buildNameIndex(config, maxAttemptsLimit);
  }
  let byLimit = indexCache.get(config);
  if (byLimit === undefined) {
    byLimit = new Map();
    indexCache.set(config, byLimit);
  }
  let index = byLimit.get(maxAttemptsLimit);
  if (index === undefined) {
    index = buildNameIndex(config, maxAttemptsLimit);
    byLimit.set(maxAttemptsLimit, index);
  }
  return index;
}

function buildNameIndex(config: ServiceConfig, maxAttemptsLimit: number): NameIndex {
  const byMethod = new Map<string, IndexedEntry>();
  const byService = new Map<string, IndexedEntry>();
  let byDefault: IndexedEntry | undefined;
  config.methodConfig.forEach((entry, methodConfigIndex) => {
    const policy = entryPolicy(entry);
    const indexed: IndexedEntry = {
      methodConfigIndex,
      policy: policy === undefined ? undefined : clampPolicy(policy, maxAttemptsLimit),
      timeoutMs: entry.timeoutMs,
      waitForReady: entry.waitForReady,
    };
    for (const name of entry.name) {
      if (name.service === undefined) {
        byDefault ??= indexed;
      } else if (name.method === undefined) {
        setIfAbsent(byService, name.service, indexed);
      } else {
        setIfAbsent(byMethod, methodKey(name.service, name.method), indexed);
      }
    }
  });
  return { byMethod, byService, byDefault };
}

/** Parsed configs never repeat a name; for hand-built ones the first entry wins. */
function setIfAbsent(map: Map<string, IndexedEntry>, key: string, value: IndexedEntry): void {
  if (!map.has(key)) {
    map.set(key, value);
  }
}

function entryPolicy(entry: MethodConfig): CallPolicy | undefined {
  return entry.retryPolicy ?? entry.hedgingPolicy;
}

function methodKey(service: string, method: string): string {
  return `${service}/${method}`;
}

/** `/pkg.Service/Method` → its parts; a path without a `service/method` shape only matches the default. */
function splitMethodPath(methodPath: string): { service: string | undefined; method: string } {
  const path = methodPath.startsWith('/') ? methodPath.slice(1) : methodPath;
  const slash = path.lastIndexOf('/');
  if (slash <= 0 || slash === path.length - 1) {
    return { service: undefined, method: '' };
  }
  return { service: path.slice(0, slash), method: path.slice(slash + 1) };
}

function toMatch(
  entry: IndexedEntry,
  matchedBy: MethodPolicyMatch['matchedBy'],
): MethodPolicyMatch | undefined {
  if (entry.policy === undefined) {
    return undefined;
  }
  return {
    policy: entry.policy,
    methodConfigIndex: entry.methodConfigIndex,
    matchedBy,
    ...(entry.timeoutMs !== undefined ? { timeoutMs: entry.timeoutMs } : {}),
    ...(entry.waitForReady !== undefined ? { waitForReady: entry.waitForReady } : {}),
  };
}

/** Service-config JSON handed to findMethodPolicy, parsed once per object (it is looked up again for each method). */
const parsedJson = new WeakMap<object, ServiceConfig>();

function parsedOnce(config: object): ServiceConfig {
  let parsed = parsedJson.get(config);
  if (parsed === undefined) {
    parsed = parseServiceConfig(config as ServiceConfig);
    parsedJson.set(config, parsed);
  }
  return parsed;
}
