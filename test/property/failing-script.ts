import { fc } from '@fast-check/vitest';
import * as grpc from '@grpc/grpc-js';
import { DETAILS, messageSize } from './conversation-script.js';
import { CALL_TYPES, type CallType, responseStreams } from './script-service.js';

/**
 * A call script for property 2: attempts that fail, before or after the response headers, with retryable or other
 * codes, under a retry or hedging policy; checked against an oracle of A6's rules (./retry-oracle.ts).
 */
export interface AttemptBehaviour {
  /** Fail with `code`, or (`ok`) answer OK. */
  readonly ok: boolean;
  readonly code: grpc.status;
  readonly details: string;
  /** Send response headers before failing: the call commits, and this failure is final. */
  readonly headersFirst: boolean;
  /**
   * Send response headers as soon as the attempt arrives, before waiting for the request: the call commits, and
   * the rest of the request (the half-close included) must reach this attempt after the commit.
   */
  readonly headersAtArrival: boolean;
  /** Streamed responses: send a message before failing (commits too). */
  readonly messageFirst: boolean;
  /** Act only once every request message (and the half-close, if the client makes one) has arrived. */
  readonly waitForAll: boolean;
  /** A slow answer. */
  readonly delayMs: number;
}

export interface FailingScript {
  readonly type: CallType;
  readonly policy: 'retry' | 'hedging';
  readonly maxAttempts: number;
  /** retryableStatusCodes, or nonFatalStatusCodes for hedging. */
  readonly codes: readonly grpc.status[];
  /** The single request of unary and server-streaming calls. */
  readonly request: number;
  /** Streamed requests: the messages the client writes, awaiting each write's callback or not. */
  readonly writes: readonly { readonly size: number; readonly awaitCallback: boolean }[];
  /** Streamed requests: the client half-closes after its writes. */
  readonly end: boolean;
  /** What the server does on attempt 1, 2, …; attempts past the list answer OK. */
  readonly attempts: readonly AttemptBehaviour[];
  /** A listener of the interceptor's events cancels the call on the nth event of this type (retry policy). */
  readonly cancelOn:
    | { readonly event: 'retry-scheduled' | 'attempt-start'; readonly nth: number }
    | undefined;
}

export const RETRYABLE_CANDIDATES = [
  grpc.status.UNAVAILABLE,
  grpc.status.ABORTED,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.INTERNAL,
] as const;

/** Failure codes: mostly the candidates (retryable or not, by the script's list), sometimes any other. */
const failureCode = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...RETRYABLE_CANDIDATES) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      grpc.status.CANCELLED,
      grpc.status.UNKNOWN,
      grpc.status.INVALID_ARGUMENT,
      grpc.status.DEADLINE_EXCEEDED,
      grpc.status.NOT_FOUND,
      grpc.status.PERMISSION_DENIED,
      grpc.status.UNIMPLEMENTED,
      grpc.status.DATA_LOSS,
    ),
  },
);

function weightedBoolean(trueWeight: number, falseWeight: number): fc.Arbitrary<boolean> {
  return fc.oneof(
    { weight: falseWeight, arbitrary: fc.constant(false) },
    { weight: trueWeight, arbitrary: fc.constant(true) },
  );
}

const attemptBehaviour: fc.Arbitrary<AttemptBehaviour> = fc.record({
  ok: weightedBoolean(1, 4),
  code: failureCode,
  details: fc.constantFrom(...DETAILS),
  // Commits are final: kept rarer, so that most scripts go on to later attempts.
  headersFirst: weightedBoolean(1, 3),
  headersAtArrival: weightedBoolean(1, 4),
  messageFirst: weightedBoolean(1, 3),
  waitForAll: fc.boolean(),
  delayMs: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) },
  ),
});

export function normalizeFailingScript(script: FailingScript): FailingScript {
  const streamedRequest = script.type === 'clientStream' || script.type === 'bidi';
  return {
    ...script,
    writes: streamedRequest ? script.writes : [],
    end: streamedRequest ? script.end : true,
    attempts: script.attempts.map((a) => ({
      ...a,
      headersFirst: a.ok ? false : a.headersFirst,
      messageFirst: a.ok || !responseStreams(script.type) ? false : a.messageFirst,
    })),
    cancelOn:
      script.policy === 'retry' && script.cancelOn
        ? {
            ...script.cancelOn,
            // The application holds the call object only once the client method returns, after attempt 1 started.
            nth:
              script.cancelOn.event === 'attempt-start'
                ? Math.max(2, script.cancelOn.nth)
                : script.cancelOn.nth,
          }
        : undefined,
  };
}

export function failingScript(type?: CallType): fc.Arbitrary<FailingScript> {
  return fc
    .record({
      type: type ? fc.constant(type) : fc.constantFrom(...CALL_TYPES),
      policy: fc.constantFrom('retry' as const, 'hedging' as const),
      maxAttempts: fc.integer({ min: 2, max: 5 }),
      codes: fc.subarray([...RETRYABLE_CANDIDATES], { minLength: 1 }),
      request: messageSize,
      writes: fc.array(fc.record({ size: messageSize, awaitCallback: fc.boolean() }), { maxLength: 6 }),
      end: weightedBoolean(3, 1),
      attempts: fc.array(attemptBehaviour, { minLength: 1, maxLength: 6 }),
      cancelOn: fc.option(
        fc.record({
          event: fc.constantFrom('retry-scheduled' as const, 'attempt-start' as const),
          nth: fc.oneof(
            { weight: 3, arbitrary: fc.constant(1) },
            { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) },
          ),
        }),
        { freq: 4 },
      ),
    })
    .map((s) => normalizeFailingScript({ ...s, cancelOn: s.cancelOn ?? undefined }));
}
