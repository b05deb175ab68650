/**
 * The brand that marks a config as already validated and normalized.
 */

import type { ServiceConfig } from './types.js';

/**
 * Brand on every config returned by `parseServiceConfig` (a non-enumerable property set to `true`), so that code
 * in any copy of this package can tell a normalized config from raw service-config JSON.
 */
export const NORMALIZED_SERVICE_CONFIG: unique symbol = Symbol.for(
  'grpc-retry-hedging.normalized-service-config',
);

/** Whether `value` was returned by `parseServiceConfig` (of this or another copy of the package). */
export function isNormalizedServiceConfig(value: unknown): value is ServiceConfig {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [NORMALIZED_SERVICE_CONFIG]?: unknown })[NORMALIZED_SERVICE_CONFIG] === true
  );
}

/** Brands and deeply freezes a freshly built config. @internal */
export function brandConfig(config: ServiceConfig): ServiceConfig {
  Object.defineProperty(config, NORMALIZED_SERVICE_CONFIG, { value: true, enumerable: false });
  return deepFreeze(config);
}

/** Freezes `value` and everything reachable from it. @internal */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) {
      deepFreeze(child);
    }
    Object.freeze(value);
  }
  return value;
}
