/**
 * Warnings about a valid config that `validateServiceConfig` and `check` both give (pure): an entry that names no
 * method, a `timeout` longer than a grpc-js server can time.
 */

import type { JsonPath } from './json-path.js';
import { isJsonObject, isPresent } from './service-config-rules.js';
import { LONGEST_CONFIG_TIMEOUT_MS } from './timer-limit.js';
import type { ServiceConfig } from './types.js';

/** The kinds of validator warnings. @internal */
export const CONFIG_WARNING_KINDS = [
  'unknown-field',
  'pattern-name',
  'duplicate-key',
  'ineffective-policy',
  'timeout-over-limit',
] as const;

/** What a validator warning is about, as `check --json` labels it. @internal */
export type ConfigWarningKind = (typeof CONFIG_WARNING_KINDS)[number];

/** A warning at the JSON path of the value it is about. @internal */
export interface ConfigWarning {
  readonly path: JsonPath;
  readonly message: string;
  readonly kind: ConfigWarningKind;
}

/** How an entry that names no method does nothing. */
const APPLIES_TO_NOTHING = 'this entry applies to nothing (name a service, or write [{}] for every method)';

/**
 * The warnings about each methodConfig entry of a valid config, in order.
 *
 * @param raw The config as written, to tell a missing `name` from an empty one.
 * @internal
 */
export function findConfigWarnings(config: ServiceConfig, raw: unknown): ConfigWarning[] {
  const written = isJsonObject(raw) && Array.isArray(raw.methodConfig) ? raw.methodConfig : [];
  return config.methodConfig.flatMap((entry, index) => {
    const found: ConfigWarning[] = [];
    if (entry.name.length === 0) {
      const rawEntry: unknown = written[index];
      const missing = !isJsonObject(rawEntry) || !isPresent(rawEntry.name);
      found.push({
        path: ['methodConfig', index, 'name'],
        message: missing
          ? `is missing, so the entry matches no call: ${APPLIES_TO_NOTHING}`
          : `is an empty list, which matches no call: ${APPLIES_TO_NOTHING}`,
        kind: 'ineffective-policy',
      });
    }
    if (entry.timeoutMs !== undefined && entry.timeoutMs > LONGEST_CONFIG_TIMEOUT_MS) {
      found.push({
        path: ['methodConfig', index, 'timeout'],
        message: `is longer than a grpc-js server can time (${LONGEST_CONFIG_TIMEOUT_MS} ms, about 24.8 days) and is held at that: calls under this entry time out after ${LONGEST_CONFIG_TIMEOUT_MS} ms, not ${entry.timeoutMs} ms`,
        kind: 'timeout-over-limit',
      });
    }
    return found;
  });
}
