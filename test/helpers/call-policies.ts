/** Per-call policies in the interceptor's own form (`{ kind, ...Ms }`), and withRetryOptions as plain JS calls it. */
import type { CallPolicy } from '../../src/config/types.js';
import { readCallRetryOptions, withRetryOptions } from '../../src/retry/call-options.js';

export const RETRY = {
  kind: 'retry',
  maxAttempts: 3,
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  backoffMultiplier: 2,
  retryableStatusCodes: [14],
} as const;
export const HEDGING = {
  kind: 'hedging',
  maxAttempts: 3,
  hedgingDelayMs: 10,
  nonFatalStatusCodes: [14],
} as const;

/** withRetryOptions with a policy a plain-JS caller wrote (no type checks). */
export function withPolicy(policy: unknown) {
  return () => withRetryOptions({ policy: policy as CallPolicy });
}

/** The policy withRetryOptions keeps for `policy`. */
export function policyOf(policy: unknown): CallPolicy | undefined {
  return readCallRetryOptions(withRetryOptions({ policy: policy as CallPolicy }))?.policy;
}
