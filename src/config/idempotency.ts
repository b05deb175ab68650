/**
 * Which methods a retry or hedging policy may safely send more than once, from the standard
 * `option idempotency_level` of their proto (google/protobuf/descriptor.proto `MethodOptions`).
 */

import { findMethodPolicy } from './method-policy.js';
import type { MethodName, ServiceConfig } from './types.js';

/** `MethodOptions.IdempotencyLevel` of descriptor.proto. */
export type IdempotencyLevel = 'IDEMPOTENCY_UNKNOWN' | 'NO_SIDE_EFFECTS' | 'IDEMPOTENT';

/** The levels by their enum number in descriptor.proto. */
const LEVEL_BY_NUMBER: readonly IdempotencyLevel[] = ['IDEMPOTENCY_UNKNOWN', 'NO_SIDE_EFFECTS', 'IDEMPOTENT'];

/**
 * An `idempotency_level` option value as a level: the enum name (what proto-loader and protobufjs give) or its
 * number; `undefined` for anything else. @internal
 */
export function parseIdempotencyLevel(value: unknown): IdempotencyLevel | undefined {
  if (typeof value === 'number') {
    return LEVEL_BY_NUMBER[value];
  }
  return typeof value === 'string' && (LEVEL_BY_NUMBER as readonly string[]).includes(value)
    ? (value as IdempotencyLevel)
    : undefined;
}

/**
 * The idempotency level of a method, from the options object that `@grpc/proto-loader` keeps on each method
 * definition (`{ idempotency_level: 'IDEMPOTENT', ... }`; the enum's number is accepted too).
 *
 * @param options A proto-loader `MethodDefinition.options` (or any object with `idempotency_level`), or nothing.
 * @returns The level; `IDEMPOTENCY_UNKNOWN` when the option is absent or unrecognized.
 */
export function methodIdempotency(options: Readonly<Record<string, unknown>> | undefined): IdempotencyLevel {
  return parseIdempotencyLevel(options?.idempotency_level) ?? 'IDEMPOTENCY_UNKNOWN';
}

/** Whether a method at this level may be sent twice: `IDEMPOTENT` or `NO_SIDE_EFFECTS`. */
export function isSafeToRepeat(level: IdempotencyLevel): boolean {
  return level === 'IDEMPOTENT' || level === 'NO_SIDE_EFFECTS';
}

/** A method of a proto, with its idempotency level. */
export interface ProtoMethod {
  /** Fully qualified service name, `pkg.Service`. */
  readonly service: string;
  readonly method: string;
  readonly idempotency: IdempotencyLevel;
}

/** A method that a retry or hedging policy covers although its proto does not mark it safe to repeat. */
export interface UnsafeRetriedMethod {
  readonly service: string;
  readonly method: string;
  readonly idempotency: IdempotencyLevel;
  readonly policy: 'retry' | 'hedging';
  /** Index of the methodConfig entry whose policy covers the method. */
  readonly methodConfigIndex: number;
  /** Index, in that entry's `name` list, of the name that matched. */
  readonly nameIndex: number;
}

/**
 * Every method that a `retryPolicy` or `hedgingPolicy` of `config` covers (by the usual lookup: exact name, then
 * service, then default) while its proto does not mark it `IDEMPOTENT` or `NO_SIDE_EFFECTS`. A config generated
 * from protos passes `check` cleanly when this is empty for its methods.
 *
 * @param config A config from `parseServiceConfig`.
 * @param methods The methods of the protos, e.g. from proto-loader definitions and {@link methodIdempotency}.
 * @returns The offending methods, in the order of `methods`.
 */
export function findUnsafeRetriedMethods(
  config: ServiceConfig,
  methods: readonly ProtoMethod[],
): UnsafeRetriedMethod[] {
  const found: UnsafeRetriedMethod[] = [];
  for (const { service, method, idempotency } of methods) {
    if (isSafeToRepeat(idempotency)) {
      continue;
    }
    const match = findMethodPolicy(config, `/${service}/${method}`);
    if (match === undefined) {
      continue;
    }
    const entry = config.methodConfig[match.methodConfigIndex];
    const nameIndex = entry?.name.findIndex((name) => matches(name, service, method, match.matchedBy)) ?? -1;
    found.push({
      service,
      method,
      idempotency,
      policy: match.policy.kind,
      methodConfigIndex: match.methodConfigIndex,
      nameIndex: Math.max(0, nameIndex),
    });
  }
  return found;
}

function matches(
  name: MethodName,
  service: string,
  method: string,
  matchedBy: 'method' | 'service' | 'default',
): boolean {
  if (matchedBy === 'default') {
    return name.service === undefined;
  }
  if (matchedBy === 'service') {
    return name.service === service && name.method === undefined;
  }
  return name.service === service && name.method === method;
}
