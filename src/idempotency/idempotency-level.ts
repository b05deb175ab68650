/**
 * Which methods of loaded protos are marked safe to retry or hedge: `option idempotency_level` of
 * `google.protobuf.MethodOptions` (NO_SIDE_EFFECTS, IDEMPOTENT, or IDEMPOTENCY_UNKNOWN when absent).
 */
import type { PackageDefinition } from '@grpc/proto-loader';
import { type IdempotencyLevel, parseIdempotencyLevel } from '../config/idempotency.js';

export type { IdempotencyLevel };

/** One method of a proto service with its idempotency level. */
export interface ProtoMethodIdempotency {
  /** Fully qualified service name, `package.Service`. */
  readonly service: string;
  /** Method name as written in the proto. */
  readonly method: string;
  /** gRPC path, `/package.Service/Method`. */
  readonly path: string;
  readonly level: IdempotencyLevel;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

/**
 * The parts of a protobufjs reflection object this module reads (a `Root`, `Namespace`, `Service` or `Type`), so
 * that any protobufjs 6 or 7 copy fits without importing it.
 */
export interface ProtobufjsReflectionObject {
  readonly fullName: string;
  readonly nestedArray?: readonly ProtobufjsReflectionObject[];
  readonly methodsArray?: readonly ProtobufjsMethod[];
}

/** The parts of a protobufjs `Method` this module reads. */
export interface ProtobufjsMethod {
  readonly name: string;
  readonly options?: Readonly<Record<string, unknown>>;
  readonly requestStream?: boolean;
  readonly responseStream?: boolean;
}

/**
 * Loaded protos: what `@grpc/proto-loader`'s `loadSync`/`load` return (a `PackageDefinition`, which keeps method
 * options), or a protobufjs `Root` (from `protobuf.loadSync`, or `Root.fromJSON`).
 */
export type ProtoSource = PackageDefinition | ProtobufjsReflectionObject;

/**
 * Lists every method of every service in `source` with its idempotency level, services and methods in the order
 * the source holds them.
 *
 * @throws TypeError when `source` is neither a PackageDefinition nor a protobufjs namespace, or a method holds an
 *   idempotency level that is not one of the three.
 */
export function listMethodIdempotency(source: ProtoSource): ProtoMethodIdempotency[] {
  if (isProtobufjsObject(source)) {
    const out: ProtoMethodIdempotency[] = [];
    collectProtobufjs(source, out);
    return out;
  }
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new TypeError(
      'listMethodIdempotency: expected a @grpc/proto-loader PackageDefinition or a protobufjs Root',
    );
  }
  return fromPackageDefinition(source as PackageDefinition);
}

function isProtobufjsObject(value: unknown): value is ProtobufjsReflectionObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { fullName?: unknown }).fullName === 'string' &&
    Array.isArray((value as { nestedArray?: unknown }).nestedArray)
  );
}

function fromPackageDefinition(definition: PackageDefinition): ProtoMethodIdempotency[] {
  const out: ProtoMethodIdempotency[] = [];
  for (const [service, value] of Object.entries(definition)) {
    if (typeof value !== 'object' || value === null || 'format' in value) {
      continue; // a message or enum type
    }
    for (const method of Object.values(value)) {
      if (typeof method !== 'object' || method === null || typeof method.path !== 'string') {
        continue;
      }
      const name = method.path.slice(method.path.lastIndexOf('/') + 1);
      out.push({
        service,
        method: name,
        path: method.path,
        level: readLevel(method.options?.idempotency_level, `${service}/${name}`),
        requestStream: method.requestStream === true,
        responseStream: method.responseStream === true,
      });
    }
  }
  return out;
}

function collectProtobufjs(object: ProtobufjsReflectionObject, out: ProtoMethodIdempotency[]): void {
  if (object.methodsArray !== undefined) {
    const service = object.fullName.replace(/^\./, '');
    for (const method of object.methodsArray) {
      out.push({
        service,
        method: method.name,
        path: `/${service}/${method.name}`,
        level: readLevel(method.options?.idempotency_level, `${service}/${method.name}`),
        requestStream: method.requestStream === true,
        responseStream: method.responseStream === true,
      });
    }
  }
  for (const nested of object.nestedArray ?? []) {
    collectProtobufjs(nested, out);
  }
}

/** proto-loader gives the enum name (whatever its `enums` option); protobufjs gives what the proto wrote. */
function readLevel(value: unknown, where: string): IdempotencyLevel {
  if (value === undefined || value === null) {
    return 'IDEMPOTENCY_UNKNOWN';
  }
  const level = parseIdempotencyLevel(value);
  if (level === undefined) {
    throw new TypeError(
      `listMethodIdempotency: ${where} has idempotency_level ${JSON.stringify(value)}, expected one of IDEMPOTENCY_UNKNOWN, NO_SIDE_EFFECTS, IDEMPOTENT`,
    );
  }
  return level;
}
