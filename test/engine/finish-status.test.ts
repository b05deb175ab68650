import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { type FinishReason, finishStatus } from '../../src/retry/retry-decision.js';

describe('the status of a call that a failure ends', () => {
  const failed: StatusObject = {
    code: Status.DEADLINE_EXCEEDED,
    details: 'per-attempt receive timeout (50 ms) hit on attempt 2',
    metadata: new Metadata(),
  };

  it("is the attempt's own status unless the attempt hit its per-attempt timeout", () => {
    for (const cancelReason of [
      undefined,
      'call-cancelled',
      'call-ended',
      'other-attempt-committed',
    ] as const) {
      expect(finishStatus(failed, 'attempts-exhausted', cancelReason)).toBe(failed);
    }
  });

  it.each([
    ['deadline', 'the call deadline passed'],
    ['do-not-retry', 'the server said not to retry'],
    ['attempts-exhausted', 'no attempt left'],
    ['replay-buffer', 'the replay buffer is full'],
    ['deadline-aware', 'the next backoff would outlast the deadline'],
    ['throttled', 'a retry was refused (by the retry gate or an adaptive throttle)'],
    ['fatal-status', 'its status is not retryable'],
    ['lb-drop', 'the load balancer dropped the call'],
    ['request-changed', 'a request message changed after it was written, so a resend would carry other data'],
    ['request-unserializable', 'a request message cannot be serialized'],
  ] as const)('after a per-attempt timeout, also says why no further attempt went (%s)', (reason, why) => {
    const ended = finishStatus(failed, reason as FinishReason, 'per-attempt-timeout');
    expect(ended.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(ended.details).toBe(`${failed.details}; ${why}`);
    expect(ended.metadata).toBe(failed.metadata);
  });
});
