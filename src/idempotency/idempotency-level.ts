/**
 * Which methods of loaded protos are marked safe to retry or hedge: `option idempotency_level` of
 * `google.protobuf.MethodOptions` (NO_SIDE_EFFECTS, IDEMPOTENT, or IDEMPOTENCY_UNKNOWN when absent).
 */
import type { PackageDefinition } from '@grpc/proto-loader';
import { type IdempotencyLevel, parseIdempotencyLevel } from '../config/idempotency.js';
import { instanceClassName, isThenable } from '../util/option-checks.js';

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
  readonly nestedArray?: readonly ProtobufjsReflectionObject[] | undefined;
  readonly methodsArray?: readonly ProtobufjsMethod[] | undefined;
}

/** The parts of a protobufjs `Method` this module reads. */
export interface ProtobufjsMethod {
  readonly name: string;
  readonly options?: Readonly<Record<string, unknown>> | undefined;
  readonly requestStream?: boolean | undefined;
  readonly responseStream?: boolean | undefined;
}

/**
 * Loaded protos: what `@grpc/proto-loader`'s `loadSync`/`load` return (a `PackageDefinition`, which keeps method
 * options), what `grpc.loadPackageDefinition` makes of it (a `GrpcObject`, whose client constructors keep the
 * definitions), one service's client constructor or definition, or a protobufjs `Root` (from `protobuf.loadSync`,
 * or `Root.fromJSON`).
 */
export type ProtoSource =
  | PackageDefinition
  | GrpcObjectSource
  | ClientConstructorSource
  | ProtobufjsReflectionObject;

/** A grpc-js client constructor (`grpc.loadPackageDefinition(definition).pkg.Service`): its definition is `.service`. */
export interface ClientConstructorSource {
  readonly service: object;
}

/**
 * The shape of a `GrpcObject` this module reads: namespaces nesting client constructors, each with its service's
 * definition on `.service`. Typed loosely so that any grpc-js version's `GrpcObject` fits without importing it.
 */
export interface GrpcObjectSource {
  readonly [name: string]: unknown;
}

/**
 * Lists every method of every service in `source` with its idempotency level, services and methods in the order
 * the source holds them.
 *
 * @throws TypeError when `source` is not loaded protos (a file name, a Promise, a client instance, say), holds no
 *   service, or a method holds an idempotency level that is not one of the three.
 */
export function listMethodIdempotency(source: ProtoSource): ProtoMethodIdempotency[] {
  return methodsOf(source, 'listMethodIdempotency');
}

/**
 * {@link listMethodIdempotency}, its errors naming `caller` (the public function the user called): what the
 * source holds must be a service or more, as anything else (a Promise, `{}`, a client) holds none.
 * @param noService What it means that there is none, for the error (`so no method would get a policy`).
 */
export function methodsOf(source: unknown, caller: string, noService?: string): ProtoMethodIdempotency[] {
  const found = anyMethodsOf(source, caller);
  if (found.length === 0) {
    throw new TypeError(
      `${caller}: the loaded protos hold no service${noService === undefined ? '' : `, ${noService}`} (pass the PackageDefinition of the files that declare the services)`,
    );
  }
  return found;
}

/**
 * The methods of `source`, none when it holds no service (a file of messages only, as the CLI loads each file).
 * @internal
 */
export function anyMethodsOf(source: unknown, caller: string): ProtoMethodIdempotency[] {
  // (A `then` that is a client constructor is a service named `then`, in protos without a package.)
  if (isThenable(source) && (source.then as { service?: unknown }).service === undefined) {
    throw new TypeError(
      `${caller}: expected loaded protos, got a Promise; await protoLoader.load(...) first, or use protoLoader.loadSync(...)`,
    );
  }
  if (isGrpcClient(source)) {
    throw new TypeError(
      `${caller}: expected loaded protos, got a grpc-js client (of ${clientServiceName(source)}); pass its class (the service's client constructor) or the PackageDefinition it was made from`,
    );
  }
  if (isProtobufjsObject(source)) {
    const out: ProtoMethodIdempotency[] = [];
    collectProtobufjs(source, out, caller);
    return out;
  }
  if (typeof source === 'string') {
    throw new TypeError(
      `${caller}: expected loaded protos, got the string ${JSON.stringify(source)}; load the file first: ${caller}(protoLoader.loadSync(${JSON.stringify(source)}), ...) with protoLoader from @grpc/proto-loader`,
    );
  }
  const service = typeof source === 'function' ? (source as { service?: unknown }).service : undefined;
  if (isServiceDefinition(service)) {
    // A client constructor (grpc.loadPackageDefinition(...).pkg.Service, or makeGenericClientConstructor's).
    const out: ProtoMethodIdempotency[] = [];
    addService(service, out, caller);
    return out;
  }
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new TypeError(
      `${caller}: expected loaded protos (a @grpc/proto-loader PackageDefinition, a GrpcObject from grpc.loadPackageDefinition, or a protobufjs Root), got ${describe(source)}`,
    );
  }
  const out: ProtoMethodIdempotency[] = [];
  collectDefinitions(source as Record<string, unknown>, out, caller, new Set());
  return out;
}

/** A grpc-js client instance (its methods are on its prototype, its definition on its class). */
function isGrpcClient(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v.getChannel === 'function' &&
    typeof v.waitForReady === 'function' &&
    typeof v.close === 'function'
  );
}

/** The service a client instance calls (`Catalog`), as its class names it, or its class's name. */
function clientServiceName(client: object): string {
  const serviceName = (client.constructor as { serviceName?: unknown } | undefined)?.serviceName;
  return typeof serviceName === 'string'
    ? `the service ${serviceName}`
    : (instanceClassName(client) ?? 'a service');
}

function describe(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  return Array.isArray(value) ? 'an array' : typeof value;
}

function isProtobufjsObject(value: unknown): value is ProtobufjsReflectionObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { fullName?: unknown }).fullName === 'string' &&
    Array.isArray((value as { nestedArray?: unknown }).nestedArray)
  );
}

interface MethodDefinitionLike {
  readonly path: string;
  readonly requestStream?: unknown;
  readonly responseStream?: unknown;
  readonly options?: { readonly idempotency_level?: unknown } | null;
}

function isMethodDefinition(value: unknown): value is MethodDefinitionLike {
  return (
    typeof value === 'object' && value !== null && typeof (value as { path?: unknown }).path === 'string'
  );
}

/** A service's definition: an object of method definitions (each with its gRPC `path`). */
function isServiceDefinition(value: unknown): value is Record<string, MethodDefinitionLike> {
  if (typeof value !== 'object' || value === null || 'format' in value) {
    return false; // 'format': a message or enum type of a PackageDefinition
  }
  const methods = Object.values(value);
  return methods.length > 0 && methods.every(isMethodDefinition);
}

/**
 * Services found in a PackageDefinition (keyed by full service name), in one service's definition, or in a
 * GrpcObject (namespaces of client constructors, each carrying its definition on `.service`).
 */
function collectDefinitions(
  object: Readonly<Record<string, unknown>>,
  out: ProtoMethodIdempotency[],
  caller: string,
  seen: Set<unknown>,
): void {
  if (seen.has(object)) {
    return;
  }
  seen.add(object);
  if (isServiceDefinition(object)) {
    addService(object, out, caller);
    return;
  }
  for (const value of Object.values(object)) {
    const service = typeof value === 'function' ? (value as { service?: unknown }).service : value;
    if (isServiceDefinition(service)) {
      addService(service, out, caller);
    } else if (typeof value === 'object' && value !== null && !('format' in value)) {
      collectDefinitions(value as Record<string, unknown>, out, caller, seen);
    }
  }
}

function addService(
  definition: Readonly<Record<string, MethodDefinitionLike>>,
  out: ProtoMethodIdempotency[],
  caller: string,
): void {
  for (const method of Object.values(definition)) {
    const slash = method.path.lastIndexOf('/');
    const service = method.path.slice(method.path.startsWith('/') ? 1 : 0, slash);
    const name = method.path.slice(slash + 1);
    if (out.some((known) => known.path === method.path)) {
      continue; // grpc-js's clients also list a method under its camelCase alias
    }
    out.push({
      service,
      method: name,
      path: method.path,
      level: readLevel(method.options?.idempotency_level, `${service}/${name}`, caller),
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
    });
  }
}

function collectProtobufjs(
  object: ProtobufjsReflectionObject,
  out: ProtoMethodIdempotency[],
  caller: string,
): void {
  if (object.methodsArray !== undefined) {
    const service = object.fullName.replace(/^\./, '');
    for (const method of object.methodsArray) {
      out.push({
        service,
        method: method.name,
        path: `/${service}/${method.name}`,
        level: readLevel(method.options?.idempotency_level, `${service}/${method.name}`, caller),
        requestStream: method.requestStream === true,
        responseStream: method.responseStream === true,
      });
    }
  }
  for (const nested of object.nestedArray ?? []) {
    collectProtobufjs(nested, out, caller);
  }
}

/** proto-loader gives the enum name (whatever its `enums` option); protobufjs gives what the proto wrote. */
function readLevel(value: unknown, where: string, caller: string): IdempotencyLevel {
  if (value === undefined || value === null) {
    return 'IDEMPOTENCY_UNKNOWN';
  }
  const level = parseIdempotencyLevel(value);
  if (level === undefined) {
    throw new TypeError(
      `${caller}: ${where} has idempotency_level ${JSON.stringify(value)}, expected one of IDEMPOTENCY_UNKNOWN, NO_SIDE_EFFECTS, IDEMPOTENT`,
    );
  }
  return level;
}
