import * as grpc from '@grpc/grpc-js';
import type { AttemptBehaviour, FailingScript } from './failing-script.js';
import { responseStreams } from './script-service.js';

/** What attempts past a script's list do: wait for the whole request, then answer OK. */
export const ANSWER_OK: AttemptBehaviour = {
  ok: true,
  code: grpc.status.OK,
  details: '',
  headersFirst: false,
  headersAtArrival: false,
  messageFirst: false,
  waitForAll: true,
  delayMs: 0,
};

export function behaviourOf(script: FailingScript, attempt: number): AttemptBehaviour {
  return script.attempts[attempt - 1] ?? ANSWER_OK;
}

/** What A6 says must happen to a failing script. */
export interface ExpectedOutcome {
  /** Attempts the server sees. */
  readonly attempts: number;
  /** The attempt whose answer is the call's (undefined when the call was cancelled). */
  readonly final: number | undefined;
  readonly code: grpc.status;
  /** Details of the status (undefined: not checked, for OK). */
  readonly details: string | undefined;
  /** Response messages the application receives, from the final attempt only (streamed responses). */
  readonly streamedResponses: number;
}

/** Whether the attempt commits the call before it fails: response headers or a message reached the client. */
export function commits(behaviour: AttemptBehaviour): boolean {
  return behaviour.headersFirst || behaviour.headersAtArrival || behaviour.messageFirst;
}

/**
 * The oracle: attempt k's failure ends the call when it came after headers (committed), when its code is not in
 * the policy's list, or when k is the last attempt allowed; otherwise attempt k+1 follows (after a backoff for
 * retries, at once for hedging's non-fatal codes). An OK ends the call. A cancel from an event listener ends it
 * with CANCELLED: on the nth retry-scheduled, after attempt n failed; on the nth attempt-start, before attempt n
 * reaches the server.
 */
export function expectedOutcome(script: FailingScript, maxAttemptsLimit = 5): ExpectedOutcome {
  const maxAttempts = Math.min(script.maxAttempts, maxAttemptsLimit);
  let retries = 0;
  for (let k = 1; ; k++) {
    if (script.cancelOn?.event === 'attempt-start' && script.cancelOn.nth === k) {
      return cancelled(k - 1);
    }
    const b = behaviourOf(script, k);
    if (b.ok) {
      return {
        attempts: k,
        final: k,
        code: grpc.status.OK,
        details: undefined,
        streamedResponses: responseStreams(script.type) ? 1 : 0,
      };
    }
    const retried = !commits(b) && script.codes.includes(b.code) && k < maxAttempts;
    if (!retried) {
      return {
        attempts: k,
        final: k,
        code: b.code,
        details: b.details,
        streamedResponses: b.messageFirst ? 1 : 0,
      };
    }
    retries++;
    if (
      script.policy === 'retry' &&
      script.cancelOn?.event === 'retry-scheduled' &&
      script.cancelOn.nth === retries
    ) {
      return cancelled(k);
    }
  }
}

function cancelled(attempts: number): ExpectedOutcome {
  return {
    attempts,
    final: undefined,
    code: grpc.status.CANCELLED,
    details: 'Cancelled on client',
    streamedResponses: 0,
  };
}
