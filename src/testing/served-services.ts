/**
 * Which services the flaky server serves: the FlakyTest demo service, plus any the user hands it as .proto files
 * or as grpc-js service definitions (what @grpc/proto-loader, `grpc.loadPackageDefinition` or generated code give).
 */

import { dirname, resolve } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { errorMessage } from '../util/error-message.js';
import { didYouMean } from '../util/option-checks.js';
import { locateProtoFile, missingIncludeDir } from '../util/proto-files.js';
import { loadWithWarningsFolded } from '../util/proto-load-warnings.js';
import { withUnresolvedTypePlace } from '../util/unresolved-type-place.js';
import { fullNameOf, type MessageDescriptor, messageDescriptorIndex } from './message-descriptor-index.js';
import { serializeWithWellKnownValues } from './response-conversion.js';
import { type MessageFields, responseFieldsOf } from './response-fields.js';

/**
 * A service (or a set of services) to serve, in any of the shapes grpc-js code holds one:
 * - a `grpc.ServiceDefinition` (`GreeterService` of grpc-tools or ts-proto generated code, `Greeter.service`);
 * - a service client constructor (`grpc.loadPackageDefinition(def).helloworld.Greeter`, or generated `GreeterClient`);
 * - a proto-loader `PackageDefinition` or a `grpc.GrpcObject`: every service in it.
 */
export type FlakyServiceSource =
  | grpc.ServiceDefinition
  | { readonly service: grpc.ServiceDefinition }
  | protoLoader.PackageDefinition
  | grpc.GrpcObject;

/** One method the server serves. */
export interface ServedMethod {
  /** Full gRPC path, `/pkg.Service/Method`. */
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /**
   * The definition's response serializer, run on each response before it is sent (undefined: not checked), taking
   * Timestamps and Durations in their proto3 JSON form too (see response-conversion.ts).
   */
  readonly serialize?: ((message: unknown) => unknown) | undefined;
  /** The response message's fields, when the definition carries its descriptor (proto-loader's). */
  readonly response?: MessageFields | undefined;
  /** The request message's name and fields, when the definition carries its descriptor (proto-loader's). */
  readonly request?: RequestType | undefined;
}

/** A request message type: its name and its fields (as the loader names them) with their proto types. */
export interface RequestType {
  /** Full name (`pkg.GetOrderRequest`) when the descriptors tell it, else the message's own name. */
  readonly name: string;
  /** Field name → its proto type, `string`, `int32`, `SomeMessage`...; `repeated ` before it for a repeated field. */
  readonly fields: ReadonlyMap<string, string>;
}

/** Proto type of a field descriptor as proto-loader gives it (`TYPE_STRING`, or its number 9): `string`. */
function fieldTypeName(field: { type?: unknown; typeName?: unknown; label?: unknown }): string {
  const type =
    typeof field.typeName === 'string' && field.typeName !== ''
      ? field.typeName.replace(/^\./, '')
      : field.type === 9
        ? 'string'
        : typeof field.type === 'string'
          ? field.type.replace(/^TYPE_/, '').toLowerCase()
          : String(field.type);
  return field.label === 'LABEL_REPEATED' || field.label === 3 ? `repeated ${type}` : type;
}

/** The request message of a method definition, from proto-loader's `requestType` descriptor; else undefined. */
function requestTypeOf(method: unknown): RequestType | undefined {
  const requestType = (method as { requestType?: unknown }).requestType;
  if (typeof requestType !== 'object' || requestType === null) {
    return undefined;
  }
  const { type, fileDescriptorProtos } = requestType as { type?: unknown; fileDescriptorProtos?: unknown };
  if (typeof type !== 'object' || type === null) {
    return undefined;
  }
  const descriptor = type as MessageDescriptor;
  if (typeof descriptor.name !== 'string' || !Array.isArray(descriptor.field)) {
    return undefined;
  }
  const fields = new Map<string, string>();
  for (const field of descriptor.field as { name?: unknown; type?: unknown; label?: unknown }[]) {
    if (typeof field?.name === 'string') {
      fields.set(field.name, fieldTypeName(field));
    }
  }
  const index = messageDescriptorIndex(fileDescriptorProtos);
  const path = (method as { path?: unknown }).path;
  const service = typeof path === 'string' ? serviceOfPath(path) : '';
  const fullName =
    index === undefined
      ? undefined
      : fullNameOf(index, descriptor, service.slice(0, Math.max(0, service.lastIndexOf('.'))));
  return { name: fullName?.replace(/^\./, '') ?? descriptor.name, fields };
}

/** One service: its fully qualified name, its definition (for `addService`) and the key of each method in it. */
export interface ServedService {
  readonly name: string;
  readonly definition: grpc.ServiceDefinition;
  readonly methods: ReadonlyArray<{ readonly key: string; readonly method: ServedMethod }>;
}

/**
 * Loader options of `flaky_test.proto` and, by default, of protos given by path (camelCase fields, as clients of
 * FlakyTest expect; the `keepCase` option of the server loads the user's protos with the proto's own names).
 */
export const FLAKY_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

function isMethodDefinition(value: unknown): value is ServedMethod {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const m = value as Record<string, unknown>;
  return (
    typeof m.path === 'string' &&
    typeof m.requestStream === 'boolean' &&
    typeof m.responseStream === 'boolean'
  );
}

function isServiceDefinition(value: unknown): value is grpc.ServiceDefinition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const entries = Object.values(value);
  return entries.length > 0 && entries.every(isMethodDefinition);
}

/** `pkg.Service` of a method path `/pkg.Service/Method`. */
export function serviceOfPath(path: string): string {
  return path.slice(1, path.lastIndexOf('/'));
}

function toServed(definition: grpc.ServiceDefinition, where: string): ServedService {
  const methods = Object.entries(definition).map(([key, method]) => {
    const { path, requestStream, responseStream, responseSerialize } = method as grpc.MethodDefinition<
      unknown,
      unknown
    >;
    const response = responseFieldsOf(method);
    const served: ServedMethod = {
      path,
      requestStream,
      responseStream,
      serialize:
        typeof responseSerialize === 'function'
          ? serializeWithWellKnownValues(responseSerialize, response)
          : undefined,
      response,
      request: requestTypeOf(method),
    };
    return { key, method: served };
  });
  const names = new Set(methods.map(({ method }) => serviceOfPath(method.path)));
  if (names.size !== 1) {
    throw new TypeError(`FlakyServer: ${where} mixes methods of several services (${[...names].join(', ')})`);
  }
  return { name: [...names][0]!, definition, methods };
}

/**
 * Every service in `source` (see {@link FlakyServiceSource}), found by walking it.
 * @throws TypeError naming `where` when it holds no service, with `advice` on what to pass instead.
 */
export function servicesIn(
  source: unknown,
  where: string,
  advice = 'pass a grpc.ServiceDefinition, a service client constructor, a proto-loader PackageDefinition or a grpc.GrpcObject',
): ServedService[] {
  const found: ServedService[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown, depth: number): void => {
    if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) {
      return;
    }
    seen.add(value);
    if (typeof value === 'function') {
      const service = (value as { service?: unknown }).service;
      if (isServiceDefinition(service)) {
        found.push(toServed(service, where));
      }
      return;
    }
    if (isServiceDefinition(value)) {
      found.push(toServed(value, where));
      return;
    }
    const record = value as Record<string, unknown>;
    if (isServiceDefinition(record.service)) {
      found.push(toServed(record.service, where));
      return;
    }
    // A message or enum entry of a package definition ({ format, type, ... }) holds no service.
    if (Array.isArray(value) || 'format' in record || depth >= 16) {
      return;
    }
    for (const child of Object.values(record)) {
      walk(child, depth + 1);
    }
  };
  walk(source, 0);
  if (found.length === 0) {
    throw new TypeError(`FlakyServer: ${where} holds no service (${advice})`);
  }
  return found;
}

/**
 * The services of .proto files, loaded with @grpc/proto-loader. A file is looked for as given (relative to the
 * working directory), then in each of `includeDirs`, as protoc does; imports resolve against `includeDirs`, then
 * the file's own directory. Fields keep the proto's names with `keepCase`, else they are camelCase.
 * @throws Error naming the file when it cannot be found or parsed.
 */
export function servicesInProtos(
  files: readonly string[],
  includeDirs: readonly string[],
  keepCase = false,
): ServedService[] {
  const missing = missingIncludeDir(includeDirs);
  if (missing !== undefined) {
    throw new Error(`FlakyServer: include directory ${missing} does not exist or is not a directory`);
  }
  const services: ServedService[] = [];
  for (const file of files) {
    if (typeof file !== 'string' || file === '') {
      throw new TypeError('FlakyServer: option "proto" must be a .proto file path or an array of them');
    }
    const found = locateProtoFile(file, includeDirs);
    if ('problem' in found) {
      throw new Error(`FlakyServer: cannot read the proto file ${file}: ${found.problem}`);
    }
    const absolute = found.path;
    let definition: protoLoader.PackageDefinition;
    try {
      definition = loadWithWarningsFolded(
        () =>
          protoLoader.loadSync(absolute, {
            ...FLAKY_LOADER_OPTIONS,
            keepCase,
            includeDirs: [...includeDirs.map((dir) => resolve(dir)), dirname(absolute)],
          }),
        'add its directory to includeDirs, or with -I on the command line',
      );
    } catch (error) {
      const message = withUnresolvedTypePlace(errorMessage(error), absolute, includeDirs);
      throw new Error(`FlakyServer: cannot load the proto file ${file}: ${message}`);
    }
    services.push(
      ...servicesIn(
        definition,
        `proto file ${file}`,
        'give the .proto files that declare the services to serve; the files they import are loaded with them',
      ),
    );
  }
  return services;
}

/**
 * The served method a user's name designates: `pkg.Service/Method` or `/pkg.Service/Method`.
 * @throws TypeError naming the method, with the closest served one, when no service serves it.
 */
export function resolveMethodPath(name: string, served: ReadonlySet<string>, where: string): string {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(
      `FlakyServer.${where}: the method must be a name such as "helloworld.Greeter/SayHello"`,
    );
  }
  const path = name.startsWith('/') ? name : `/${name}`;
  if (!served.has(path)) {
    const known = [...served].map((p) => p.slice(1));
    const name = path.slice(1);
    // "Greeter/SayHello" for "helloworld.Greeter/SayHello": the package left out, too far apart for a misspelling.
    // Several services of that name (in other packages): each of them is meant as likely as the other.
    const qualified = known.filter((candidate) => candidate.endsWith(`.${name}`));
    // "SayHello" or "Greeter.SayHello": a method named without its service's path, too short for a misspelling.
    const named = name.includes('/')
      ? []
      : known.filter((candidate) => `.${candidate.replace(/\/(?=[^/]*$)/, '.')}`.endsWith(`.${name}`));
    const close = didYouMean(name, known);
    const hint =
      qualified.length === 1
        ? `; did you mean "${qualified[0]}" (with its package)?`
        : qualified.length > 1
          ? `; did you mean one of ${qualified.map((q) => JSON.stringify(q)).join(', ')}? (several served services have that name: give the package of the one meant)`
          : close === '' && named.length > 0
            ? `; did you mean ${named.map((n) => JSON.stringify(n)).join(' or ')}? (a method is named with its package and service, "pkg.Service/Method")`
            : close;
    throw new TypeError(
      `FlakyServer.${where}: no served method "${name}"${hint} (served: ${known.join(', ')})`,
    );
  }
  return path;
}
