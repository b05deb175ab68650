import {
  type InterceptingListener,
  type InterceptorOptions,
  type Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import type { TimerHandle } from '../shared/clock.js';
import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import type { HedgeDelaySource } from '../shared/hedge-delay-source.js';
import { isLocalRejection } from '../shared/local-rejection.js';
import { release, type TargetEntry } from '../shared/per-target.js';
import type { GateVerdict, RetryGate } from '../shared/retry-gate.js';
import { type ApplicationHost, ApplicationSide } from './application-side.js';
import { type Attempt, writtenBy } from './attempt.js';
import { withAttemptDeadline } from './attempt-deadline-details.js';
import { AttemptSet } from './attempt-set.js';
import type { RetryingCallContext } from './call-context.js';
import { CallEvents } from './call-events.js';
import { type CallPhase, isLegalTransition } from './call-phase.js';
import { targetOf } from './call-target.js';
import { retriedBelow } from './channel-retries.js';
import { timerBeforeDeadline } from './deadline.js';
import { engineChecks } from './engine-checks.js';
import { engineStatus } from './engine-statuses.js';
import type {
  AttemptCancelReason,
  AttemptKind,
  CallEndReason,
  CommittedEvent,
  RetryEvent,
} from './events.js';
import { FailureHandler, type FailureHost } from './failure-handler.js';
import { type HedgeHost, HedgeScheduler } from './hedge-scheduler.js';
import { sentByServer } from './local-failure.js';
import { callBounds, followParentCancel } from './parent-call.js';
import { ReplayBuffer } from './replay-buffer.js';
import { requestSerializerOf } from './request-serializer.js';
import type { HedgeFailureDecision } from './retry-decision.js';
import type { RetryOutcome } from './retry-outcome.js';

/**
 * One logical call under a retry or hedging policy: the A6 state machine, where grpc-js expects an intercepting
 * call. It holds the call's phase (every change goes through {@link transition}), commits, and ends the call with
 * its one status. Its collaborators do the rest: the {@link ApplicationSide} (what the application sends and
 * sees), the {@link AttemptSet} (the attempts themselves), the {@link FailureHandler} (what follows a failed
 * attempt) and, for hedging policies only, the {@link HedgeScheduler}.
 * @internal
 */
export class RetryingCall implements InterceptingCallInterface, ApplicationHost, HedgeHost, FailureHost {
  phase: CallPhase;
  /** The committed attempt while the phase is `committed` (a copy `transition` keeps, for the per-message paths). */
  committedTo: Attempt | undefined;
  readonly attempts: AttemptSet;
  /** What decides whether a retry or hedge may go: the `gate` option, or the throttle of the call's target. */
  readonly gate: RetryGate | undefined;
  /** The target's throttle while this call holds it (see `PerTarget`: one a call holds is not forgotten). */
  private readonly throttleHeld: TargetEntry<RetryGate> | undefined;
  /** Hedging only: where the hedging delay comes from when it is learned (the call's target's, or the one given). */
  readonly adaptive: HedgeDelaySource | undefined;
  private readonly app: ApplicationSide;
  private readonly replay: ReplayBuffer;
  private hedges: HedgeScheduler | undefined;
  private failureHandler: FailureHandler | undefined;
  private readonly deadline: number;
  /** The options each attempt is made with; the parent's cancellation is left to the call (see {@link callBounds}). */
  private readonly attemptOptions: InterceptorOptions;
  /** The application called `start`. */
  private started = false;
  /** The status of a call ended before it started, kept for its start. */
  private endedBeforeStart: StatusObject | undefined;
  /** Stops listening for the parent call's cancellation. */
  private leaveParent: (() => void) | undefined;
  /** The last failure of an uncommitted attempt, and whose it was: the attempt that answers if the call ends with it. */
  private lastFailed: { readonly attempt: Attempt; readonly status: StatusObject } | undefined;
  /**
   * Why the last failure got no further attempt, for the call's outcome and its `call-end` event. The latest holds:
   * it is the one nearest the call's end (a hedge the budget refused early does not explain a fatal status that
   * came later).
   */
  private endReason: CallEndReason | undefined;
  /** The call's events; undefined when nobody listens, so that events cost nothing then. */
  private readonly events: CallEvents | undefined;
  /**
   * With a finite deadline, from the start until the call commits or ends: the timer due at the deadline (see
   * {@link onDeadlineTimer}), then, with attempts out, the grace after it.
   */
  private deadlineTimer: TimerHandle | undefined;
  /** The deadline timer has fired: the deadline has passed, whatever the clock reads (see {@link now}). */
  private deadlineTimerFired = false;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly policy: CallPolicy,
    /** The method's `waitForReady`, applied to every attempt; undefined leaves grpc-js's default. */
    waitForReady: boolean | undefined,
    private readonly ctx: RetryingCallContext,
    emit: ((event: RetryEvent) => void) | undefined,
    /** The policy was given with the call (`withRetryOptions`), not looked up in the config. */
    private readonly policyGivenPerCall = false,
  ) {
    const definition = options.method_definition;
    const bounds = callBounds(options);
    const deadline = bounds.deadline;
    this.attemptOptions = bounds.attemptOptions;
    // Call ids number the events; a call nobody observes needs none. Taken before the call below is made, so that
    // a retry interceptor under this one numbers its calls after this one's.
    const callId = emit ? ctx.nextCallId() : 0;
    const singleRequest = !definition.requestStream;
    const replay = new ReplayBuffer(ctx.pool, requestSerializerOf(definition), ctx.checkResends);
    const app = new ApplicationSide(this, replay, definition.responseStream);
    this.deadline = deadline;
    this.replay = replay;
    this.app = app;
    // Created now, as grpc-js would without us, so that a closed channel throws where it always did.
    const firstCall = nextCall(this.attemptOptions);
    // What is kept per target, and who reads the target; adaptive hedging only for a hedging policy.
    const { throttles } = ctx;
    const hedging = policy.kind === 'hedging';
    const adaptivePerTarget = hedging ? ctx.adaptivePerTarget : undefined;
    const target = throttles || adaptivePerTarget || ctx.cancelLimits || emit ? targetOf(firstCall) : '';
    const events = emit && new CallEvents(emit, definition.path, callId, ctx.clock, target);
    this.events = events;
    this.throttleHeld = throttles?.acquire(target);
    this.gate = this.throttleHeld?.value ?? ctx.gate;
    this.adaptive = adaptivePerTarget?.for(target) ?? (hedging ? ctx.adaptive : undefined);
    this.attempts = new AttemptSet(app, ctx, replay, singleRequest, deadline, waitForReady, events, target);
    this.phase = { tag: 'not-started', firstCall };
    const parent = bounds.cancelledWith;
    if (parent) {
      this.leaveParent = followParentCancel(parent, () =>
        this.cancelWithStatus(Status.CANCELLED, 'Cancelled by parent call'),
      );
    }
  }

  // ---- what the application does (the application side does the plumbing) ----

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.started = true;
    this.app.open(metadata, listener);
    const early = this.endedBeforeStart;
    if (early !== undefined) {
      // Cancelled before it started (an interceptor above held the start back): the call still starts and ends
      // once, in that order, and its listener gets the status.
      this.endedBeforeStart = undefined;
      this.events?.callStart(this.policy, this.deadline);
      this.events?.callEnd(early, 0, this.endReason);
      this.app.close(early, true, undefined, true, this.outcome(early));
      return;
    }
    this.gate?.recordCall?.();
    const { policy, ctx, attempts, replay, events } = this;
    if (policy.kind === 'hedging') {
      const method = this.options.method_definition.path;
      this.hedges = new HedgeScheduler(
        policy,
        ctx,
        method,
        this,
        attempts,
        replay,
        events,
        this.policyGivenPerCall,
      );
    }
    this.events?.callStart(this.policy, this.deadline);
    if (this.phase.tag === 'ended') {
      return;
    }
    if (Number.isFinite(this.deadline)) {
      this.deadlineTimer = ctx.clock.setTimer(() => this.onDeadlineTimer(), this.deadline - ctx.clock.now());
    }
    this.startAttempt('original');
    this.hedges?.begin();
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.app.write(context, message);
  }

  sendMessage(message: unknown): void {
    this.app.write({}, message);
  }

  halfClose(): void {
    this.app.halfClose();
  }

  startRead(): void {
    this.app.startRead();
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
    this.end(engineStatus.cancelled(code, details), 'call-cancelled', true);
  }

  getPeer(): string {
    return this.app.peer();
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.app.authContext();
  }

  // ---- what the application side asks (ApplicationHost) ----

  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    if (attempt.state === 'done') {
      return;
    }
    // The committed attempt's status, or an OK before a commit (which commits), is the call's.
    const counts = attempt.committed || (status.code === Status.OK && this.phase.tag === 'in-flight');
    if (this.attempts.settle(attempt, status, counts) !== 'live') {
      return;
    }
    this.checkRetriedBelow(attempt, status.metadata);
    const phase = this.phase; // a listener may have ended the call
    if (phase.tag === 'committed' && phase.attempt === attempt) {
      // Committed: no further attempt, but a failure still counts against the server (A6 throttling).
      if (status.code !== Status.OK) {
        this.failures.afterCommittedFailure(status, attempt, phase.byOverflow);
      }
      this.end(status, 'call-ended');
    } else if (phase.tag === 'in-flight') {
      if (status.code === Status.OK) {
        this.commit(attempt, 'status');
        this.end(status, 'call-ended');
      } else {
        if (this.hedges !== undefined && sentByServer(status)) {
          // A server's answer, with no response before it (Trailers-Only): the method's calls do not stall.
          this.hedges.serverAnswered();
        }
        // A local rejection is shown only when no server answered (FailureHandler.afterFailure).
        if (this.lastFailed === undefined || !isLocalRejection(status)) {
          this.lastFailed = { attempt, status };
        }
        this.failures.afterFailure(attempt, status, false);
      }
    }
  }

  /**
   * A retry layer below this one (grpc-js's own retries) marks what an attempt of theirs after their first received
   * with `grpc-previous-rpc-attempts`, in its headers or, without headers, its trailers; reported once per
   * interceptor, whether that layer's retries failed or succeeded.
   */
  checkRetriedBelow(attempt: Attempt, received: Metadata | undefined): void {
    if (retriedBelow(attempt.number, received)) {
      this.ctx.onChannelRetries();
    }
  }

  onAttemptRequestChanged(attempt: Attempt, index: number): void {
    this.ctx.onRequestChanged();
    const committed = this.committedTo === attempt;
    // Its end is reported now, before whatever the call does next (its own end among them).
    this.attempts.cancelAndSettle(attempt, 'request-changed');
    const phase = this.phase;
    if (committed) {
      this.end(engineStatus.requestChanged(attempt.number, index), 'call-ended');
    } else if (phase.tag === 'in-flight' && this.attempts.live.length === 0) {
      // No attempt left to answer, and none may be added (a resend would meet the same change).
      const last = phase.lastFailure;
      const status = last ?? engineStatus.requestChanged(attempt.number, index);
      this.end(status, 'call-ended', false, this.failedAttempt(last));
    }
  }

  commitMostAdvanced(): void {
    const phase = this.phase;
    if (phase.tag === 'in-flight') {
      if (this.attempts.live.length === 0) {
        // Between an attempt's end and the decision that follows it (an `attempt-end` or `retry-scheduled` listener
        // wrote): no attempt to commit to. The buffer stops holding messages for a resend, so that decision (or the
        // retry's wait, at its end) finds it full: no further attempt, and the call ends with that attempt's
        // failure, reason `replay-buffer`.
        this.replay.release();
        return;
      }
      const target = this.attempts.mostAdvanced();
      this.commit(target, 'replay-buffer');
      this.attempts.feed(target);
    } else if (phase.tag === 'waiting') {
      // Committed with no attempt in flight: A6 makes no further attempt, so the failure the wait followed is the
      // call's result (as grpc-js's own retries end it), and what was written past the limit is not held for one.
      this.noFurtherAttempt('replay-buffer');
      const last = phase.lastFailure;
      this.end(
        this.failures.endedInWait(last, 'replay-buffer'),
        'call-ended',
        false,
        this.failedAttempt(last),
      );
    }
  }

  // ---- attempts ----

  private startAttempt(kind: AttemptKind): void {
    const from = this.phase;
    if (from.tag === 'committed' || from.tag === 'ended') {
      this.onIllegalTransition(from.tag, 'in-flight');
      return;
    }
    let call: InterceptingCallInterface;
    if (from.tag === 'not-started') {
      call = from.firstCall;
    } else {
      try {
        call = this.nextCall(this.attemptOptions);
      } catch (error) {
        const status = engineStatus.startFailed(this.attempts.count + 1, error);
        if (from.tag === 'in-flight' && this.attempts.live.length > 0) {
          // A hedge grpc-js would not make (the client was closed meanwhile): the attempts out may still answer,
          // as a call without hedging would.
          from.lastFailure = status;
          this.hedges?.sendNoMore();
          this.noFurtherAttempt('start-failed');
          return;
        }
        this.noFurtherAttempt('start-failed');
        this.end(status, 'call-ended');
        return;
      }
    }
    // Time is read only where something uses it: a listener, or adaptive hedging.
    const now = this.events || this.adaptive ? this.ctx.clock.now() : 0;
    if (from.tag !== 'in-flight') {
      const inFlight: CallPhase = {
        tag: 'in-flight',
        lastFailure: from.tag === 'waiting' ? from.lastFailure : undefined,
      };
      this.transition(inFlight);
    }
    const attempt = this.attempts.start(kind, call, now, this.app.headers);
    if (attempt.state !== 'live') {
      return;
    }
    const recvTimeoutMs = this.policy.kind === 'retry' ? this.policy.perAttemptRecvTimeoutMs : undefined;
    if (recvTimeoutMs !== undefined && this.phase.tag === 'in-flight') {
      this.attempts.armRecvTimeout(attempt, recvTimeoutMs, () =>
        this.failures.afterTimeout(attempt, recvTimeoutMs),
      );
    }
  }

  // ---- after a failure (FailureHost) ----

  /** The failure handler, made at the first failure or hedge: a call that never fails makes none. */
  private get failures(): FailureHandler {
    const { policy, ctx, deadline, attempts, replay, events } = this;
    this.failureHandler ??= new FailureHandler(policy, ctx, deadline, this, attempts, replay, events);
    return this.failureHandler;
  }

  get inFlight(): boolean {
    return this.phase.tag === 'in-flight';
  }

  finish(status: StatusObject, from: Attempt): void {
    this.end(status, 'call-ended', false, from);
  }

  hedgeAfterFailure(status: StatusObject, decision: HedgeFailureDecision): void {
    const phase = this.phase;
    if (phase.tag === 'in-flight') {
      phase.lastFailure = status;
      this.hedges?.afterFailure(decision);
    }
  }

  askGate(kind: 'hedge'): GateVerdict {
    return this.failures.askGate(kind);
  }

  /** No attempt in flight: wait `delayMs`, then send the next attempt (unless the deadline comes first). */
  wait(next: 'retry' | 'hedge', delayMs: number, lastFailure: StatusObject): void {
    const waiting: CallPhase = {
      tag: 'waiting',
      next,
      timer: undefined,
      since: this.ctx.clock.now(),
      lastFailure,
    };
    if (!this.transition(waiting)) {
      return;
    }
    waiting.timer = this.setTimerBeforeDeadline(delayMs, () => {
      waiting.timer = undefined;
      if (next === 'retry') {
        if (this.failures.retryMayGo()) {
          this.startAttempt('retry');
        }
      } else {
        this.hedges?.onWaitOver();
      }
    });
  }

  // ---- what the hedge scheduler may ask (HedgeHost) ----

  get uncommitted(): boolean {
    return this.phase.tag === 'in-flight' || this.phase.tag === 'waiting';
  }

  startHedge(): void {
    this.startAttempt('hedge');
  }

  waitForHedge(delayMs: number): void {
    const phase = this.phase;
    if (phase.tag === 'in-flight') {
      this.wait('hedge', delayMs, phase.lastFailure as StatusObject);
    }
  }

  /** Nothing is in flight and nothing more will go: the last failure is the result. @internal */
  finishWithLastFailure(): void {
    const phase = this.phase;
    if (phase.tag === 'in-flight' || phase.tag === 'waiting') {
      const last = phase.lastFailure;
      this.end(last ?? engineStatus.noHedgeSent(), 'call-ended', false, this.failedAttempt(last));
    }
  }

  /** The attempt whose failure `status` is, when it is the last one. */
  private failedAttempt(status: StatusObject | undefined): Attempt | undefined {
    return status !== undefined && this.lastFailed?.status === status ? this.lastFailed.attempt : undefined;
  }

  // ---- phases ----

  /** The one place where the phase changes: it checks the move and undoes what the old phase held. */
  private transition(next: CallPhase): boolean {
    const current = this.phase;
    if (!isLegalTransition(current.tag, next.tag)) {
      this.onIllegalTransition(current.tag, next.tag);
      return false;
    }
    if (current.tag === 'in-flight') {
      this.hedges?.stop();
    } else if (current.tag === 'waiting') {
      if (current.timer !== undefined) {
        this.ctx.clock.clearTimer(current.timer);
      }
      this.events?.waitOver(current.since);
    }
    this.phase = next;
    this.committedTo = next.tag === 'committed' ? next.attempt : undefined;
    if ((next.tag === 'committed' || next.tag === 'ended') && this.deadlineTimer !== undefined) {
      // The committed attempt's own deadline, in grpc-js, ends it.
      this.ctx.clock.clearTimer(this.deadlineTimer);
      this.deadlineTimer = undefined;
    }
    return true;
  }

  /**
   * A move the phase diagram does not allow: a bug here, never the application's or the server's doing. Under
   * vitest it throws; in production nothing may be thrown into grpc-js's callbacks, so the call ends with INTERNAL
   * (unless it has ended already) and an `internal-error` event says what happened.
   */
  private onIllegalTransition(from: CallPhase['tag'], to: CallPhase['tag']): void {
    const message = `no transition from ${from} to ${to}`;
    engineChecks.broken(`RetryingCall: ${message}`);
    this.events?.internalError(message);
    this.end(engineStatus.internalError(message), 'call-ended');
  }

  commit(attempt: Attempt, reason: CommittedEvent['reason']): void {
    if (this.phase.tag !== 'in-flight') {
      return;
    }
    if (reason !== 'replay-buffer') {
      this.attempts.stopTimer(attempt);
      this.hedges?.recordLatencies(attempt, this.attempts.live);
    }
    // Committed by the request outgrowing the replay buffer, the attempt keeps its per-attempt timeout until its
    // first response (FailureHandler.afterTimeout; ApplicationSide stops it).
    this.transition({ tag: 'committed', attempt, byOverflow: reason === 'replay-buffer' });
    attempt.committed = true;
    // The cause before its effects: the losers' attempt-end events (details "another attempt committed") follow.
    this.events?.committed(attempt.number, reason);
    if (this.committedTo !== attempt) {
      return; // a committed listener ended the call, and with it every attempt
    }
    this.attempts.cancelLosers(attempt);
    if (this.committedTo !== attempt) {
      return; // an attempt-left-running listener ended the call
    }
    this.replay.release();
    this.replay.dropBefore(writtenBy(attempt));
  }

  /**
   * The call's status is decided: stop everything, then tell the application (on the next tick for a cancel).
   * `from`: the attempt whose failure `status` is, when the call ends uncommitted with one.
   */
  private end(
    status: StatusObject,
    cancelReason: AttemptCancelReason,
    deliverLater = false,
    from?: Attempt,
  ): void {
    if (this.phase.tag === 'ended') {
      return;
    }
    const decidedBy = this.committedTo ?? from;
    if (decidedBy !== undefined) {
      // Hedges run side by side: the attempt that reports may not be the last one sent.
      status = withAttemptDeadline(status, decidedBy.number, this.attempts.count);
    }
    const beforeStart = !this.started;
    this.transition(ENDED);
    if (this.throttleHeld !== undefined) {
      release(this.throttleHeld);
    }
    this.leaveParent?.();
    if (beforeStart) {
      this.endedBeforeStart = status; // told when the call starts, to its listener
      return;
    }
    // A cancel tells the server the caller's status; otherwise the attempt's reason.
    this.attempts.cancelAll(cancelReason, cancelReason === 'call-cancelled' ? status : undefined);
    if (status.code === Status.OK) {
      this.gate?.recordSuccess();
    }
    this.events?.callEnd(status, this.attempts.count, this.endReason);
    this.app.close(status, deliverLater, decidedBy, cancelReason === 'call-cancelled', this.outcome(status));
  }

  /**
   * What `retryOutcomeOf` reads from the call's status: kept for a call that failed or made more than one attempt,
   * so that a call answered at its first attempt makes nothing.
   */
  private outcome(status: StatusObject): RetryOutcome | undefined {
    const attempts = this.attempts.count;
    if (status.code === Status.OK) {
      return attempts > 1 ? { attempts } : undefined;
    }
    const reason = this.endReason;
    return reason === undefined ? { attempts } : { attempts, reason };
  }

  /**
   * No further attempt follows, for `reason`: the call's end reports why, and a request that changed after it was
   * written, or that outgrew the replay buffer, is reported to the application (once per interceptor). Every place
   * that stops the attempts (a failure's decision, the end of a retry's wait, the hedges' schedule, a commit with no
   * attempt in flight) goes through here, so that none reports the reason without the warning.
   */
  noFurtherAttempt(reason: CallEndReason): void {
    this.endReason = reason;
    if (reason === 'request-changed') {
      this.ctx.onRequestChanged();
    } else if (reason === 'replay-buffer') {
      this.ctx.onReplayBufferFull();
    }
  }

  // ---- helpers ----

  /** Runs `action` after `delayMs`, or deals with the deadline when that comes first (see `atDeadline`). @internal */
  setTimerBeforeDeadline(delayMs: number, action: () => void): TimerHandle {
    return timerBeforeDeadline(
      this.ctx.clock,
      () => this.now(),
      this.deadline,
      delayMs,
      action,
      () => this.atDeadline(),
    );
  }

  /**
   * The call's deadline has passed (a hedge's timer found it so). With attempts out, each carries the same deadline
   * to grpc-js, whose own timer, due now too, ends it with grpc-js's status ("Deadline exceeded after 0.050s,..."):
   * that is the call's status, as without the interceptor, so the call waits for it; the in-flight phase's deadline
   * watch ends the call if none comes (see `watchDeadline`). With none out, the call ends now. A failure that comes meanwhile and would have been retried or hedged past
   * ends the call at once, with the deadline's status naming it (as such a failure past the deadline always does).
   */
  private atDeadline(): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight' || this.attempts.live.length === 0) {
      this.endAtDeadline(this.lastFailure());
    }
  }

  /**
   * The call's time: the clock's, or the deadline once the deadline timer has fired and the clock reads less. A
   * clock that stands still (a test that freezes `Date`: `vi.setSystemTime`, mockdate) would otherwise never reach
   * the deadline, and each retry would get a whole deadline of its own from grpc-js, which reads the time left
   * from the same clock: grpc-js's own retries time the call once, from its start. @internal
   */
  now(): number {
    const now = this.ctx.clock.now();
    return this.deadlineTimerFired && now < this.deadline ? this.deadline : now;
  }

  /**
   * The deadline timer, set at the start for the time then left, has fired. Waiting, or with no attempt out, the
   * call ends now. With attempts out, each carries the same deadline to grpc-js, whose own timer, due now too,
   * ends it with grpc-js's status: the call waits {@link DEADLINE_GRACE_MS} for it, then ends by itself. No status
   * ever comes for an attempt whose start another interceptor holds (an auth interceptor awaiting a token): grpc-js
   * ends it before it has a listener. A failure that comes meanwhile ends the call too ({@link now} reads the
   * deadline as passed).
   */
  private onDeadlineTimer(): void {
    this.deadlineTimer = undefined;
    if (this.deadlineTimerFired) {
      // The grace is over with attempts still out.
      if (this.phase.tag === 'in-flight') {
        this.endAtDeadline(this.lastFailure());
      }
      return;
    }
    this.deadlineTimerFired = true;
    const phase = this.phase;
    if (phase.tag !== 'waiting' && phase.tag !== 'in-flight') {
      return;
    }
    // The grace runs from the deadline: a timer that fired late (the event loop was held) has used it up. A clock
    // well behind the timer (it stands still, or stepped back) set the attempts' own grpc-js deadline timers from
    // that clock: they are not due, so the call ends now, as grpc-js's own retries end it.
    const clockNow = this.ctx.clock.now();
    // (`now()` once the timer has fired: the later of the clock and the deadline.)
    const graceLeft = this.deadline + DEADLINE_GRACE_MS - Math.max(clockNow, this.deadline);
    const clockBehind = clockNow < this.deadline - CLOCK_BEHIND_MS;
    if (phase.tag === 'waiting' || this.attempts.live.length === 0 || graceLeft <= 0 || clockBehind) {
      this.endAtDeadline(this.lastFailure());
      return;
    }
    this.deadlineTimer = this.ctx.clock.setTimer(() => this.onDeadlineTimer(), graceLeft);
  }

  /**
   * When the clock reads the deadline as passed, deals with it (see `atDeadline`: with attempts out, their deadline
   * statuses are waited for) and says so: true means no further attempt may go. @internal
   */
  endIfPastDeadline(): boolean {
    if (this.now() < this.deadline) {
      return false;
    }
    this.atDeadline();
    return true;
  }

  /** The last failure of an uncommitted call, if any. */
  private lastFailure(): StatusObject | undefined {
    const phase = this.phase;
    return phase.tag === 'waiting' || phase.tag === 'in-flight' ? phase.lastFailure : undefined;
  }

  /** The call's deadline has passed with no attempt's status to give: `last` is its last failure, if any. */
  endAtDeadline(last: StatusObject | undefined): void {
    this.noFurtherAttempt('deadline');
    const during =
      this.policy.kind === 'hedging'
        ? 'hedging'
        : this.phase.tag === 'in-flight' && this.attempts.live.length > 0
          ? 'retrying'
          : 'waiting to retry';
    this.end(engineStatus.deadlineExceeded(last, during), 'call-ended');
  }
}

const ENDED: CallPhase = Object.freeze({ tag: 'ended' });

/**
 * How long past its deadline a call with attempts out waits for their deadline statuses from grpc-js before it ends
 * by itself: grpc-js's timers are due at the same moment, so this is slack for a loaded event loop only.
 */
const DEADLINE_GRACE_MS = 100;

/**
 * How far behind the deadline the clock may read when the deadline timer fires and still be taken for the clock
 * Node's timers run ahead of (they fire off the loop's time as cached at the start of its turn, which a long turn
 * leaves behind): further behind, the clock stands still or stepped back.
 */
const CLOCK_BEHIND_MS = 20;
