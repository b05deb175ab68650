/**
 * Service-config parsing, validation and policy lookup.
 */

export { MAX_DURATION_SECONDS, parseDuration } from './duration.js';
export { loadServiceConfig, loadServiceConfigAsync } from './load-service-config.js';
export { clampPolicy, createPolicyLookup, findMethodPolicy } from './method-policy.js';
export {
  isNormalizedServiceConfig,
  NORMALIZED_SERVICE_CONFIG,
  parseCallPolicy,
  parseServiceConfig,
} from './parse-service-config.js';
export type { ServiceConfigErrorOptions } from './service-config-error.js';
export { isServiceConfigError, ServiceConfigError } from './service-config-error.js';
export { parseStatusCode, statusCodeName } from './status-codes.js';
export type {
  CallPolicy,
  HedgingPolicy,
  MethodConfig,
  MethodName,
  MethodPolicyMatch,
  RetryPolicy,
  RetryThrottlingConfig,
  ServiceConfig,
} from './types.js';
export { DEFAULT_MAX_ATTEMPTS_LIMIT } from './types.js';
