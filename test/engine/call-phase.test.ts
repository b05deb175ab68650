import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { type CallPhaseTag, endStatus, isLegalTransition } from '../../src/retry/call-phase.js';
import type { FinishReason } from '../../src/retry/retry-decision.js';

const PHASES: readonly CallPhaseTag[] = ['not-started', 'in-flight', 'waiting', 'committed', 'ended'];

describe('the call state machine: which phase may follow which', () => {
  // The diagram in call-phase.ts, as a table: from → the phases it may move to.
  const LEGAL: Record<CallPhaseTag, readonly CallPhaseTag[]> = {
    'not-started': ['in-flight', 'ended'],
    // A retry waits, a hedge or a retry moves on in flight, an attempt commits, a failure or a cancel ends it.
    'in-flight': ['in-flight', 'waiting', 'committed', 'ended'],
    // The timer sends the next attempt; a cancel or the deadline ends the call. Nothing commits while waiting.
    waiting: ['in-flight', 'ended'],
    committed: ['ended'],
    ended: [],
  };

  it.each(PHASES)('from %s', (from) => {
    const allowed = PHASES.filter((to) => isLegalTransition(from, to));
    expect(allowed).toEqual(LEGAL[from]);
  });
});

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
      expect(endStatus(failed, 'attempts-exhausted', cancelReason)).toBe(failed);
    }
  });

  it.each([
    ['deadline', 'the call deadline passed'],
    ['do-not-retry', 'the server said not to retry'],
    ['attempts-exhausted', 'no attempt left'],
    ['replay-buffer', 'the replay buffer is full'],
    ['deadline-aware', 'the next backoff would outlast the deadline'],
    ['throttled', 'the retry gate refused a retry'],
    ['fatal-status', 'its status is not retryable'],
  ] as const)('after a per-attempt timeout, also says why no further attempt went (%s)', (reason, why) => {
    const ended = endStatus(failed, reason as FinishReason, 'per-attempt-timeout');
    expect(ended.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(ended.details).toBe(`${failed.details}; ${why}`);
    expect(ended.metadata).toBe(failed.metadata);
  });
});
