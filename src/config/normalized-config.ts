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

/**
 * What a normalized config keeps of its source, under a registered symbol (non-enumerable, so that the config
 * reads and serializes as before): the service config as written, for `createChannelOptions` (which needs the
 * fields the retry parser drops), and the likely mistakes found in it, for `createRetryInterceptor` to report.
 */
const CONFIG_SOURCE = Symbol.for('grpc-retry-hedging.service-config-source');

/** The source a normalized config was parsed from. @internal */
export interface ConfigSource {
  /** The JSON value as written (a copy: the caller's object is not kept). */
  readonly raw: unknown;
  /** Why an object given as the config could not be copied as JSON (`raw` is then undefined): a cycle, a BigInt. */
  readonly notJson?: string;
  /** What most likely does not say what its author meant (see `likelyConfigMistakes`). */
  readonly mistakes: readonly string[];
}

/** Brands and deeply freezes a freshly built config, keeping what it was parsed from. @internal */
export function brandConfig(config: ServiceConfig, source?: ConfigSource): ServiceConfig {
  Object.defineProperty(config, NORMALIZED_SERVICE_CONFIG, { value: true, enumerable: false });
  if (source !== undefined) {
    // Shallowly frozen: the raw JSON is this package's own copy, and may nest deeper than a recursive freeze goes.
    Object.defineProperty(config, CONFIG_SOURCE, { value: Object.freeze(source), enumerable: false });
  }
  return deepFreeze(config);
}

/** The source of a normalized config, when it was parsed by a copy of this package that keeps one. @internal */
export function configSourceOf(config: ServiceConfig): ConfigSource | undefined {
  return (config as ServiceConfig & { [CONFIG_SOURCE]?: ConfigSource })[CONFIG_SOURCE];
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
