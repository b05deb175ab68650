import type { status as Status } from '@grpc/grpc-js';
import type { Attempt } from './attempt.js';
import type { RetryingCallContext } from './call-context.js';
import { inTurn } from './event-loop-turn.js';
import type { AttemptCancelReason } from './events.js';
import { inAttemptStatus } from './status-callback.js';

/** Why an attempt was left running rather than cancelled, and its cap (when the call has no deadline). */
export interface LeftRunning {
  readonly reason: 'other-attempt-committed' | 'per-attempt-timeout';
  readonly capMs: number | undefined;
}

/**
 * End an attempt the call is done with: cancel it, or, when cancelling now would exceed the cancel-rate limit (each
 * cancel is an HTTP/2 RST_STREAM, and servers tear down connections that reset streams too fast), let it run to
 * completion with its responses read and dropped. Only a losing hedge or a timed-out attempt whose request was
 * fully sent may be left running. Such an attempt still ends at the call's deadline (grpc-js applies it to every
 * attempt), or after the limiter's cap when the call has none. Every other cancel of a started attempt (the
 * application's, the end of the call) goes at once, and is counted against the limit: it is a reset too.
 * @returns What was left running, or undefined when the attempt was cancelled.
 * @internal
 */
export function cancelOrLeaveRunning(
  attempt: Attempt,
  reason: AttemptCancelReason,
  code: Status,
  details: string,
  ctx: RetryingCallContext,
  deadline: number,
  /** The call's target, which names the connection whose limit counts the cancel (see `CancelLimits`). */
  target: string,
): LeftRunning | undefined {
  // The guard counts resets per connection: the limiter of the connection to the call's target (none: no limit).
  const limiter = ctx.cancelLimits?.forTarget(target);
  const limited =
    limiter !== undefined &&
    (reason === 'other-attempt-committed' || reason === 'per-attempt-timeout') &&
    attempt.halfCloseSent;
  if (limited && !limiter.tryCancel()) {
    attempt.state = 'left-running';
    // Why the call was done with it (its `attempt-end` says `leftRunning` too): it is no failure of its own.
    attempt.cancelReason = reason;
    // Cancelled as soon as the rate allows; until then it runs, and its status ends it as usual.
    attempt.withdrawCancel = limiter.whenAllowed?.(() => {
      attempt.withdrawCancel = undefined;
      if (attempt.state === 'left-running') {
        attempt.call.cancelWithStatus(code, details);
      }
    });
    const capped = !Number.isFinite(deadline);
    if (capped) {
      attempt.timer = ctx.clock.setTimer(() => {
        attempt.timer = undefined;
        if (attempt.state === 'left-running') {
          limiter.noteCancel?.();
          attempt.call.cancelWithStatus(code, details);
        }
      }, limiter.loserCapMs);
    }
    return { reason, capMs: capped ? limiter.loserCapMs : undefined };
  }
  if (!limited && attempt.started) {
    // Not the limiter's to refuse (the application cancelled, the call ended), but a reset all the same.
    limiter?.noteCancel?.();
  }
  attempt.state = 'cancelled';
  attempt.cancelReason = reason;
  if (inTurn(attempt.turn) || inAttemptStatus()) {
    // grpc-js has not made the call under this one yet: a cancel now would not reach it (event-loop-turn.ts). Or
    // another attempt's status is being handled, maybe from inside a connection's teardown, where a reset of
    // another stream never returns (status-callback.ts).
    setImmediate(() => attempt.call.cancelWithStatus(code, details));
  } else {
    attempt.call.cancelWithStatus(code, details);
  }
  return undefined;
}
