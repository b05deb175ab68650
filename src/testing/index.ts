/**
 * `grpc-retry-hedging/testing`: a scripted flaky gRPC server for end-to-end tests of retrying and hedging clients.
 */

export { FakeClock } from './fake-clock.js';
export {
  type AttemptScript,
  CALL_ID_METADATA_KEY,
  type RecordedAttempt,
  SCRIPT_METADATA_KEY,
} from './flaky-script.js';
export {
  ATTEMPT_METADATA_KEY,
  FLAKY_TEST_SERVICE,
  type FlakyAttemptInfo,
  type FlakyMethodName,
  FlakyServer,
  type FlakyServerOptions,
  flakyMethodPath,
  loadFlakyTestService,
  PREVIOUS_RPC_ATTEMPTS_METADATA_KEY,
  PUSHBACK_TRAILER_KEY,
  parseAttemptScriptsJson,
  validateAttemptScript,
  validateAttemptScripts,
} from './flaky-server.js';
export { flakyTestProtoPath } from './proto-path.js';
export { seededRandom } from './seeded-random.js';
