/**
 * A copy of a normalized config handed in where service-config JSON is expected. `parseServiceConfig` marks what
 * it returns with a non-enumerable brand; a spread, `structuredClone` or JSON round trip drops the brand and keeps
 * the normalized shape (a `kind` on each policy, durations in ms), which reads as JSON with every duration missing.
 */

import type { JsonPath } from './json-path.js';
import { isJsonObject } from './service-config-rules.js';

/** The fields only a normalized policy has, by the policy field it sits under. */
const NORMALIZED_POLICY: Readonly<Record<string, { kind: string; msField: string }>> = {
  retryPolicy: { kind: 'retry', msField: 'initialBackoffMs' },
  hedgingPolicy: { kind: 'hedging', msField: 'hedgingDelayMs' },
};

/**
 * The path of the first policy in `root` that has the normalized shape (`kind: "retry"` with `initialBackoffMs`,
 * or `kind: "hedging"` with `hedgingDelayMs`), which no service config written as JSON has; undefined when none
 * does.
 */
export function findNormalizedPolicy(root: unknown): JsonPath | undefined {
  if (!isJsonObject(root) || !Array.isArray(root.methodConfig)) {
    return undefined;
  }
  for (const [index, entry] of root.methodConfig.entries()) {
    const field = normalizedPolicyField(entry);
    if (field !== undefined) {
      return ['methodConfig', index, field];
    }
  }
  return undefined;
}

/**
 * Which policy field of `entry` (a methodConfig entry, or a per-call `{ retryPolicy }` / `{ hedgingPolicy }`)
 * holds a policy in the normalized shape; undefined when none does.
 */
export function normalizedPolicyField(entry: unknown): 'retryPolicy' | 'hedgingPolicy' | undefined {
  if (!isJsonObject(entry)) {
    return undefined;
  }
  for (const [field, shape] of Object.entries(NORMALIZED_POLICY)) {
    const policy = entry[field];
    if (isJsonObject(policy) && policy.kind === shape.kind && typeof policy[shape.msField] === 'number') {
      return field as 'retryPolicy' | 'hedgingPolicy';
    }
  }
  return undefined;
}

/** The error for a policy {@link findNormalizedPolicy} found. */
export const COPIED_CONFIG_MESSAGE =
  'is in the form parseServiceConfig and loadServiceConfig return (a "kind" field, durations in ms), not service-config JSON: the config is most likely a copy of one they returned (a spread, structuredClone or JSON round trip), which loses the mark that says it was validated. Pass the returned config itself (it is deeply frozen, so it can be shared), or the service-config JSON as written';

/**
 * The error for a policy field holding a parsed policy where JSON is expected (`{ retryPolicy:
 * parsed.methodConfig[0].retryPolicy }`); `advice` says what the caller can pass instead.
 */
export function wrappedParsedPolicyMessage(advice: string): string {
  return `is a policy in the form parseServiceConfig and loadServiceConfig return (a "kind" field, durations in ms), not service-config JSON: ${advice}`;
}
