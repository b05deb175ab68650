import { Metadata, status as Status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { engineStatus } from '../../src/retry/engine-statuses.js';

describe('the statuses the engine makes up', () => {
  it('name what happened, each with trailers of its own', () => {
    const last = { code: Status.UNAVAILABLE, details: 'down', metadata: new Metadata() };
    expect(
      [
        engineStatus.startFailed(2, new Error('channel closed')),
        engineStatus.startFailed(3, 'gone'),
        engineStatus.recvTimeout(50, 1),
        engineStatus.noHedgeSent(),
        engineStatus.deadlineExceeded(last),
        engineStatus.deadlineExceeded({ ...last, code: 99 as Status }),
        engineStatus.deadlineExceeded(last, 'hedging'),
        engineStatus.deadlineExceeded(last, 'retrying'),
        engineStatus.deadlineExceeded(undefined),
        engineStatus.internalError('no transition from a to b'),
        engineStatus.cancelled(Status.CANCELLED, 'by the caller'),
      ].map((s) => [s.code, s.details]),
    ).toEqual([
      [Status.UNAVAILABLE, 'could not start attempt 2: channel closed'],
      [Status.UNAVAILABLE, 'could not start attempt 3: gone'],
      [Status.DEADLINE_EXCEEDED, 'per-attempt receive timeout (50 ms) hit on attempt 1'],
      [Status.UNAVAILABLE, 'no hedge could be sent'],
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded while waiting to retry (last attempt: UNAVAILABLE down)'],
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded while waiting to retry (last attempt: 99 down)'],
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded while hedging (last attempt: UNAVAILABLE down)'],
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded while retrying (last failed attempt: UNAVAILABLE down)'],
      [Status.DEADLINE_EXCEEDED, 'Deadline exceeded'],
      [Status.INTERNAL, 'grpc-retry-hedging internal error: no transition from a to b'],
      [Status.CANCELLED, 'by the caller'],
    ]);
    const a = engineStatus.noHedgeSent();
    const b = engineStatus.noHedgeSent();
    expect(a.metadata).toBeInstanceOf(Metadata);
    expect(a.metadata).not.toBe(b.metadata);
  });
});
