import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import type { TimerHandle } from '../shared/clock.js';
import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import { PREVIOUS_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';
import type { GateVerdict } from '../shared/retry-gate.js';
import { errorMessage } from '../util/error-message.js';
import { type Attempt, type AttemptOwner, writtenBy } from './attempt.js';
import { AttemptSet } from './attempt-set.js';
import type { RetryingCallContext } from './call-context.js';
import { CallEvents } from './call-events.js';
import { type CallPhase, isLegalTransition } from './call-phase.js';
import { deadlineToMs, timerBeforeDeadline } from './deadline.js';
import { engineChecks } from './engine-checks.js';
import type { AttemptCancelReason, AttemptKind, RetryEvent } from './events.js';
import { FailureHandler, type FailureHost } from './failure-handler.js';
import { type HedgeHost, HedgeScheduler } from './hedge-scheduler.js';
import { ReplayBuffer } from './replay-buffer.js';
import type { HedgeFailureDecision } from './retry-decision.js';

type CommitReason = 'headers' | 'message' | 'status' | 'buffer-overflow';

/**
 * One logical call under a retry or hedging policy: the A6 state machine, where grpc-js expects an intercepting
 * call. It holds the call's phase (every change goes through {@link transition}), what the application sent (a
 * {@link ReplayBuffer}) and what it sees (one status, and only the committed attempt's responses), and decides
 * after each failed attempt through the pure `decideAfterFailure`. Two collaborators do the rest: the
 * {@link AttemptSet} (the attempts themselves) and, for hedging policies only, the {@link HedgeScheduler}.
 * @internal
 */
export class RetryingCall implements InterceptingCallInterface, AttemptOwner, HedgeHost, FailureHost {
  private phase: CallPhase;
  /** The committed attempt while the phase is `committed` (a copy `transition` keeps, for the per-message paths). */
  private committedTo: Attempt | undefined;
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private readonly replay: ReplayBuffer;
  private readonly attempts: AttemptSet;
  private hedges: HedgeScheduler | undefined;
  private failureHandler: FailureHandler | undefined;
  /** What the application asked of the request side (AttemptOwner): read by the attempts as they start. */
  halfClosed = false;
  readRequested = false;
  private retryDelayMs = 0;
  private readonly deadline: number;
  /** The call's events; undefined when nobody listens, so that events cost nothing then. */
  private readonly events: CallEvents | undefined;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly policy: CallPolicy,
    /** The method's `waitForReady`, applied to every attempt; undefined leaves grpc-js's default. */
    waitForReady: boolean | undefined,
    private readonly ctx: RetryingCallContext,
    emit: ((event: RetryEvent) => void) | undefined,
  ) {
    const definition = options.method_definition;
    this.deadline = deadlineToMs(options.deadline);
    // Call ids number the events; a call nobody observes needs none.
    this.events = emit && new CallEvents(emit, definition.path, ctx.nextCallId(), ctx.clock);
    const singleRequest = !definition.requestStream;
    this.replay = new ReplayBuffer(ctx.pool, definition.requestSerialize, singleRequest);
    this.attempts = new AttemptSet(
      this,
      ctx,
      this.replay,
      singleRequest,
      this.deadline,
      waitForReady,
      this.events,
    );
    // Created now, as grpc-js would without us, so that a closed channel throws where it always did.
    this.phase = { tag: 'not-started', firstCall: nextCall(options) };
  }

  // ---- what the application does ----

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    this.ctx.gate?.recordCall?.();
    if (this.policy.kind === 'hedging') {
      const method = this.options.method_definition.path;
      this.hedges = new HedgeScheduler(
        this.policy,
        this.ctx,
        method,
        this,
        this.attempts,
        this.replay,
        this.events,
      );
    }
    this.events?.callStart(this.policy, this.deadline);
    if (this.phase.tag === 'ended') {
      return;
    }
    this.startAttempt('original');
    this.hedges?.begin();
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
      this.attempts.feed(phase.attempt);
      return;
    }
    if (verdict === 'kept') {
      // Safe in the replay buffer: the writer may go on at once.
      if (context.callback) {
        process.nextTick(context.callback);
      }
      this.attempts.feedAll(this.committedTo);
      return;
    }
    // The replay buffer overflows: commit to the attempt that has sent the most (A6).
    if (phase.tag === 'in-flight') {
      const target = this.attempts.mostAdvanced();
      this.commit(target, 'buffer-overflow');
      this.attempts.feed(target);
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
    this.attempts.feedAll(this.committedTo);
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
    if (phase.tag === 'in-flight') {
      this.attempts.startReads();
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
    return (this.committedTo ?? this.attempts.newest)?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return (this.committedTo ?? this.attempts.newest)?.call.getAuthContext() ?? null;
  }

  // ---- what the attempts report ----

  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void {
    if (attempt.state !== 'live') {
      return;
    }
    if (this.phase.tag === 'in-flight') {
      this.commit(attempt, 'headers');
    }
    if (this.committedTo === attempt) {
      this.listener?.onReceiveMetadata?.(metadata);
    }
  }

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

  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    if (attempt.state === 'done') {
      return;
    }
    const committed = this.committedTo === attempt;
    const okBeforeCommit = status.code === Status.OK && this.phase.tag === 'in-flight';
    const was = this.attempts.settle(attempt);
    this.events?.attemptEnd(attempt, status, committed || okBeforeCommit, was === 'left-running');
    if (was !== 'live') {
      return;
    }
    const phase = this.phase; // a listener may have ended the call
    if (phase.tag === 'committed' && phase.attempt === attempt) {
      // Committed: no further attempt, but a failure still counts against the server (A6 throttling).
      if (status.code !== Status.OK) {
        this.failures.afterCommittedFailure(status);
      }
      this.end(status, 'call-ended');
    } else if (phase.tag === 'in-flight') {
      if (status.code === Status.OK) {
        this.commit(attempt, 'status');
        this.end(status, 'call-ended');
      } else {
        this.failures.afterFailure(attempt, status, false);
      }
    }
  }

  onAttemptWritten(attempt: Attempt): void {
    this.attempts.written(attempt, this.committedTo === attempt);
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
        call = this.nextCall(this.options);
      } catch (error) {
        const details = `could not start attempt ${this.attempts.count + 1}: ${errorMessage(error)}`;
        this.end({ code: Status.UNAVAILABLE, details, metadata: new Metadata() }, 'call-ended');
        return;
      }
    }
    // Time is read only where something uses it: a listener, or a wait to account for.
    const now = this.events || this.ctx.adaptive || from.tag === 'waiting' ? this.ctx.clock.now() : 0;
    if (from.tag !== 'in-flight') {
      if (from.tag === 'waiting') {
        this.retryDelayMs += now - from.since;
      }
      const lastFailure = from.tag === 'waiting' ? from.lastFailure : undefined;
      this.transition({ tag: 'in-flight', lastFailure });
    }
    const base = this.metadata as Metadata;
    const attempt = this.attempts.start(kind, call, now, base);
    if (attempt.state !== 'live') {
      return;
    }
    if (from.tag === 'waiting' && from.commitNext) {
      this.commit(attempt, 'buffer-overflow');
      return;
    }
    const recvTimeoutMs = this.policy.kind === 'retry' ? this.policy.perAttemptRecvTimeoutMs : undefined;
    if (recvTimeoutMs !== undefined && this.phase.tag === 'in-flight') {
      this.attempts.armRecvTimeout(attempt, recvTimeoutMs, () => this.onRecvTimeout(attempt, recvTimeoutMs));
    }
  }

  private onRecvTimeout(attempt: Attempt, timeoutMs: number): void {
    if (attempt.state !== 'live' || this.phase.tag !== 'in-flight') {
      return;
    }
    const details = `per-attempt receive timeout (${timeoutMs} ms) hit on attempt ${attempt.number}`;
    // DEADLINE_EXCEEDED tells the interceptors below (an adaptive throttle, say) why: the backend was too slow.
    this.attempts.cancel(attempt, 'per-attempt-timeout', Status.DEADLINE_EXCEEDED, details);
    const status = { code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() };
    this.failures.afterFailure(attempt, status, true);
  }

  // ---- after a failure (FailureHost) ----

  /** The failure handler, made at the first failure or hedge: a call that never fails makes none. */
  private get failures(): FailureHandler {
    this.failureHandler ??= new FailureHandler(this.policy, this.ctx, this.deadline, this, this.events);
    return this.failureHandler;
  }

  get inFlight(): boolean {
    return this.phase.tag === 'in-flight';
  }

  get attemptCount(): number {
    return this.attempts.count;
  }

  finish(status: StatusObject): void {
    this.end(status, 'call-ended');
  }

  waitForRetry(delayMs: number, lastFailure: StatusObject): void {
    this.wait('retry', delayMs, lastFailure);
  }

  hedgeAfterFailure(status: StatusObject, decision: HedgeFailureDecision): void {
    const phase = this.phase;
    if (phase.tag === 'in-flight') {
      phase.lastFailure = status;
      this.hedges?.afterFailure(decision);
    }
  }

  replayFits(): boolean {
    return this.replay.reserveAll();
  }

  askGate(kind: 'hedge'): GateVerdict {
    return this.failures.askGate(kind);
  }

  /** No attempt in flight: wait `delayMs`, then send the next attempt (unless the deadline comes first). */
  private wait(next: 'retry' | 'hedge', delayMs: number, lastFailure: StatusObject): void {
    const waiting: CallPhase = {
      tag: 'waiting',
      next,
      timer: undefined,
      since: this.ctx.clock.now(),
      lastFailure,
      commitNext: false,
    };
    if (!this.transition(waiting)) {
      return;
    }
    waiting.timer = this.setTimerBeforeDeadline(delayMs, () => {
      waiting.timer = undefined;
      if (next === 'retry') {
        this.startAttempt('retry');
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

  commitMostAdvanced(): void {
    this.commit(this.attempts.mostAdvanced(), 'buffer-overflow');
  }

  /** Nothing is in flight and nothing more will go: the last failure is the result. @internal */
  finishWithLastFailure(): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight' && phase.tag !== 'waiting') {
      return;
    }
    const last = phase.lastFailure ?? {
      code: Status.UNAVAILABLE,
      details: 'no hedge could be sent',
      metadata: new Metadata(),
    };
    this.end(last, 'call-ended');
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
    } else if (current.tag === 'waiting' && current.timer !== undefined) {
      this.ctx.clock.clearTimer(current.timer);
    }
    this.phase = next;
    this.committedTo = next.tag === 'committed' ? next.attempt : undefined;
    return true;
  }

  /**
   * A move the phase diagram does not allow: a bug here, never the application's or the server's doing. Under
   * vitest it throws; in production nothing may be thrown into grpc-js's callbacks, so the call ends with INTERNAL
   * (unless it has ended already) and an `internal-error` event says what happened.
   */
  private onIllegalTransition(from: CallPhase['tag'], to: CallPhase['tag']): void {
    const message = `no transition from ${from} to ${to}`;
    if (engineChecks.strict) {
      throw new Error(`RetryingCall: ${message}`);
    }
    this.events?.internalError(message);
    const details = `grpc-retry-hedging internal error: ${message}`;
    this.end({ code: Status.INTERNAL, details, metadata: new Metadata() }, 'call-ended');
  }

  private commit(attempt: Attempt, reason: CommitReason): void {
    if (this.phase.tag !== 'in-flight') {
      return;
    }
    this.attempts.stopTimer(attempt);
    if (reason !== 'buffer-overflow') {
      this.hedges?.recordLatencies(attempt, this.attempts.live);
    }
    this.transition({ tag: 'committed', attempt });
    this.attempts.cancelLosers(attempt);
    if (this.committedTo !== attempt) {
      return; // an attempt-left-running listener ended the call
    }
    this.replay.release();
    this.replay.dropBefore(writtenBy(attempt));
    this.events?.committed(attempt.number, reason);
  }

  /** The call's status is decided: stop everything, then tell the application (on the next tick for a cancel). */
  private end(status: StatusObject, cancelReason: AttemptCancelReason, deliverLater = false): void {
    const phase = this.phase;
    if (phase.tag === 'ended') {
      return;
    }
    if (phase.tag === 'waiting') {
      this.retryDelayMs += this.ctx.clock.now() - phase.since;
    }
    this.transition(ENDED);
    // A cancel tells the server the caller's status; otherwise the attempt's reason.
    this.attempts.cancelAll(cancelReason, cancelReason === 'call-cancelled' ? status : undefined);
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
    if (this.attempts.count > 1) {
      status.metadata?.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(this.attempts.count - 1));
    }
    this.events?.callEnd(status, this.attempts.count, this.retryDelayMs);
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

  /** Runs `action` after `delayMs`, or ends the call at its deadline when that comes first. @internal */
  setTimerBeforeDeadline(delayMs: number, action: () => void): TimerHandle {
    return timerBeforeDeadline(this.ctx.clock, this.deadline, delayMs, action, () => this.endOnDeadline());
  }

  private endOnDeadline(): void {
    const phase = this.phase;
    const last = phase.tag === 'waiting' || phase.tag === 'in-flight' ? phase.lastFailure : undefined;
    const details = last
      ? `Deadline exceeded while waiting to retry (last attempt: ${Status[last.code] ?? last.code} ${last.details})`
      : 'Deadline exceeded';
    this.end({ code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() }, 'call-ended');
  }
}

const ENDED: CallPhase = Object.freeze({ tag: 'ended' });
