import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallPolicy, RetryPolicy } from '../config/types.js';
import { errorMessage } from '../util/error-message.js';
import {
  Attempt,
  type AttemptOwner,
  CANCEL_DETAILS,
  mostAdvanced,
  removeFrom,
  writtenBy,
} from './attempt.js';
import { type BackoffState, initialBackoffState } from './backoff.js';
import type { RetryingCallContext } from './call-context.js';
import { CallEvents } from './call-events.js';
import type { CallPhase } from './call-phase.js';
import { endStatus, isLegalTransition } from './call-phase.js';
import type { AttemptCancelReason, AttemptKind, RetryEvent } from './events.js';
import { feedAttempt } from './feed-attempt.js';
import type { InterceptingCallInterface, MessageContext } from './grpc-types.js';
import { PREVIOUS_ATTEMPTS_METADATA_KEY } from './headers.js';
import { ReplayBuffer } from './replay-buffer.js';
import {
  countsAgainstServer,
  decideAfterFailure,
  decideHedgeSend,
  type FailureDecision,
} from './retry-decision.js';
import { NO_HINT, readServerHint } from './server-hint.js';

type CommitReason = 'headers' | 'message' | 'status' | 'buffer-overflow';
type HedgeReason = 'hedging-delay' | 'adaptive-delay' | 'non-fatal-status' | 'pushback' | 'retry-info';

/**
 * One logical call under a retry or hedging policy: the A6 state machine shared by both.
 *
 * It sits where grpc-js expects an intercepting call, starts attempts through `nextCall`, keeps what the
 * application sends in a {@link ReplayBuffer}, commits to one attempt on response headers, a response message, an
 * OK status or a buffer overflow, and reports exactly one status to the application. What to do after a failed
 * attempt is decided by the pure functions of `retry-decision.ts`; this class only carries it out.
 * @internal
 */
export class RetryingCall implements InterceptingCallInterface, AttemptOwner {
  private phase: CallPhase;
  /**
   * The committed attempt while the phase is `committed`, else undefined: a copy that only `transition` writes, so
   * that the per-message paths read one field instead of testing the phase's shape.
   */
  private committedTo: Attempt | undefined;
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private readonly replay: ReplayBuffer;
  private attemptsStarted = 0;
  /** The newest attempt, for getPeer and getAuthContext before a commit. */
  private lastAttempt: Attempt | undefined;
  /** Where the backoff stands; created at the first retry decision. */
  private backoff: BackoffState | undefined;
  private halfClosed = false;
  private readRequested = false;
  private retryDelayMs = 0;
  /** Hedging: the delay between hedges (the config's, or the adaptive one), and which it is. */
  private hedgeDelayMs = 0;
  private hedgeDelayReason: 'hedging-delay' | 'adaptive-delay' = 'hedging-delay';
  /** Set by gateAllows when the adaptive hedge budget (not the config's gate) refused a hedge, and for which. */
  private budgetRefused = false;
  private budgetRefusedFor = 0;
  private readonly deadline: number;
  /** The call's events; undefined when nobody listens, so that events cost nothing then. */
  private readonly events: CallEvents | undefined;
  /** The method has no request stream: its one message is measured only when a second attempt needs it. */
  private readonly singleRequest: boolean;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly policy: CallPolicy,
    /** The method's `waitForReady`, applied to every attempt; undefined leaves grpc-js's default. */
    private readonly waitForReady: boolean | undefined,
    private readonly ctx: RetryingCallContext,
    emit: ((event: RetryEvent) => void) | undefined,
  ) {
    const definition = options.method_definition;
    this.deadline = deadlineToMs(options.deadline);
    const callId = ctx.nextCallId();
    this.events = emit && new CallEvents(emit, definition.path, callId, ctx.clock);
    this.singleRequest = !definition.requestStream;
    this.replay = new ReplayBuffer(ctx.pool, definition.requestSerialize, this.singleRequest);
    // Created now, as grpc-js would without us, so that a closed channel throws where it always did.
    this.phase = { tag: 'not-started', firstCall: nextCall(options) };
  }

  // ---- what the application (through grpc-js) does ----

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    this.ctx.gate?.recordCall?.();
    if (this.policy.kind === 'hedging') {
      const adaptive = this.ctx.adaptive;
      this.hedgeDelayMs = this.policy.hedgingDelayMs;
      if (adaptive) {
        adaptive.budget?.recordCall();
        const choice = adaptive.delayFor(this.options.method_definition.path, this.policy.hedgingDelayMs);
        this.hedgeDelayMs = choice.delayMs;
        if (choice.adaptive) this.hedgeDelayReason = 'adaptive-delay';
      }
    }
    this.events?.callStart(this.policy, this.deadline);
    if (this.phase.tag === 'ended') return;
    this.startAttempt('original');
    if (this.policy.kind === 'hedging') this.scheduleHedge(this.hedgeDelayMs, this.hedgeDelayReason);
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    const phase = this.phase;
    if (phase.tag === 'ended') {
      if (context.callback) process.nextTick(context.callback);
      return;
    }
    const verdict = this.replay.append(message, context.flags, context.callback);
    if (phase.tag === 'committed') {
      this.pump(phase.attempt);
      return;
    }
    if (verdict === 'kept') {
      // Safe in the replay buffer: the writer may go on at once.
      if (context.callback) process.nextTick(context.callback);
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
    if (this.phase.tag === 'ended' || this.halfClosed) return;
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
    if (phase.tag === 'ended' || this.readRequested) return;
    this.readRequested = true;
    if (phase.tag !== 'in-flight') return;
    if (phase.live.length === 1) (phase.live[0] as Attempt).call.startRead();
    else for (const attempt of phase.live.slice()) attempt.call.startRead();
  }

  cancelWithStatus(code: Status, details: string): void {
    const phase = this.phase;
    if (phase.tag === 'ended') return;
    // Cancelled before start: nothing went out, but let grpc-js release what it holds for the call.
    if (phase.tag === 'not-started') phase.firstCall.cancelWithStatus(code, details);
    this.end({ code, details, metadata: new Metadata() }, 'call-cancelled', true);
  }

  getPeer(): string {
    return this.visibleAttempt()?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.visibleAttempt()?.call.getAuthContext() ?? null;
  }

  // ---- attempts ----

  private startAttempt(kind: AttemptKind): void {
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
      if (from.tag === 'waiting') this.retryDelayMs += now - from.since;
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
    if (number > 1) metadata.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(number - 1));
    if (this.waitForReady !== undefined) metadata.setOptions({ waitForReady: this.waitForReady });
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
    if (attempt.state !== 'live') return;
    if (this.readRequested) call.startRead();
    if (commitNext) {
      this.commit(attempt, 'buffer-overflow');
      return;
    }
    const recvTimeoutMs = this.policy.kind === 'retry' ? this.policy.perAttemptRecvTimeoutMs : undefined;
    if (recvTimeoutMs !== undefined && this.phase.tag === 'in-flight') {
      attempt.recvTimer = this.ctx.clock.setTimer(
        () => this.onRecvTimeout(attempt, recvTimeoutMs),
        recvTimeoutMs,
      );
    }
  }

  private cancelAttempt(
    attempt: Attempt,
    reason: AttemptCancelReason,
    code = Status.CANCELLED,
    details?: string,
  ): void {
    if (attempt.state !== 'live') return;
    this.stopRecvTimer(attempt);
    const phase = this.phase;
    if (phase.tag === 'in-flight') removeFrom(phase.live, attempt);
    const limiter = this.ctx.cancelLimiter;
    if (
      limiter !== undefined &&
      (reason === 'other-attempt-committed' || reason === 'per-attempt-timeout') &&
      attempt.halfCloseSent &&
      !limiter.tryCancel()
    ) {
      this.leaveRunning(attempt, reason, limiter.loserCapMs, code, details ?? CANCEL_DETAILS[reason]);
      return;
    }
    attempt.state = 'cancelled';
    attempt.cancelReason = reason;
    attempt.call.cancelWithStatus(code, details ?? CANCEL_DETAILS[reason]);
  }

  /**
   * Cancelling now would exceed the cancel-rate limit (each cancel is an HTTP/2 RST_STREAM, and servers tear down
   * connections that reset streams too fast): the attempt runs to completion, its responses read and dropped. It
   * still ends at the call's deadline (grpc-js applies it to every attempt), or after `capMs` when there is none.
   */
  private leaveRunning(
    attempt: Attempt,
    reason: 'other-attempt-committed' | 'per-attempt-timeout',
    capMs: number,
    code: Status,
    details: string,
  ): void {
    attempt.state = 'left-running';
    const capped = !Number.isFinite(this.deadline);
    if (capped) {
      attempt.capTimer = this.ctx.clock.setTimer(() => {
        attempt.capTimer = undefined;
        if (attempt.state === 'left-running') attempt.call.cancelWithStatus(code, details);
      }, capMs);
    }
    this.events?.attemptLeftRunning(attempt, reason, capped ? capMs : undefined);
  }

  private stopRecvTimer(attempt: Attempt): void {
    if (attempt.recvTimer === undefined) return;
    this.ctx.clock.clearTimer(attempt.recvTimer);
    attempt.recvTimer = undefined;
  }

  // ---- what the attempts report ----

  /** @internal */
  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void {
    if (attempt.state !== 'live') return;
    if (this.phase.tag === 'in-flight') this.commit(attempt, 'headers');
    if (this.isCommitted(attempt)) this.listener?.onReceiveMetadata?.(metadata);
  }

  /** @internal */
  onAttemptMessage(attempt: Attempt, message: unknown): void {
    if (this.committedTo !== attempt) {
      // An attempt left running is read to its end, its responses dropped.
      if (attempt.state === 'left-running') attempt.call.startRead();
      if (this.phase.tag !== 'in-flight' || attempt.state !== 'live') return;
      // grpc-js hands unary listeners a null message before a status that came without one: not a response.
      if (message === null && !this.options.method_definition.responseStream) return;
      this.commit(attempt, 'message');
      if (this.committedTo !== attempt) return;
    } else if (attempt.state !== 'live') {
      return;
    }
    this.readRequested = false;
    this.listener?.onReceiveMessage?.(message);
  }

  /** @internal */
  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    if (attempt.state === 'done') return;
    const wasLive = attempt.state === 'live';
    const leftRunning = attempt.state === 'left-running';
    attempt.state = 'done';
    this.stopRecvTimer(attempt);
    if (attempt.capTimer !== undefined) this.ctx.clock.clearTimer(attempt.capTimer);
    const phase = this.phase;
    if (wasLive && phase.tag === 'in-flight') removeFrom(phase.live, attempt);
    this.events?.attemptEnd(
      attempt,
      status,
      this.isCommitted(attempt) || (status.code === Status.OK && phase.tag === 'in-flight'),
      leftRunning,
    );
    if (!wasLive) return;
    const now = this.phase; // a listener may have ended the call
    if (now.tag === 'committed' && now.attempt === attempt) {
      // Committed: no further attempt, but a failure still counts against the server (A6 throttling).
      if (status.code !== Status.OK) this.recordFailureIfCounted(status, false);
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
    if (callback) callback();
    if (this.isCommitted(attempt)) this.replay.dropBefore(writtenBy(attempt));
    this.pump(attempt);
  }

  private onRecvTimeout(attempt: Attempt, timeoutMs: number): void {
    attempt.recvTimer = undefined;
    if (attempt.state !== 'live' || this.phase.tag !== 'in-flight') return;
    const details = `per-attempt receive timeout (${timeoutMs} ms) hit on attempt ${attempt.number}`;
    // DEADLINE_EXCEEDED tells the interceptors below (an adaptive throttle, say) why: the backend was too slow.
    this.cancelAttempt(attempt, 'per-attempt-timeout', Status.DEADLINE_EXCEEDED, details);
    this.onAttemptFailed(
      attempt,
      { code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() },
      true,
    );
  }

  // ---- after a failure: decide, then carry the decision out ----

  private onAttemptFailed(attempt: Attempt, status: StatusObject, timedOut: boolean): void {
    const policy = this.policy;
    const hint = timedOut ? NO_HINT : readServerHint(status.metadata, this.ctx.retryInfo);
    const failure = { code: status.code, hint, timedOut };
    if (countsAgainstServer(policy, failure)) this.ctx.gate?.recordFailure();
    const decision = decideAfterFailure({
      policy,
      failure,
      attemptsStarted: this.attemptsStarted,
      backoff: this.backoff ?? initialBackoffState(policy as RetryPolicy),
      jitter: this.ctx.jitter,
      random: policy.kind === 'retry' ? this.ctx.random() : 0,
      now: this.ctx.clock.now(),
      deadline: this.deadline,
      deadlineAware: this.ctx.deadlineAware,
      replayFits: () => this.replay.reserveAll(),
      gateAllows: () => this.gateAllows('retry'),
    });
    this.carryOut(decision, attempt, status);
  }

  private carryOut(decision: FailureDecision, attempt: Attempt, status: StatusObject): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight') return;
    switch (decision.type) {
      case 'finish':
        if (decision.reason === 'replay-buffer') this.events?.committed(attempt.number, 'buffer-overflow');
        this.end(endStatus(status, decision.reason, attempt.cancelReason), 'call-ended');
        return;
      case 'retry':
        this.backoff = decision.backoff;
        this.events?.retryScheduled(this.attemptsStarted + 1, decision.delayMs, decision.reason);
        this.waitThenStart('retry', decision.delayMs, status);
        return;
      case 'hedge-now':
        phase.lastFailure = status;
        this.scheduleHedge(0, 'non-fatal-status');
        return;
      case 'hedge-after':
        phase.lastFailure = status;
        this.scheduleHedge(decision.delayMs, decision.reason);
        return;
      case 'stop-hedging':
        phase.lastFailure = status;
        this.stopHedging(phase);
        return;
    }
  }

  // ---- hedging ----

  /** Send the next hedge after `delayMs` (at once when 0), then one every hedgingDelay. */
  private scheduleHedge(delayMs: number, reason: HedgeReason): void {
    let phase = this.phase;
    if (phase.tag !== 'in-flight' || this.policy.kind !== 'hedging') return;
    this.clearHedgeTimer(phase);
    while (phase.hedging && this.attemptsStarted < this.policy.maxAttempts) {
      this.events?.hedgeScheduled(this.attemptsStarted + 1, delayMs, reason);
      if (this.phase !== phase) return; // a listener ended the call
      if (delayMs > 0) {
        if (phase.live.length === 0) {
          this.waitThenStart('hedge', delayMs, phase.lastFailure as StatusObject);
        } else {
          phase.hedgeTimer = this.setTimerBeforeDeadline(delayMs, () => this.onHedgeTimer());
        }
        return;
      }
      if (!this.trySendHedge()) return;
      phase = this.phase;
      if (phase.tag !== 'in-flight') return;
      delayMs = this.hedgeDelayMs;
      reason = this.hedgeDelayReason;
    }
    this.finishIfHedgingIsOver();
  }

  private onHedgeTimer(): void {
    if (this.phase.tag === 'in-flight') this.phase.hedgeTimer = undefined;
    this.sendHedge();
  }

  /** A hedge timer fired: send the hedge, then schedule the next. */
  private sendHedge(): void {
    if (this.policy.kind !== 'hedging' || !this.trySendHedge()) return;
    this.scheduleHedge(this.hedgeDelayMs, this.hedgeDelayReason);
  }

  /** Sends one hedge if the rules allow it; otherwise stops hedging. True when it went. */
  private trySendHedge(): boolean {
    const verdict = decideHedgeSend({
      maxAttempts: this.policy.maxAttempts,
      attemptsStarted: this.attemptsStarted,
      replayFits: () => this.replay.reserveAll(),
      gateAllows: () => this.gateAllows('hedge'),
    });
    if (verdict.type === 'send') {
      this.startAttempt('hedge');
      return this.phase.tag === 'in-flight';
    }
    const phase = this.phase;
    if (phase.tag === 'in-flight' && this.budgetRefused && phase.live.length > 0) {
      // The hedge budget is empty now: ask again one hedging delay later, while the call is still outstanding,
      // rather than give up hedging for the call (only slow calls then compete for what flows back in).
      phase.hedgeTimer = this.setTimerBeforeDeadline(this.hedgeDelayMs, () => this.onHedgeTimer());
      return false;
    }
    if (phase.tag === 'waiting') {
      // Nothing in flight and nothing more to send: the last failure is the result.
      this.end(phase.lastFailure, 'call-ended');
    } else if (phase.tag === 'in-flight') {
      // A6: on a full replay buffer, keep the attempt that has sent the most.
      if (verdict.reason === 'replay-buffer' && phase.live.length > 0)
        this.commit(mostAdvanced(phase.live), 'buffer-overflow');
      else this.stopHedging(phase);
    }
    return false;
  }

  private stopHedging(phase: Extract<CallPhase, { tag: 'in-flight' }>): void {
    phase.hedging = false;
    this.clearHedgeTimer(phase);
    this.finishIfHedgingIsOver();
  }

  /** When no attempt is in flight and none is coming, the last failure is the result. */
  private finishIfHedgingIsOver(): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight' || phase.live.length > 0 || phase.hedgeTimer !== undefined) return;
    const last = phase.lastFailure ?? {
      code: Status.UNAVAILABLE,
      details: 'no hedge could be sent',
      metadata: new Metadata(),
    };
    this.end(last, 'call-ended');
  }

  private clearHedgeTimer(phase: Extract<CallPhase, { tag: 'in-flight' }>): void {
    if (phase.hedgeTimer === undefined) return;
    this.ctx.clock.clearTimer(phase.hedgeTimer);
    phase.hedgeTimer = undefined;
  }

  // ---- phases ----

  /** The one place where the phase changes: it checks the move and undoes what the old phase held. */
  private transition(next: CallPhase): void {
    const current = this.phase;
    if (!isLegalTransition(current.tag, next.tag)) {
      throw new Error(`RetryingCall: no transition from ${current.tag} to ${next.tag}`);
    }
    if (current.tag === 'in-flight') this.clearHedgeTimer(current);
    if (current.tag === 'waiting' && current.timer !== undefined) this.ctx.clock.clearTimer(current.timer);
    this.phase = next;
    this.committedTo = next.tag === 'committed' ? next.attempt : undefined;
  }

  /** No attempt in flight: wait `delayMs`, then send the next attempt (unless the deadline comes first). */
  private waitThenStart(next: 'retry' | 'hedge', delayMs: number, lastFailure: StatusObject): void {
    const waiting: CallPhase = {
      tag: 'waiting',
      next,
      timer: undefined,
      since: this.ctx.clock.now(),
      lastFailure,
      commitNext: false,
    };
    this.transition(waiting);
    waiting.timer = this.setTimerBeforeDeadline(delayMs, () => {
      waiting.timer = undefined;
      if (next === 'retry') this.startAttempt('retry');
      else this.sendHedge();
    });
  }

  private commit(attempt: Attempt, reason: CommitReason): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight') return;
    this.stopRecvTimer(attempt);
    const live = phase.live;
    if (this.ctx.adaptive && reason !== 'buffer-overflow' && this.policy.kind === 'hedging') {
      this.recordLatencies(attempt, live);
    }
    this.transition({ tag: 'committed', attempt });
    if (live.length > 1) {
      for (const loser of live) if (loser !== attempt) this.cancelAttempt(loser, 'other-attempt-committed');
    }
    this.replay.release();
    this.replay.dropBefore(writtenBy(attempt));
    this.events?.committed(attempt.number, reason);
  }

  /** The call's status is decided: stop everything, then tell the application (on the next tick for a cancel). */
  private end(status: StatusObject, cancelReason: AttemptCancelReason, deliverLater = false): void {
    const phase = this.phase;
    if (phase.tag === 'ended') return;
    if (phase.tag === 'waiting') this.retryDelayMs += this.ctx.clock.now() - phase.since;
    this.transition(ENDED);
    // Ended now: cancelling an attempt no longer touches the old phase's list.
    if (phase.tag === 'in-flight') {
      for (const attempt of phase.live) this.cancelOnEnd(attempt, status, cancelReason);
    } else if (phase.tag === 'committed') {
      this.cancelOnEnd(phase.attempt, status, cancelReason);
    }
    const waiting = this.replay.clear();
    if (waiting) for (const callback of waiting) process.nextTick(callback);
    if (status.code === Status.OK) this.ctx.gate?.recordSuccess();
    // The attempt count, visible to the caller in the trailers (as grpc-java does); absent means one attempt.
    if (this.attemptsStarted > 1)
      status.metadata?.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(this.attemptsStarted - 1));
    this.events?.callEnd(status, this.attemptsStarted, this.retryDelayMs);
    const listener = this.listener;
    this.listener = undefined;
    this.metadata = undefined;
    if (deliverLater) process.nextTick(() => listener?.onReceiveStatus?.(status));
    else listener?.onReceiveStatus?.(status);
  }

  // ---- helpers ----

  /** At the end of the call: an attempt still in flight is cancelled (with the caller's status for a cancel). */
  private cancelOnEnd(attempt: Attempt, status: StatusObject, reason: AttemptCancelReason): void {
    if (attempt.state !== 'live') return;
    if (reason === 'call-cancelled') this.cancelAttempt(attempt, reason, status.code, status.details);
    else this.cancelAttempt(attempt, reason);
  }

  private setTimerBeforeDeadline(delayMs: number, action: () => void): unknown {
    const clock = this.ctx.clock;
    const remaining = this.deadline - clock.now();
    if (remaining <= delayMs) return clock.setTimer(() => this.endOnDeadline(), Math.max(0, remaining));
    return clock.setTimer(action, delayMs);
  }

  private endOnDeadline(): void {
    const phase = this.phase;
    const last =
      phase.tag === 'waiting' ? phase.lastFailure : phase.tag === 'in-flight' ? phase.lastFailure : undefined;
    const details = last
      ? `Deadline exceeded while waiting to retry (last attempt: ${Status[last.code] ?? last.code} ${last.details})`
      : 'Deadline exceeded';
    this.end({ code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() }, 'call-ended');
  }

  /**
   * The config's gate first (A6's throttle spends nothing when asked), then, for a hedge, the adaptive hedge budget
   * (which withdraws when it says yes).
   */
  private gateAllows(kind: 'retry' | 'hedge'): boolean {
    this.budgetRefused = false;
    const gate = this.ctx.gate;
    if (gate && !gate.allowAttempt(kind)) {
      this.events?.throttled(this.attemptsStarted + 1, kind, gate);
      return false;
    }
    const budget = kind === 'hedge' ? this.ctx.adaptive?.budget : undefined;
    if (budget && !budget.allowAttempt('hedge')) {
      // Reported once per hedge, however often the call asks again for it.
      if (this.budgetRefusedFor !== this.attemptsStarted + 1) {
        this.budgetRefusedFor = this.attemptsStarted + 1;
        this.events?.throttled(this.attemptsStarted + 1, kind, budget);
      }
      this.budgetRefused = true;
      return false;
    }
    return true;
  }

  /**
   * Adaptive hedging learns from the winner's time to its first response, and from the time so far of the losers
   * sent before it (a lower bound of theirs); a loser sent after the winner tells nothing. Fast failures never get
   * here, so they do not pull the delay down.
   */
  private recordLatencies(winner: Attempt, live: readonly Attempt[]): void {
    const adaptive = this.ctx.adaptive;
    if (!adaptive) return;
    const method = this.options.method_definition.path;
    const now = this.ctx.clock.now();
    adaptive.record(method, now - winner.startedAt);
    for (const loser of live) {
      if (loser !== winner && loser.startedAt < winner.startedAt)
        adaptive.record(method, now - loser.startedAt);
    }
  }

  private recordFailureIfCounted(status: StatusObject, timedOut: boolean): void {
    const hint = readServerHint(status.metadata, this.ctx.retryInfo);
    if (countsAgainstServer(this.policy, { code: status.code, hint, timedOut }))
      this.ctx.gate?.recordFailure();
  }

  private isCommitted(attempt: Attempt): boolean {
    return this.committedTo === attempt;
  }

  private visibleAttempt(): Attempt | undefined {
    return this.phase.tag === 'committed' ? this.phase.attempt : this.lastAttempt;
  }

  private pumpAll(): void {
    const phase = this.phase;
    if (phase.tag !== 'in-flight') return;
    const live = phase.live;
    if (live.length === 1) this.pump(live[0] as Attempt);
    else for (const attempt of live.slice()) this.pump(attempt);
  }

  private pump(attempt: Attempt): void {
    feedAttempt(attempt, this.replay, this.halfClosed, this.singleRequest);
  }
}

const ENDED: CallPhase = Object.freeze({ tag: 'ended' });

function deadlineToMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === null) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}
