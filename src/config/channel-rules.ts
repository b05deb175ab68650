/**
 * The rules of the service-config fields that become channel options (`loadBalancingConfig`, message size limits):
 * `createChannelOptions` throws on the first problem they find, the validator reports every one (pure).
 */

import type { JsonPath } from './json-path.js';
import { describeValue } from './service-config-error.js';
import type { ConfigProblem } from './service-config-rules.js';

/** The two spellings of each message size limit of a methodConfig entry. */
export interface LimitSpelling {
  /** Standard service-config name (proto `max_request_message_bytes`). */
  readonly standard: 'maxRequestMessageBytes' | 'maxResponseMessageBytes';
  /** The name grpc-js's own service-config parser reads (and then ignores). */
  readonly grpcJs: 'maxRequestBytes' | 'maxResponseBytes';
}

export const LIMIT_SPELLINGS: readonly LimitSpelling[] = [
  { standard: 'maxRequestMessageBytes', grpcJs: 'maxRequestBytes' },
  { standard: 'maxResponseMessageBytes', grpcJs: 'maxResponseBytes' },
];

/**
 * A limit as written: a non-negative safe integer, or a decimal string of one (UInt32Value in proto3 JSON);
 * `undefined` when absent (or `null`), `NaN` when it is neither.
 */
export function messageLimit(value: unknown): number | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    return value;
  }
  if (typeof value === 'string' && /^\d+$/.test(value) && Number.isSafeInteger(Number(value))) {
    return Number(value);
  }
  return Number.NaN;
}

/**
 * The problems of one methodConfig entry's message size limits, in either spelling: a value that is not a
 * non-negative integer, or two spellings that disagree.
 *
 * @param path The entry's path.
 */
export function findMessageLimitProblems(
  entry: Readonly<Record<string, unknown>>,
  path: JsonPath,
  spellings: readonly LimitSpelling[] = LIMIT_SPELLINGS,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const field of spellings) {
    const standard = messageLimit(entry[field.standard]);
    const grpcJs = messageLimit(entry[field.grpcJs]);
    for (const [key, limit] of [
      [field.standard, standard],
      [field.grpcJs, grpcJs],
    ] as const) {
      if (Number.isNaN(limit)) {
        const value = entry[key];
        const tooLarge =
          (typeof value === 'number' && Number.isInteger(value) && value > 0) ||
          (typeof value === 'string' && /^\d+$/.test(value))
            ? ` (larger than ${Number.MAX_SAFE_INTEGER}, which no message is)`
            : '';
        problems.push({
          path: [...path, key],
          message: `must be a non-negative integer (a number or a decimal string), got ${describeValue(value)}${tooLarge}`,
        });
      }
    }
    if (
      standard !== undefined &&
      grpcJs !== undefined &&
      !Number.isNaN(standard) &&
      !Number.isNaN(grpcJs) &&
      standard !== grpcJs
    ) {
      problems.push({
        path: [...path, field.grpcJs],
        message: `is ${grpcJs} but ${field.standard} says ${standard}; give one limit`,
      });
    }
  }
  return problems;
}

/**
 * The problems of a `loadBalancingConfig` that grpc-js rejects (at client construction): anything but an array of
 * objects that each name one policy. Absent and `null` are fine.
 */
export function findLoadBalancingConfigProblems(value: unknown): ConfigProblem[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value)) {
    const hint = typeof value === 'string' && value !== '' ? `; write [{${JSON.stringify(value)}: {}}]` : '';
    return [
      {
        path: ['loadBalancingConfig'],
        message: `must be an array of {"policy_name": {...}} objects, got ${describeValue(value)}${hint}`,
      },
    ];
  }
  const problems: ConfigProblem[] = [];
  value.forEach((item: unknown, index) => {
    const path = ['loadBalancingConfig', index];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push({ path, message: `must be an object naming one policy, got ${describeValue(item)}` });
      return;
    }
    const keys = Object.keys(item);
    if (keys.length !== 1) {
      problems.push({
        path,
        message: `must name exactly one load-balancing policy, got ${keys.length === 0 ? 'none' : keys.join(', ')} (write one {"policy_name": {...}} object per policy, in order of preference)`,
      });
    }
  });
  return problems;
}
