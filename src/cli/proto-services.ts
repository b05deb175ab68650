/**
 * Loading the services of .proto files for `check --proto`, with include paths as protoc takes them.
 */

import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import type { ProtoMethod } from '../config/idempotency.js';
import { listMethodIdempotency } from '../idempotency/idempotency-level.js';
import { errorMessage } from '../util/error-message.js';
import { loadWithWarningsFolded } from '../util/proto-load-warnings.js';

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
  const includeDirs = includePaths.map((dir) => resolve(dir));
  for (const dir of includePaths) {
    if (!existsSync(dir)) {
      throw new ProtoLoadError(`include path ${dir} does not exist`);
    }
  }
  const services = new Map<string, Set<string>>();
  const methods: ProtoMethod[] = [];
  for (const file of files) {
    const absolute = locateProto(file, includeDirs);
    const definition = withCapturedWarnings(file, () =>
      loadSync(absolute, {
        keepCase: true,
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
        includeDirs: [...includeDirs, dirname(absolute)],
      }),
    );
    collect(definition, services, methods);
  }
  return { services, methods };
}

function locateProto(file: string, includeDirs: readonly string[]): string {
  if (isAbsolute(file) || existsSync(file)) {
    if (!existsSync(file)) {
      throw new ProtoLoadError(`cannot read the proto file ${file}: no such file`);
    }
    return resolve(file);
  }
  for (const dir of includeDirs) {
    const candidate = join(dir, file);
    if (existsSync(candidate)) {
      return candidate;
    }
  }
  const where =
    includeDirs.length === 0 ? 'the working directory' : `the working directory or ${includeDirs.join(', ')}`;
  throw new ProtoLoadError(`cannot read the proto file ${file}: not found in ${where}`);
}

/** Runs `load` with process warnings captured; a failure becomes one ProtoLoadError naming them. */
function withCapturedWarnings<T>(file: string, load: () => T): T {
  try {
    return loadWithWarningsFolded(load, 'add its directory with -I');
  } catch (error) {
    throw new ProtoLoadError(`cannot load the proto file ${file}: ${errorMessage(error)}`);
  }
}

function collect(
  definition: PackageDefinition,
  services: Map<string, Set<string>>,
  methods: ProtoMethod[],
): void {
  for (const { service, method, level } of listMethodIdempotency(definition)) {
    const known = services.get(service) ?? new Set<string>();
    services.set(service, known);
    if (!known.has(method)) {
      known.add(method);
      methods.push({ service, method, idempotency: level });
    }
  }
}
