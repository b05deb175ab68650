/**
 * Service-config parsing, validation and policy lookup.
 */

export { loadServiceConfig, loadServiceConfigAsync } from './load-service-config.js';
export { findMethodPolicy } from './method-policy.js';
export { parseServiceConfig } from './parse-service-config.js';
export type { ServiceConfigErrorOptions, ServiceConfigIssue } from './service-config-error.js';
export { isServiceConfigError, ServiceConfigError } from './service-config-error.js';
export { statusCodeName } from './status-codes.js';
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
export { type ServiceConfigValidation, validateServiceConfig } from './validate-service-config.js';
