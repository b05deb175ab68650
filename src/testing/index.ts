/**
 * `grpc-retry-hedging/testing`: a scripted flaky gRPC server for end-to-end tests of retrying and hedging clients.
 */

export type { StatusCodeName } from '../config/service-config-json.js';
export {
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from './attempt-script-validation.js';
export { FakeClock } from './fake-clock.js';
export { type ClusterAttempt, FlakyCluster, type FlakyClusterOptions } from './flaky-cluster.js';
export {
  ATTEMPT_METADATA_KEY,
  type AttemptScript,
  type AttemptScriptInput,
  CALL_ID_METADATA_KEY,
  DEFAULT_REQUEST_ID_FIELD,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
} from './flaky-script.js';
export { FlakyServer } from './flaky-server.js';
export type { FlakyAttemptInfo, FlakyResponseInfo, FlakyServerOptions } from './flaky-server-options.js';
export {
  createFlakyTestClient,
  type FlakyBidiMethod,
  type FlakyClientStreamMethod,
  type FlakyServerStreamMethod,
  type FlakyTestCallback,
  type FlakyTestClient,
  type FlakyTestClientConstructor,
  type FlakyTestClientOptions,
  type FlakyTestRequest,
  type FlakyTestResponse,
  type FlakyUnaryMethod,
} from './flaky-test-client.js';
export {
  FLAKY_TEST_SERVICE,
  type FlakyMethodName,
  flakyMethodPath,
  loadFlakyTestService,
} from './flaky-test-service.js';
export { flakyTestProtoPath, greeterProtoPath } from './proto-path.js';
export type { ReplicaScript } from './replica-script.js';
export { seededRandom } from './seeded-random.js';
export type { FlakyServiceSource } from './served-services.js';
