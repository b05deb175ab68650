/**
 * grpc-js hands the same trailers object to every call that fails while its channel has no connection (one status per
 * picker, `TRANSIENT_FAILURE`). The attempt count the engine gives the caller goes on a copy: written into the
 * shared object, it reached the next call's first attempt, which took it for a retry layer below (a false
 * nested-retries warning) and showed the caller a count that was another call's.
 */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { retryOutcomeOf } from '../../src/retry/retry-outcome.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY as PREVIOUS } from '../../src/shared/headers.js';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

describe('engine: trailers grpc-js shares between failing calls', () => {
  it("are not written to: the attempt count is the caller's own, and the next call gives no nested-retries warning", () => {
    const warnings = captureWarnings();
    const shared = new Metadata();
    const policy = retryPolicy({ maxAttempts: 3 });

    const first = engineCall(policy);
    for (let i = 0; i < 3; i++) {
      first.attempt(i).status(Status.UNAVAILABLE, 'No connection established', shared);
      first.clock.runNext();
    }
    expect(first.status.code).toBe(Status.UNAVAILABLE);
    expect(first.status.metadata.get(PREVIOUS)).toEqual(['2']);
    expect(shared.get(PREVIOUS)).toEqual([]);

    const second = engineCall(policy);
    second.attempt(0).status(Status.UNAVAILABLE, 'No connection established', shared);
    expect(warnings.map((w) => w.code)).toEqual([]);
    second.clock.runNext();
    second.attempt(1).succeed();
    expect(second.status.code).toBe(Status.OK);
    expect(second.status.metadata.get(PREVIOUS)).toEqual(['1']);
  });

  it("keep no call's retry outcome: a later call that fails with them through no retry policy has none", () => {
    const shared = new Metadata();
    // UNAVAILABLE is not retryable here: the first attempt's status, shared trailers and all, is the call's.
    const first = engineCall(retryPolicy({ retryableStatusCodes: [Status.RESOURCE_EXHAUSTED] }));
    first.attempt(0).status(Status.UNAVAILABLE, 'No connection established', shared);
    expect(first.status.code).toBe(Status.UNAVAILABLE);
    expect(retryOutcomeOf(first.status)).toEqual({ attempts: 1, reason: 'fatal-status' });
    // A call with no policy (or through no interceptor) gets grpc-js's status as it is: the same trailers object.
    const bare = { code: Status.UNAVAILABLE, details: 'No connection established', metadata: shared };
    expect(retryOutcomeOf(bare)).toBeUndefined();
  });
});
