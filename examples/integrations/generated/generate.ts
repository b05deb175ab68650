/**
 * Regenerates the committed client code of the ts-proto and protobuf-ts examples from protos/flaky_test.proto, with
 * the code generators from npm and no `protoc`: protobufjs (a dependency of this package) compiles the .proto into
 * a FileDescriptorProto, which is handed to each generator's protoc plugin as protoc would hand it (a
 * CodeGeneratorRequest on its standard input). test/integrations/generated-code.test.ts checks that the committed
 * files are what this produces.
 *
 * Run: node --import tsx examples/integrations/generated/generate.ts
 *
 * With protoc, the equivalent commands are:
 *   protoc --plugin=node_modules/.bin/protoc-gen-ts_proto --ts_proto_out=OUT \
 *     --ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,env=node -I protos protos/flaky_test.proto
 *   protoc --plugin=node_modules/.bin/protoc-gen-ts --ts_out=OUT --ts_opt=ts_nocheck -I protos protos/flaky_test.proto
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const PROTO = 'flaky_test.proto';

/** One generator: its plugin script, the parameter passed to it, and the folder (under generated/) it writes. */
interface Generator {
  plugin: string;
  parameter: string;
  outDir: string;
}

export const GENERATORS: readonly Generator[] = [
  {
    plugin: require.resolve('ts-proto/protoc-gen-ts_proto'),
    parameter: 'outputServices=grpc-js,esModuleInterop=true,env=node',
    outDir: 'ts-proto',
  },
  {
    plugin: require.resolve('@protobuf-ts/plugin/bin/protoc-gen-ts'),
    parameter: 'ts_nocheck',
    outDir: 'protobuf-ts',
  },
];

const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** protos/flaky_test.proto as protoc would describe it (field names as written, with their JSON names). */
function fileDescriptor(): Uint8Array {
  const root = new protobuf.Root();
  root.loadSync(fileURLToPath(new URL(`../../../protos/${PROTO}`, import.meta.url)), { keepCase: true });
  const file = (root.toDescriptor('proto3') as unknown as { file: Array<Record<string, unknown>> }).file[0]!;
  file.name = PROTO;
  for (const message of file.messageType as Array<{ field: Array<{ name: string; jsonName?: string }> }>) {
    for (const field of message.field) field.jsonName = camelCase(field.name);
  }
  const FileDescriptorProto = (descriptor as unknown as { FileDescriptorProto: protobuf.Type })
    .FileDescriptorProto;
  return FileDescriptorProto.encode(FileDescriptorProto.fromObject(file)).finish();
}

/** google.protobuf.compiler.CodeGeneratorRequest { file_to_generate = 1; parameter = 2; proto_file = 15 }. */
function codeGeneratorRequest(parameter: string): Uint8Array {
  const writer = protobuf.Writer.create();
  writer.uint32((1 << 3) | 2).string(PROTO);
  if (parameter) writer.uint32((2 << 3) | 2).string(parameter);
  writer.uint32((15 << 3) | 2).bytes(fileDescriptor());
  return writer.finish();
}

/** google.protobuf.compiler.CodeGeneratorResponse { error = 1; file = 15 { name = 1; content = 15 } }. */
function readCodeGeneratorResponse(bytes: Uint8Array, plugin: string): Map<string, string> {
  const files = new Map<string, string>();
  const reader = protobuf.Reader.create(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1) throw new Error(`${plugin}: ${reader.string()}`);
    if (tag >>> 3 !== 15) {
      reader.skipType(tag & 7);
      continue;
    }
    const file = protobuf.Reader.create(reader.bytes());
    let name = '';
    let content = '';
    while (file.pos < file.len) {
      const fileTag = file.uint32();
      if (fileTag >>> 3 === 1) name = file.string();
      else if (fileTag >>> 3 === 15) content = file.string();
      else file.skipType(fileTag & 7);
    }
    files.set(name, content);
  }
  return files;
}

/** Every generated file, by its path relative to examples/integrations/generated/. */
export function generate(): Map<string, string> {
  const out = new Map<string, string>();
  for (const { plugin, parameter, outDir } of GENERATORS) {
    const run = spawnSync(process.execPath, [plugin], { input: codeGeneratorRequest(parameter) });
    if (run.status !== 0) {
      throw new Error(`${plugin} exited with ${run.status}: ${run.stderr.toString()}`);
    }
    for (const [name, content] of readCodeGeneratorResponse(run.stdout, plugin)) {
      out.set(`${outDir}/${name}`, content);
    }
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, content] of generate()) {
    mkdirSync(dirname(join(here, path)), { recursive: true });
    writeFileSync(join(here, path), content);
    console.log(`wrote examples/integrations/generated/${path}`);
  }
}
