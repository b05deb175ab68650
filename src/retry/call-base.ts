import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import { replicaAvoidanceInUse, TriedReplicas } from '../lb/tried-replicas.js';
import { errorMessage } from '../util/error-message.js';
import {
  Attempt,
  type AttemptOwner,
  CANCEL_DETAILS,
  mostAdvanced,
  removeFrom,
  writtenBy,
} from './attempt.js';
import type { RetryingCallContext } from './call-context.js';
import { CallEvents } from './call-events.js';
import type { CallPhase } from './call-phase.js';
import { isLegalTransition } from './call-phase.js';
import { cancelOrLeaveRunning } from './cancel-attempt.js';
import type { AttemptCancelReason, AttemptKind, RetryEvent } from './events.js';
import { feedAttempt } from './feed-attempt.js';
import type { InterceptingCallInterface, MessageContext } from './grpc-types.js';
import { PREVIOUS_ATTEMPTS_METADATA_KEY } from './headers.js';
import { ReplayBuffer } from './replay-buffer.js';
import { countsAgainstServer } from './retry-decision.js';
import { readServerHint } from './server-hint.js';

type CommitReason = 'headers' | 'message' | 'status' | 'buffer-overflow';

/**
 * The mechanics of one call under a retry or hedging policy: its phases, its attempts and what they report, the
 * replay of what the application sends, commit, and the one status the application gets. It decides nothing:
 * what to do after a failed attempt is the subclass's ({@link RetryingCall}), through the pure functions of
 * `retry-decision.ts`.
 * @internal
 */
export abstract class CallBase implements InterceptingCallInterface, AttemptOwner {
  protected phase: CallPhase;
  /**
   * The committed attempt while the phase is `committed`, else undefined: a copy that only `transition` writes, so
   * that the per-message paths read one field instead of testing the phase's shape.
   */
  protected committedTo: Attempt | undefined;
  protected listener: Partial<InterceptingListener> | undefined;
  protected metadata: Metadata | undefined;
  protected readonly replay: ReplayBuffer;
  protected attemptsStarted = 0;
  /** The newest attempt, for getPeer and getAuthContext before a commit. */
  protected lastAttempt: Attempt | undefined;
  protected halfClosed = false;
  protected readRequested = false;
  protected retryDelayMs = 0;
  protected readonly deadline: number;
  /** The call's events; undefined when nobody listens, so that events cost nothing then. */
  protected readonly events: CallEvents | undefined;
  /** The method has no request stream: its one message is measured only when a second attempt needs it. */
  protected readonly singleRequest: boolean;
  /** Where this call's attempts went, for the replica-avoiding policy (src/lb); only while a channel runs it. */
  private triedReplicas: TriedReplicas | undefined;

  constructor(
    protected readonly options: InterceptorOptions,
    protected readonly nextCall: NextCall,
    protected readonly policy: CallPolicy,
    /** The method's `waitForReady`, applied to every attempt; undefined leaves grpc-js's default. */
    protected readonly waitForReady: boolean | undefined,
    protected readonly ctx: RetryingCallContext,
    emit: ((event: RetryEvent) => void) | undefined,
  ) {
    const definition = options.method_definition;
    this.deadline = deadlineToMs(options.deadline);
    // Call ids number the events; a call nobody observes needs none.
    this.events = emit && new CallEvents(emit, definition.path, ctx.nextCallId(), ctx.clock);
    this.singleRequest = !definition.requestStream;
    this.replay = new ReplayBuffer(ctx.pool, definition.requestSerialize, this.singleRequest);
    // Created now, as grpc-js would without us, so that a closed channel throws where it always did.
    this.phase = { tag: 'not-started', firstCall: nextCall(options) };
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    const phase = this.phase;
    if (phase.tag === 'ended') {
      if (context.callback) {
        process.nextTick(context.callback);
      }
      return;
    }
    const verdict = this.replay.append(message, context.flags, context.callback);
    if (phase.tag === 'committed') {
      this.pump(phase.attempt);
      return;
    }
    if (verdict === 'kept') {
      // Safe in the replay buffer: the writer may go on at once.
      if (context.callback) {
        process.nextTick(context.callback);
      }
      this.pumpAll();
      return;
    }
    // The replay buffer overflows: commit to the attempt that has sent the most (A6).
    if (phase.tag === 'in-flight') {
      const target = mostAdvanced(phase.live);
      this.commit(target, 'buffer-overflow');
      this.pump(target);
    } else if (phase.tag === 'waiting') {
      phase.commitNext = true;
    }
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    if (this.phase.tag === 'ended' || this.halfClosed) {
      return;
    }
    this.halfClosed = true;
    this.pumpAll();
  }

  startRead(): void {
    const committed = this.committedTo;
    if (committed !== undefined) {
      committed.call.startRead();
      return;
    }
    const phase = this.phase;
    if (phase.tag === 'ended' || this.readRequested) {
      return;
    }
    this.readRequested = true;
    if (phase.tag !== 'in-flight') {
      return;
    }
    if (phase.live.length === 1) {
      (phase.live[0] as Attempt).call.startRead();
    } else {
      for (const attempt of phase.live.slice()) {
        attempt.call.startRead();
      }
    }
  }

  cancelWithStatus(code: Status, details: string): void {
    const phase = this.phase;
    if (phase.tag === 'ended') {
      return;
    }
    // Cancelled before start: nothing went out, but let grpc-js release what it holds for the call.
    if (phase.tag === 'not-started') {
      phase.firstCall.cancelWithStatus(code, details);
    }
    this.end({ code, details, metadata: new Metadata() }, 'call-cancelled', true);
  }

  getPeer(): string {
    return this.visibleAttempt()?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.visibleAttempt()?.call.getAuthContext() ?? null;
  }

  // ---- attempts ----

  protected startAttempt(kind: AttemptKind): void {
    const from = this.phase;
    const number = this.attemptsStarted + 1;
    let call: InterceptingCallInterface;
    if (from.tag === 'not-started') {
      call = from.firstCall;
    } else {
      try {
        call = this.nextCall(this.options);
      } catch (error) {
        const details = `could not start attempt ${number}: ${errorMessage(error)}`;
        this.end({ code: Status.UNAVAILABLE, details, metadata: new Metadata() }, 'call-ended');
        return;
      }
    }
    this.attemptsStarted = number;
    // Time is read only where something uses it: a listener, or a wait to account for.
    const now = this.events || this.ctx.adaptive || from.tag === 'waiting' ? this.ctx.clock.now() : 0;
    const attempt = new Attempt(this, number, kind, call, now, this.replay.start);
    const commitNext = from.tag === 'waiting' && from.commitNext;
    if (from.tag === 'in-flight') {
      from.live.push(attempt);
    } else {
      if (from.tag === 'waiting') {
        this.retryDelayMs += now - from.since;
      }
      this.transition({
        tag: 'in-flight',
        live: [attempt],
        hedgeTimer: undefined,
        hedging: true,
        lastFailure: undefined,
      });
    }
    this.lastAttempt = attempt;
    const metadata = (this.metadata as Metadata).clone();
    if (number > 1) {
      metadata.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(number - 1));
    }
    if (this.waitForReady !== undefined) {
      metadata.setOptions({ waitForReady: this.waitForReady });
    }
    if (replicaAvoidanceInUse()) {
      this.triedReplicas ??= new TriedReplicas();
      attempt.replica = this.triedReplicas.addHint(metadata);
    }
    this.events?.attemptStart(attempt, metadata);
    if (attempt.state !== 'live') {
      // A listener cancelled the call: grpc-js reports nothing for an attempt that never started, so say it here.
      this.onAttemptStatus(attempt, {
        code: Status.CANCELLED,
        details: 'call cancelled',
        metadata: new Metadata(),
      });
      return;
    }
    call.start(metadata, attempt);
    this.pump(attempt);
    if (attempt.state !== 'live') {
      return;
    }
    if (this.readRequested) {
      call.startRead();
    }
    if (commitNext) {
      this.commit(attempt, 'buffer-overflow');
      return;
    }
    const recvTimeoutMs = this.policy.kind === 'retry' ? this.policy.perAttemptRecvTimeoutMs : undefined;
    if (recvTimeoutMs !== undefined && this.phase.tag === 'in-flight') {
      attempt.timer = this.ctx.clock.setTimer(
        () => this.onRecvTimeout(attempt, recvTimeoutMs),
        recvTimeoutMs,
      );
    }
  }

  protected cancelAttempt(
    attempt: Attempt,
    reason: AttemptCancelReason,
    code = Status.CANCELLED,
    details?: string,
  ): void {
    if (attempt.state !== 'live') {
      return;
    }
    this.stopAttemptTimer(attempt);
    const phase = this.phase;
    if (phase.tag === 'in-flight') {
      removeFrom(phase.live, attempt);
    }
    const left = cancelOrLeaveRunning(
      attempt,
      reason,
      code,
      details ?? CANCEL_DETAILS[reason],
      this.ctx,
      this.deadline,
    );
    if (left !== undefined) {
      this.events?.attemptLeftRunning(attempt, left.reason, left.capMs);
    }
  }

  protected stopAttemptTimer(attempt: Attempt): void {
    if (attempt.timer === undefined) {
      return;
    }
    this.ctx.clock.clearTimer(attempt.timer);
    attempt.timer = undefined;
  }

  // ---- what the attempts report ----

  /** @internal */
  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void {
    if (attempt.state !== 'live') {
      return;
    }
    if (this.phase.tag === 'in-flight') {
      this.commit(attempt, 'headers');
    }
    if (this.isCommitted(attempt)) {
      this.listener?.onReceiveMetadata?.(metadata);
    }
  }

  /** @internal */
  onAttemptMessage(attempt: Attempt, message: unknown): void {
    if (this.committedTo !== attempt) {
      // An attempt left running is read to its end, its responses dropped.
      if (attempt.state === 'left-running') {
        attempt.call.startRead();
      }
      if (this.phase.tag !== 'in-flight' || attempt.state !== 'live') {
        return;
      }
      // grpc-js hands unary listeners a null message before a status that came without one: not a response.
      if (message === null && !this.options.method_definition.responseStream) {
        return;
      }
      this.commit(attempt, 'message');
      if (this.committedTo !== attempt) {
        return;
      }
    } else if (attempt.state !== 'live') {
      return;
    }
    this.readRequested = false;
    this.listener?.onReceiveMessage?.(message);
  }

  /** @internal */
  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    if (attempt.state === 'done') {
      return;
    }
    const wasLive = attempt.state === 'live';
    const leftRunning = attempt.state === 'left-running';
    attempt.state = 'done';
    this.stopAttemptTimer(attempt);
    const phase = this.phase;
    if (wasLive && phase.tag === 'in-flight') {
      removeFrom(phase.live, attempt);
    }
    this.events?.attemptEnd(
      attempt,
      status,
      this.isCommitted(attempt) || (status.code === Status.OK && phase.tag === 'in-flight'),
      leftRunning,
    );
    if (!wasLive) {
      return;
    }
    const now = this.phase; // a listener may have ended the call
    if (now.tag === 'committed' && now.attempt === attempt) {
      // Committed: no further attempt, but a failure still counts against the server (A6 throttling).
      if (status.code !== Status.OK) {
        this.recordFailureIfCounted(status, false);
      }
      this.end(status, 'call-ended');
    } else if (now.tag === 'in-flight') {
      if (status.code === Status.OK) {
        this.commit(attempt, 'status');
        this.end(status, 'call-ended');
      } else {
        this.onAttemptFailed(attempt, status, false);
      }
    }
  }

  /** @internal */
  onAttemptWritten(attempt: Attempt): void {
    attempt.writing = false;
    const callback = this.replay.takeCallback(attempt.sent - 1);
    if (callback) {
      callback();
    }
    if (this.isCommitted(attempt)) {
      this.replay.dropBefore(writtenBy(attempt));
    }
    this.pump(attempt);
  }

  protected onRecvTimeout(attempt: Attempt, timeoutMs: number): void {
    attempt.timer = undefined;
    if (attempt.state !== 'live' || this.phase.tag !== 'in-flight') {
      return;
    }
    const details = `per-attempt receive timeout (${timeoutMs} ms) hit on attempt ${attempt.number}`;
    // DEADLINE_EXCEEDED tells the interceptors below (an adaptive throttle, say) why: the backend was too slow.
    this.cancelAttempt(attempt, 'per-attempt-timeout', Status.DEADLINE_EXCEEDED, details);
    this.onAttemptFailed(
      attempt,
      { code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() },
      true,
    );
  }

  protected clearHedgeTimer(phase: Extract<CallPhase, { tag: 'in-flight' }>): void {
    if (phase.hedgeTimer === undefined) {
      return;
    }
    this.ctx.clock.clearTimer(phase.hedgeTimer);
    phase.hedgeTimer = undefined;
  }

  // ---- phases ----

  /** The one place where the phase changes: it checks the move and undoes what the old phase held. */
  protected transition(next: CallPhase): void {
    const current = this.phase;
    if (!isLegalTransition(current.tag, next.tag)) {
      illegalTransition(current.tag, next.tag);
    }
    if (current.tag === 'in-flight') {
      this.clearHedgeTimer(current);
    }
    if (current.tag === 'waiting' && current.timer !== undefined) {
      this.ctx.clock.clearTimer(current.timer);
    }
    this.phase = next;
    this.committedTo = next.tag === 'committed' ? next.attempt : undefined;
  }

  protected commit(attempt: Attempt, reason: CommitReason): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight') {
      return;
    }
    this.stopAttemptTimer(attempt);
    const live = phase.live;
    if (this.ctx.adaptive && reason !== 'buffer-overflow' && this.policy.kind === 'hedging') {
      this.recordLatencies(attempt, live);
    }
    this.transition({ tag: 'committed', attempt });
    if (live.length > 1) {
      for (const loser of live) {
        if (loser !== attempt) {
          this.cancelAttempt(loser, 'other-attempt-committed');
        }
      }
    }
    this.replay.release();
    this.replay.dropBefore(writtenBy(attempt));
    this.events?.committed(attempt.number, reason);
  }

  /** The call's status is decided: stop everything, then tell the application (on the next tick for a cancel). */
  protected end(status: StatusObject, cancelReason: AttemptCancelReason, deliverLater = false): void {
    const phase = this.phase;
    if (phase.tag === 'ended') {
      return;
    }
    if (phase.tag === 'waiting') {
      this.retryDelayMs += this.ctx.clock.now() - phase.since;
    }
    this.transition(ENDED);
    // Ended now: cancelling an attempt no longer touches the old phase's list.
    if (phase.tag === 'in-flight') {
      for (const attempt of phase.live) {
        this.cancelOnEnd(attempt, status, cancelReason);
      }
    } else if (phase.tag === 'committed') {
      this.cancelOnEnd(phase.attempt, status, cancelReason);
    }
    const waiting = this.replay.clear();
    if (waiting) {
      for (const callback of waiting) {
        process.nextTick(callback);
      }
    }
    if (status.code === Status.OK) {
      this.ctx.gate?.recordSuccess();
    }
    // The attempt count, visible to the caller in the trailers (as grpc-java does); absent means one attempt.
    if (this.attemptsStarted > 1) {
      status.metadata?.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(this.attemptsStarted - 1));
    }
    this.events?.callEnd(status, this.attemptsStarted, this.retryDelayMs);
    const listener = this.listener;
    this.listener = undefined;
    this.metadata = undefined;
    if (deliverLater) {
      process.nextTick(() => listener?.onReceiveStatus?.(status));
    } else {
      listener?.onReceiveStatus?.(status);
    }
  }

  // ---- helpers ----

  /** At the end of the call: an attempt still in flight is cancelled (with the caller's status for a cancel). */
  protected cancelOnEnd(attempt: Attempt, status: StatusObject, reason: AttemptCancelReason): void {
    if (attempt.state !== 'live') {
      return;
    }
    if (reason === 'call-cancelled') {
      this.cancelAttempt(attempt, reason, status.code, status.details);
    } else {
      this.cancelAttempt(attempt, reason);
    }
  }

  protected setTimerBeforeDeadline(delayMs: number, action: () => void): unknown {
    const clock = this.ctx.clock;
    const remaining = this.deadline - clock.now();
    if (remaining <= delayMs) {
      return clock.setTimer(() => this.endOnDeadline(), Math.max(0, remaining));
    }
    return clock.setTimer(action, delayMs);
  }

  protected endOnDeadline(): void {
    const phase = this.phase;
    const last =
      phase.tag === 'waiting' ? phase.lastFailure : phase.tag === 'in-flight' ? phase.lastFailure : undefined;
    const details = last
      ? `Deadline exceeded while waiting to retry (last attempt: ${Status[last.code] ?? last.code} ${last.details})`
      : 'Deadline exceeded';
    this.end({ code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() }, 'call-ended');
  }

  protected recordFailureIfCounted(status: StatusObject, timedOut: boolean): void {
    const hint = readServerHint(status.metadata, this.ctx.retryInfo);
    if (countsAgainstServer(this.policy, { code: status.code, hint, timedOut })) {
      this.ctx.gate?.recordFailure();
    }
  }

  protected isCommitted(attempt: Attempt): boolean {
    return this.committedTo === attempt;
  }

  protected visibleAttempt(): Attempt | undefined {
    return this.phase.tag === 'committed' ? this.phase.attempt : this.lastAttempt;
  }

  /** Hand every attempt that takes the application's writes (the committed one, or all live ones) what it lacks. */
  protected pumpAll(): void {
    const committed = this.committedTo;
    if (committed !== undefined) {
      this.pump(committed);
      return;
    }
    const phase = this.phase;
    if (phase.tag !== 'in-flight') {
      return;
    }
    const live = phase.live;
    if (live.length === 1) {
      this.pump(live[0] as Attempt);
    } else {
      for (const attempt of live.slice()) {
        this.pump(attempt);
      }
    }
  }

  protected pump(attempt: Attempt): void {
    feedAttempt(attempt, this.replay, this.halfClosed, this.singleRequest);
  }

  /** grpc-js starts the call: the first attempt goes, and under hedging the schedule of the others begins. */
  abstract start(metadata: Metadata, listener?: Partial<InterceptingListener>): void;

  /** An uncommitted attempt failed (or hit its per-attempt timeout): decide and carry the decision out. */
  protected abstract onAttemptFailed(attempt: Attempt, status: StatusObject, timedOut: boolean): void;

  /** The call is committing to `winner` (not on overflow); `live` are the attempts in flight until now. */
  protected abstract recordLatencies(winner: Attempt, live: readonly Attempt[]): void;
}

/** Kept out of `transition` so that the check stays cheap on the per-call path. */
function illegalTransition(from: string, to: string): never {
  throw new Error(`RetryingCall: no transition from ${from} to ${to}`);
}

const ENDED: CallPhase = Object.freeze({ tag: 'ended' });

function deadlineToMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === null) {
    return Number.POSITIVE_INFINITY;
  }
  return deadline instanceof Date ? deadline.getTime() : deadline;
}
