/**
 * Loading the flaky test service from the packaged `protos/flaky_test.proto`, and its names.
 */

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { describeValue, didYouMean } from '../util/option-checks.js';
import type { FlakyTestClientConstructor } from './flaky-test-client.js';
import { flakyTestProtoPath } from './proto-path.js';
import { FLAKY_LOADER_OPTIONS } from './served-services.js';

/** Fully qualified name of the flaky test service. */
export const FLAKY_TEST_SERVICE = 'grpc_retry_hedging.testing.v1.FlakyTest';
/** Fully qualified name of the request message of every flaky test method. */
export const FLAKY_TEST_REQUEST = 'grpc_retry_hedging.testing.v1.TestRequest';

/** The methods of the flaky test service. */
export type FlakyMethodName = 'Unary' | 'ServerStream' | 'ClientStream' | 'Bidi';

const FLAKY_METHOD_NAMES: readonly FlakyMethodName[] = ['Unary', 'ServerStream', 'ClientStream', 'Bidi'];

/**
 * Full gRPC path of a flaky test method, e.g. `/grpc_retry_hedging.testing.v1.FlakyTest/Unary`. A name the
 * service does not have is a TypeError listing the ones it has.
 */
export function flakyMethodPath(name: FlakyMethodName): string {
  if (!(FLAKY_METHOD_NAMES as readonly unknown[]).includes(name)) {
    throw new TypeError(
      `flakyMethodPath: ${FLAKY_TEST_SERVICE} has no method ${describeValue(name)}${typeof name === 'string' ? didYouMean(name, FLAKY_METHOD_NAMES) : ''} (its methods: ${FLAKY_METHOD_NAMES.join(', ')})`,
    );
  }
  return `/${FLAKY_TEST_SERVICE}/${name}`;
}

let cachedPackageDefinition: protoLoader.PackageDefinition | undefined;
let cachedServiceClient: FlakyTestClientConstructor | undefined;

/** The package definition of `flaky_test.proto`, loaded once. */
function flakyPackageDefinition(): protoLoader.PackageDefinition {
  if (cachedPackageDefinition === undefined) {
    cachedPackageDefinition = protoLoader.loadSync(flakyTestProtoPath(), FLAKY_LOADER_OPTIONS);
  }
  return cachedPackageDefinition;
}

/**
 * The grpc-js client constructor of the FlakyTest service, loaded from the packaged `protos/flaky_test.proto`
 * with @grpc/proto-loader (camelCase field names: `messagesReceived`, `requestId`). Loaded once and cached.
 * Its clients are typed ({@link FlakyTestClient}); {@link createFlakyTestClient} makes one in a single call.
 *
 * @example
 * const FlakyTest = loadFlakyTestService();
 * const client = new FlakyTest(server.address, grpc.credentials.createInsecure(), { interceptors: [...] });
 * client.Unary({ payload: 'hi' }, (error, response) => console.log(response?.attempt));
 */
export function loadFlakyTestService(): FlakyTestClientConstructor {
  if (cachedServiceClient === undefined) {
    let node: ReturnType<typeof grpc.loadPackageDefinition>[string] = grpc.loadPackageDefinition(
      flakyPackageDefinition(),
    );
    for (const segment of FLAKY_TEST_SERVICE.split('.')) {
      if (typeof node !== 'object' || node === null || !(segment in node)) {
        throw new Error(`grpc-retry-hedging: ${FLAKY_TEST_SERVICE} not found in ${flakyTestProtoPath()}`);
      }
      node = (node as grpc.GrpcObject)[segment]!;
    }
    if (typeof node !== 'function') {
      throw new Error(`grpc-retry-hedging: ${FLAKY_TEST_SERVICE} is not a service`);
    }
    // The proto declares exactly the methods FlakyTestClient types; the flaky-test-client test checks it.
    cachedServiceClient = node as unknown as FlakyTestClientConstructor;
  }
  return cachedServiceClient;
}

/**
 * Names of the `string` fields of the request message, as the loader delivers them (camelCase: `payload`,
 * `requestId`). Used to check the server's `requestIdField` option against the proto itself.
 */
export function flakyRequestStringFields(): readonly string[] {
  const definition = flakyPackageDefinition()[FLAKY_TEST_REQUEST];
  const fields = (definition as { type?: { field?: unknown } } | undefined)?.type?.field;
  if (!Array.isArray(fields)) {
    throw new Error(`grpc-retry-hedging: ${FLAKY_TEST_REQUEST} not found in ${flakyTestProtoPath()}`);
  }
  return fields
    .filter(
      (f: { type?: unknown; label?: unknown }) => f.type === 'TYPE_STRING' && f.label !== 'LABEL_REPEATED',
    )
    .map((f: { name: string }) => f.name);
}
