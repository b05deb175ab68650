import { type Metadata, status as Status } from '@grpc/grpc-js';
import { Attempt, type AttemptOwner, CANCEL_DETAILS } from './attempt.js';
import type { RetryingCallContext } from './call-context.js';
import type { CallEvents } from './call-events.js';
import { cancelOrLeaveRunning } from './cancel-attempt.js';
import type { AttemptCancelReason, AttemptKind } from './events.js';
import { feedAttempt } from './feed-attempt.js';
import type { InterceptingCallInterface } from './grpc-types.js';
import type { ReplayBuffer } from './replay-buffer.js';

/**
 * The attempts of one call: making and starting them, handing them the replay buffer and the half-close, their
 * per-attempt receive timers, cancelling them (or leaving them running under the cancel-rate limit), and which of
 * them has sent the most. It decides nothing: the call says when.
 * @internal
 */
export class AttemptSet {
  /** The attempts in flight that the call counts, in the order they started (the committed one stays here). */
  readonly live: Attempt[] = [];
  /** Attempts made so far, the first included. */
  count = 0;
  /** The newest attempt, for getPeer and getAuthContext before a commit. */
  newest: Attempt | undefined;

  constructor(
    private readonly owner: AttemptOwner,
    private readonly ctx: RetryingCallContext,
    private readonly replay: ReplayBuffer,
    /** The method has no request stream: the half-close goes right behind its one message. */
    private readonly singleRequest: boolean,
    /** The call's deadline (ms since the epoch): a loser left running without one is capped instead. */
    private readonly deadline: number,
    private readonly events: CallEvents | undefined,
  ) {}

  /** The next attempt, around a grpc-js call already made, counted live; {@link send} starts it. */
  add(kind: AttemptKind, call: InterceptingCallInterface, now: number): Attempt {
    this.count += 1;
    const attempt = new Attempt(this.owner, this.count, kind, call, now, this.replay.start);
    this.live.push(attempt);
    this.newest = attempt;
    return attempt;
  }

  /** Starts the attempt's call, then hands it what the application has sent, then asks to read if wanted. */
  send(attempt: Attempt, metadata: Metadata, halfClosed: boolean, readRequested: boolean): void {
    attempt.started = true;
    attempt.call.start(metadata, attempt);
    this.feed(attempt, halfClosed);
    if (readRequested && attempt.state === 'live') {
      attempt.call.startRead();
    }
  }

  /** Hands `attempt` its next message, or the half-close, if it may take one now. */
  feed(attempt: Attempt, halfClosed: boolean): void {
    feedAttempt(attempt, this.replay, halfClosed, this.singleRequest);
  }

  feedAll(halfClosed: boolean): void {
    const live = this.live;
    if (live.length === 1) {
      this.feed(live[0] as Attempt, halfClosed);
      return;
    }
    for (const attempt of live.slice()) {
      this.feed(attempt, halfClosed);
    }
  }

  /** Asks every started attempt for its next response (one not started yet reads when it starts). */
  startReads(): void {
    for (const attempt of this.live.slice()) {
      if (attempt.started) {
        attempt.call.startRead();
      }
    }
  }

  /** Runs `onTimeout` once `timeoutMs` pass without a response (stopped by {@link stopTimer}). */
  armRecvTimeout(attempt: Attempt, timeoutMs: number, onTimeout: () => void): void {
    attempt.timer = this.ctx.clock.setTimer(() => {
      attempt.timer = undefined;
      onTimeout();
    }, timeoutMs);
  }

  stopTimer(attempt: Attempt): void {
    if (attempt.timer === undefined) {
      return;
    }
    this.ctx.clock.clearTimer(attempt.timer);
    attempt.timer = undefined;
  }

  /** The attempt's status arrived: it is done. Returns what it was until now. */
  settle(attempt: Attempt): Attempt['state'] {
    const was = attempt.state;
    attempt.state = 'done';
    this.stopTimer(attempt);
    if (was === 'live') {
      this.remove(attempt);
    }
    return was;
  }

  /** Ends a live attempt the call is done with: cancels it, or leaves it running under the cancel-rate limit. */
  cancel(attempt: Attempt, reason: AttemptCancelReason, code?: Status, details?: string): void {
    if (attempt.state !== 'live') {
      return;
    }
    this.stopTimer(attempt);
    this.remove(attempt);
    const left = cancelOrLeaveRunning(
      attempt,
      reason,
      code ?? Status.CANCELLED,
      details ?? CANCEL_DETAILS[reason],
      this.ctx,
      this.deadline,
    );
    if (left !== undefined) {
      this.events?.attemptLeftRunning(attempt, left.reason, left.capMs);
    }
  }

  /** The call committed to `winner`: every other live attempt is cancelled (or left running). */
  cancelLosers(winner: Attempt): void {
    if (this.live.length === 1) {
      return;
    }
    for (const loser of this.live.slice()) {
      if (loser !== winner) {
        this.cancel(loser, 'other-attempt-committed');
      }
    }
  }

  /** The live attempt that has sent the most (A6: the one to keep when the replay buffer overflows). */
  mostAdvanced(): Attempt {
    let target = this.live[0] as Attempt;
    for (const attempt of this.live) {
      if (attempt.sent > target.sent) {
        target = attempt;
      }
    }
    return target;
  }

  private remove(attempt: Attempt): void {
    const index = this.live.indexOf(attempt);
    if (index >= 0) {
      this.live.splice(index, 1);
    }
  }
}
