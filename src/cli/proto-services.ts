/**
 * Loading the services of .proto files for `check --proto`, with include paths as protoc takes them.
 */

import { dirname, resolve } from 'node:path';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import type { ProtoMethod } from '../config/idempotency.js';
import { anyMethodsOf } from '../idempotency/idempotency-level.js';
import { errorMessage } from '../util/error-message.js';
import { locateProtoFile, missingIncludeDir } from '../util/proto-files.js';
import { loadWithWarningsFolded } from '../util/proto-load-warnings.js';
import { withUnresolvedTypePlace } from '../util/unresolved-type-place.js';

/** Services found in the protos: fully qualified name → method names. */
export type ProtoServices = ReadonlyMap<string, ReadonlySet<string>>;

/** Everything `check` needs from the protos. */
export interface LoadedProtos {
  readonly services: ProtoServices;
  readonly methods: readonly ProtoMethod[];
}

/** A proto that cannot be found, read or parsed; the message is one line naming the file. */
export class ProtoLoadError extends Error {
  override readonly name = 'ProtoLoadError';
}

/**
 * Loads every proto and collects its services and methods (with their idempotency level).
 *
 * A file is looked for as given (relative to the working directory), then in each include path, like protoc.
 * Imports are resolved against the include paths, then the file's own directory.
 *
 * @param files The .proto files.
 * @param includePaths Directories imports are resolved against (`-I`).
 * @throws ProtoLoadError when a file cannot be found or loaded. protobufjs's own warnings (such as "not found in any
 *   of the include paths") are folded into that message instead of being printed.
 */
export function loadProtos(files: readonly string[], includePaths: readonly string[]): LoadedProtos {
  const missing = missingIncludeDir(includePaths);
  if (missing !== undefined) {
    throw new ProtoLoadError(`include path ${missing} does not exist or is not a directory`);
  }
  const includeDirs = includePaths.map((dir) => resolve(dir));
  const services = new Map<string, Set<string>>();
  const methods: ProtoMethod[] = [];
  for (const file of files) {
    const absolute = locateProto(file, includeDirs);
    const definition = withCapturedWarnings(file, absolute, includeDirs, () =>
      loadSync(absolute, {
        keepCase: true,
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
        includeDirs: [...includeDirs, dirname(absolute)],
      }),
    );
    try {
      collect(definition, services, methods);
    } catch (error) {
      // A level protobufjs took but that names no level (`IDEMPOTNET`): the file's problem, said as a load error
      // is, without the library function's name the command's user never called.
      const message = errorMessage(error).replace(/^listMethodIdempotency: /, '');
      throw new ProtoLoadError(`cannot use the proto file ${file}: ${message}`);
    }
  }
  return { services, methods };
}

function locateProto(file: string, includeDirs: readonly string[]): string {
  const found = locateProtoFile(file, includeDirs);
  if ('problem' in found) {
    throw new ProtoLoadError(`cannot read the proto file ${file}: ${found.problem}`);
  }
  return found.path;
}

/**
 * Runs `load` with process warnings captured; a failure becomes one ProtoLoadError naming them, and the place of a
 * type that does not resolve.
 */
function withCapturedWarnings<T>(
  file: string,
  absolute: string,
  includeDirs: readonly string[],
  load: () => T,
): T {
  try {
    return loadWithWarningsFolded(load, 'add its directory with -I');
  } catch (error) {
    const message = withUnresolvedTypePlace(errorMessage(error), absolute, includeDirs);
    throw new ProtoLoadError(`cannot load the proto file ${file}: ${message}`);
  }
}

function collect(
  definition: PackageDefinition,
  services: Map<string, Set<string>>,
  methods: ProtoMethod[],
): void {
  // A file may hold messages only (imported by the others): no service is no error here.
  for (const { service, method, level } of anyMethodsOf(definition, 'listMethodIdempotency')) {
    const known = services.get(service) ?? new Set<string>();
    services.set(service, known);
    if (!known.has(method)) {
      known.add(method);
      methods.push({ service, method, idempotency: level });
    }
  }
}
