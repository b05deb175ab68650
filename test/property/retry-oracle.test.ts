import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { AttemptBehaviour, FailingScript } from './failing-script.js';
import { ANSWER_OK, expectedOutcome } from './retry-oracle.js';

// The oracle of property 2, on hand-written scripts: it must say what A6 says, or the property proves nothing.
const fail = (code: grpc.status, more: Partial<AttemptBehaviour> = {}): AttemptBehaviour => ({
  ...ANSWER_OK,
  ok: false,
  code,
  details: `failed with ${code}`,
  ...more,
});

function script(attempts: AttemptBehaviour[], more: Partial<FailingScript> = {}): FailingScript {
  return {
    type: 'bidi',
    policy: 'retry',
    maxAttempts: 3,
    codes: [grpc.status.UNAVAILABLE],
    request: 0,
    writes: [],
    end: true,
    attempts,
    cancelOn: undefined,
    ...more,
  };
}

const { UNAVAILABLE, INTERNAL, OK, CANCELLED } = grpc.status;

describe('the A6 oracle of property 2', () => {
  it('retries retryable failures before headers, then the answer of the next attempt is the result', () => {
    expect(expectedOutcome(script([fail(UNAVAILABLE), fail(UNAVAILABLE)]))).toMatchObject({
      attempts: 3,
      final: 3,
      code: OK,
    });
  });

  it('ends with the last failure when maxAttempts is used up', () => {
    const outcome = expectedOutcome(script([fail(UNAVAILABLE), fail(UNAVAILABLE), fail(UNAVAILABLE)]));
    expect(outcome).toMatchObject({ attempts: 3, final: 3, code: UNAVAILABLE, details: 'failed with 14' });
  });

  it('clamps maxAttempts to the limit (5)', () => {
    const failures = Array.from({ length: 6 }, () => fail(UNAVAILABLE));
    expect(expectedOutcome(script(failures, { maxAttempts: 9 }))).toMatchObject({
      attempts: 5,
      code: UNAVAILABLE,
    });
  });

  it('does not retry a code outside the list', () => {
    expect(expectedOutcome(script([fail(INTERNAL)]))).toMatchObject({
      attempts: 1,
      final: 1,
      code: INTERNAL,
    });
  });

  it('a failure after headers (or after a message) is final: the call committed', () => {
    expect(expectedOutcome(script([fail(UNAVAILABLE, { headersFirst: true })]))).toMatchObject({
      attempts: 1,
      code: UNAVAILABLE,
    });
    expect(expectedOutcome(script([fail(UNAVAILABLE, { messageFirst: true })]))).toMatchObject({
      attempts: 1,
      streamedResponses: 1,
    });
    expect(
      expectedOutcome(script([fail(UNAVAILABLE), fail(UNAVAILABLE, { headersAtArrival: true })])),
    ).toMatchObject({ attempts: 2, final: 2, code: UNAVAILABLE });
  });

  it('a cancel from a listener ends the call with CANCELLED where the event happens', () => {
    const failures = [fail(UNAVAILABLE), fail(UNAVAILABLE)];
    expect(
      expectedOutcome(script(failures, { cancelOn: { event: 'retry-scheduled', nth: 2 } })),
    ).toMatchObject({
      attempts: 2,
      final: undefined,
      code: CANCELLED,
    });
    expect(expectedOutcome(script(failures, { cancelOn: { event: 'attempt-start', nth: 2 } }))).toMatchObject(
      {
        attempts: 1,
        code: CANCELLED,
      },
    );
    // No second retry: the cancel never happens.
    expect(
      expectedOutcome(script([fail(UNAVAILABLE)], { cancelOn: { event: 'retry-scheduled', nth: 2 } })),
    ).toMatchObject({ attempts: 2, code: OK });
  });
});
