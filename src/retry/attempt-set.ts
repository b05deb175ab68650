import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { replicaAvoidanceInUse, TriedReplicas } from '../lb/tried-replicas.js';
import type { InterceptingCallInterface } from '../shared/grpc-types.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';
import { Attempt, type AttemptOwner, CANCEL_DETAILS, writtenBy } from './attempt.js';
import type { RetryingCallContext } from './call-context.js';
import type { CallEvents } from './call-events.js';
import { cancelOrLeaveRunning } from './cancel-attempt.js';
import type { AttemptCancelReason, AttemptKind } from './events.js';
import { feedAttempt } from './feed-attempt.js';
import type { ReplayBuffer } from './replay-buffer.js';
import { applyConfigWaitForReady } from './wait-for-ready.js';

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

  /** The call ended ({@link cancelAll}): an attempt's outstanding write is no longer called back here. */
  private callEnded = false;

  /** Where this call's attempts went, for the replica-avoiding policy (src/lb); only once it is registered. */
  private triedReplicas: TriedReplicas | undefined;

  constructor(
    private readonly owner: AttemptOwner,
    private readonly ctx: RetryingCallContext,
    private readonly replay: ReplayBuffer,
    /** The method has no request stream: the half-close goes right behind its one message. */
    private readonly singleRequest: boolean,
    /** The call's deadline (ms since the epoch): a loser left running without one is capped instead. */
    private readonly deadline: number,
    /** The method's `waitForReady`, set on every attempt; undefined leaves grpc-js's default. */
    private readonly waitForReady: boolean | undefined,
    private readonly events: CallEvents | undefined,
    /** The call's target (see `targetOf`): the connection whose cancel-rate limit counts this call's cancels. */
    private readonly target: string,
  ) {}

  /**
   * Makes the next attempt around a grpc-js call already made, counts it live and sends it: its headers (the
   * application's, with `grpc-previous-rpc-attempts` and the method's `waitForReady`), what the application has
   * sent (and its half-close), and a read if one is wanted. An `attempt-start` listener may cancel the call first: then the attempt
   * never starts, and its owner hears of it as a cancelled attempt. Check the attempt's state after.
   */
  start(kind: AttemptKind, call: InterceptingCallInterface, now: number, base: Metadata): Attempt {
    this.count += 1;
    const attempt = new Attempt(this.owner, this.count, kind, call, now, this.replay.start);
    this.live.push(attempt);
    this.newest = attempt;
    const metadata = base.clone();
    if (attempt.number > 1) {
      // The application's headers already carry the header: a retry layer outside this one, whose every attempt
      // this one retries again. Looked at from the second attempt on, so that a call that needs one pays nothing.
      if (attempt.number === 2 && base.get(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY).length > 0) {
        this.ctx.onNestedRetries();
      }
      metadata.set(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, String(attempt.number - 1));
    }
    if (this.waitForReady !== undefined) {
      applyConfigWaitForReady(metadata, this.waitForReady);
    }
    if (replicaAvoidanceInUse()) {
      this.triedReplicas ??= new TriedReplicas();
      attempt.replica = this.triedReplicas.addHint(metadata);
    }
    this.events?.attemptStart(attempt, metadata);
    if (attempt.state !== 'live') {
      // grpc-js reports nothing for an attempt that never started, so say it here.
      this.owner.onAttemptStatus(attempt, NEVER_STARTED);
      return attempt;
    }
    attempt.started = true;
    call.start(metadata, attempt);
    // Read now, after the attempt-start listeners: they may have written, half-closed or asked to read.
    this.feed(attempt);
    if (this.owner.readRequested && attempt.state === 'live') {
      call.startRead();
    }
    return attempt;
  }

  private readonly onChanged = (attempt: Attempt, index: number): void =>
    this.owner.onAttemptRequestChanged(attempt, index);

  /** Hands `attempt` its next message, or the half-close, if it may take one now. */
  feed(attempt: Attempt): void {
    feedAttempt(attempt, this.replay, this.owner, this.singleRequest, this.onChanged);
  }

  /**
   * An attempt's write completed: the writer waiting on that message may go on, the committed attempt's buffer
   * lets go of what it wrote, and the attempt takes its next message.
   */
  written(attempt: Attempt, committed: boolean): void {
    if (!attempt.writing) {
      return; // a write given up when its attempt ended (see abandonWrite)
    }
    this.endWrite(attempt)?.();
    if (committed) {
      this.replay.dropBefore(writtenBy(attempt));
    }
    this.feed(attempt);
  }

  /** Hands each attempt that takes the application's writes (the committed one, or all live ones) what it lacks. */
  feedAll(committed: Attempt | undefined): void {
    if (committed !== undefined) {
      this.feed(committed);
      return;
    }
    const live = this.live;
    if (live.length === 1) {
      this.feed(live[0] as Attempt);
      return;
    }
    this.replay.holdReleases();
    try {
      for (const attempt of live.slice()) {
        this.feed(attempt);
      }
    } finally {
      for (const callback of this.replay.releaseHeld()) {
        callback();
      }
    }
  }

  /** Asks every started attempt for its next response (one not started yet reads when it starts). */
  startReads(): void {
    const live = this.live;
    if (live.length === 1) {
      const only = live[0] as Attempt;
      if (only.started) {
        only.call.startRead();
      }
      return;
    }
    for (const attempt of live.slice()) {
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
    if (attempt.withdrawCancel !== undefined) {
      attempt.withdrawCancel();
      attempt.withdrawCancel = undefined;
    }
    if (attempt.timer === undefined) {
      return;
    }
    this.ctx.clock.clearTimer(attempt.timer);
    attempt.timer = undefined;
  }

  /**
   * The attempt's status arrived: it is done (`attempt-end`; `committed` when its status is the call's). Returns
   * what it was until now.
   */
  settle(attempt: Attempt, status: StatusObject, committed: boolean): Attempt['state'] {
    const was = attempt.state;
    attempt.state = 'done';
    this.stopTimer(attempt);
    this.abandonWrite(attempt);
    if (was === 'live') {
      this.remove(attempt);
    }
    this.events?.attemptEnd(attempt, status, committed, was === 'left-running');
    return was;
  }

  /** Ends a live attempt the call is done with: cancels it, or leaves it running under the cancel-rate limit. */
  cancel(attempt: Attempt, reason: AttemptCancelReason, code?: Status, details?: string): void {
    if (attempt.state !== 'live') {
      return;
    }
    this.stopTimer(attempt);
    this.remove(attempt);
    this.abandonWrite(attempt);
    const left = cancelOrLeaveRunning(
      attempt,
      reason,
      code ?? Status.CANCELLED,
      details ?? CANCEL_DETAILS[reason],
      this.ctx,
      this.deadline,
      this.target,
    );
    if (left !== undefined) {
      this.events?.attemptLeftRunning(attempt, left.reason, left.capMs);
    }
  }

  /**
   * Ends a live attempt the call is done with, as {@link cancel} does (with `code` and `details`, by default
   * CANCELLED and the reason's words), and when it was cancelled reports its end at once, with that status: grpc-js
   * would report it later, after whatever the call does next (a retry's events, the call's own end), so a listener
   * or a span that closes per call would see it afterwards. An attempt left running under the cancel-rate limit
   * ends in its own time, as it is documented to. Returns what became of it.
   */
  cancelAndSettle(
    attempt: Attempt,
    reason: AttemptCancelReason,
    code?: Status,
    details?: string,
  ): Attempt['state'] {
    this.cancel(attempt, reason, code, details);
    const state = attempt.state;
    if (state === 'cancelled') {
      const status = {
        code: code ?? Status.CANCELLED,
        details: details ?? CANCEL_DETAILS[reason],
        metadata: new Metadata(),
      };
      this.settle(attempt, status, attempt.committed);
    }
    return state;
  }

  /** The call ended: every live attempt is cancelled, with the caller's status when the caller cancelled. */
  cancelAll(reason: AttemptCancelReason, status: { code: Status; details: string } | undefined): void {
    this.callEnded = true;
    if (this.live.length === 0) {
      return;
    }
    for (const attempt of this.live.slice()) {
      // Its end is reported now, before the call's.
      this.cancelAndSettle(attempt, reason, status?.code, status?.details);
    }
  }

  /**
   * The call committed to `winner`: every other live attempt is cancelled, its end reported at once (or left
   * running). Not when grpc-js reports the cancel: an attempt whose start an interceptor below still holds never
   * reports it (the cancel reaches grpc-js's call before its listener does), and its `attempt-end`, and a span
   * waiting for it, would never come.
   */
  cancelLosers(winner: Attempt): void {
    if (this.live.length === 1) {
      return;
    }
    for (const loser of this.live.slice()) {
      if (loser !== winner) {
        this.cancelAndSettle(loser, 'other-attempt-committed');
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

  /**
   * An attempt ended with a write outstanding: it holds the message no more, so its writer may be called back (on
   * the next tick: this runs inside the engine's own bookkeeping). A completion grpc-js reports later is ignored.
   */
  private abandonWrite(attempt: Attempt): void {
    if (!attempt.writing) {
      return;
    }
    if (this.callEnded) {
      // The writer stays in the replay buffer, whose writers go on after the call's status (ApplicationSide.close).
      attempt.writing = false;
      return;
    }
    const callback = this.endWrite(attempt);
    if (callback) {
      process.nextTick(callback);
    }
  }

  /** The attempt's outstanding write is over: the writer's callback, once no attempt holds its message. */
  private endWrite(attempt: Attempt): (() => void) | undefined {
    attempt.writing = false;
    return this.replay.writeDone(attempt.sent - 1);
  }

  private remove(attempt: Attempt): void {
    const live = this.live;
    if (live.length === 1 && live[0] === attempt) {
      live.pop();
      return;
    }
    const index = live.indexOf(attempt);
    if (index >= 0) {
      live.splice(index, 1);
    }
  }
}

/** The status of an attempt that an `attempt-start` listener cancelled before it started. */
const NEVER_STARTED: StatusObject = Object.freeze({
  code: Status.CANCELLED,
  details: 'call cancelled',
  metadata: new Metadata(),
});
