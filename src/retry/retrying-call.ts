import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import { errorMessage } from '../util/error-message.js';
import { Backoff, type JitterStrategy } from './backoff.js';
import type { BufferPool } from './buffer-pool.js';
import type { AttemptCancelReason, AttemptKind, RetryEvent } from './events.js';
import type { InterceptingCallInterface, MessageContext } from './grpc-types.js';
import { type Pushback, parsePushback } from './pushback.js';
import type { RetryGate } from './retry-gate.js';

/** Request header telling the server how many attempts preceded this one (A6). */
export const PREVIOUS_ATTEMPTS_METADATA_KEY = 'grpc-previous-rpc-attempts';

/** Node's setTimeout fires at once for delays of 2^31 ms or more. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * What the calls of one interceptor share.
 * @internal
 */
export interface RetryingCallContext {
  readonly pool: BufferPool;
  readonly throttle: RetryGate | undefined;
  readonly random: () => number;
  readonly jitter: JitterStrategy;
  /** End at once with the last status rather than start a backoff that would outlast the deadline. */
  readonly deadlineAware: boolean;
  nextCallId(): number;
}

type AttemptState = 'live' | 'cancelled' | 'done';

/** One attempt of a call; it is also the listener grpc-js reports the attempt's responses to. */
class Attempt implements InterceptingListener {
  state: AttemptState = 'live';
  cancelReason: AttemptCancelReason | undefined;
  /** Absolute index of the next message of the call's log to hand to this attempt. */
  sent: number;
  /** A message was handed over and its write has not completed: grpc-js takes one at a time. */
  writing = false;
  halfCloseSent = false;
  /** Write-completion callback, one per attempt (only one write is in flight at a time). */
  readonly onWriteDone = (): void => this.owner.onWritten(this);

  constructor(
    private readonly owner: RetryingCall,
    readonly number: number,
    readonly kind: AttemptKind,
    readonly call: InterceptingCallInterface,
    readonly startedAt: number,
    firstIndex: number,
  ) {
    this.sent = firstIndex;
  }

  onReceiveMetadata(metadata: Metadata): void {
    this.owner.onAttemptMetadata(this, metadata);
  }

  onReceiveMessage(message: unknown): void {
    this.owner.onAttemptMessage(this, message);
  }

  onReceiveStatus(status: StatusObject): void {
    this.owner.onAttemptStatus(this, status);
  }
}

interface LoggedMessage {
  readonly message: unknown;
  readonly flags: number | undefined;
  /** Serialized size reserved in the pool; -1 while not measured yet. */
  bytes: number;
  /** The application's write callback, while it waits for an attempt to take the message. */
  callback: (() => void) | undefined;
}

function deadlineToMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined || deadline === null) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * One logical call under a retry or hedging policy: the A6 state machine shared by both.
 *
 * It sits where grpc-js expects an intercepting call, starts attempts through `nextCall`, buffers what the
 * application sends so it can replay it, commits to one attempt on response headers, a response message, an OK
 * status or a buffer overflow, and reports exactly one status to the application.
 * @internal
 */
export class RetryingCall implements InterceptingCallInterface {
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private readonly live: Attempt[] = [];
  private lastAttempt: Attempt | undefined;
  private attemptsStarted = 0;
  private committed: Attempt | undefined;
  /** The replay buffer overflowed while no attempt was in flight: the next attempt is the last. */
  private commitNextAttempt = false;
  private ended = false;
  private cancelled = false;
  /** Messages the application sent that some attempt may still need, in order; log[0] has index logBase. */
  private log: LoggedMessage[] = [];
  private logBase = 0;
  /** Bytes reserved in the shared pool for replay; 0 once committed. */
  private bufferedBytes = 0;
  private halfClosed = false;
  private readRequested = false;
  private timer: NodeJS.Timeout | undefined;
  private backoff: Backoff | undefined;
  private lastFailure: StatusObject | undefined;
  private hedgesStopped = false;
  private idleSince = -1;
  private retryDelayMs = 0;
  private startedAt = 0;
  private readonly deadlineMs: number;
  private readonly method: string;
  private readonly callId: number;
  private firstCall: InterceptingCallInterface | undefined;
  /**
   * The method has no request stream: one message, half-closed at once. That message is measured only when a
   * second attempt needs it (serializing it twice on every call would be the largest cost of the interceptor).
   */
  private readonly singleRequest: boolean;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly policy: CallPolicy,
    private readonly ctx: RetryingCallContext,
    /** Event sink of this call; undefined when nobody listens, so that events cost nothing then. */
    private readonly emit: ((event: RetryEvent) => void) | undefined,
  ) {
    this.method = options.method_definition.path;
    this.deadlineMs = deadlineToMs(options.deadline);
    this.callId = ctx.nextCallId();
    this.singleRequest = !options.method_definition.requestStream;
    // Created now, as grpc-js would without us, so that a closed channel throws where it always did.
    this.firstCall = nextCall(options);
  }

  // ---- InterceptingCallInterface: what the application (through grpc-js) does ----

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    this.startedAt = Date.now();
    this.ctx.throttle?.recordCall?.();
    this.emit?.({
      type: 'call-start',
      method: this.method,
      callId: this.callId,
      policy: this.policy.kind,
      maxAttempts: this.policy.maxAttempts,
      deadline: this.deadlineMs,
    });
    this.startAttempt('original');
    if (this.policy.kind === 'hedging') this.continueHedging(this.policy.hedgingDelayMs, 'hedging-delay');
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    if (this.ended || this.cancelled) {
      if (context.callback) process.nextTick(context.callback);
      return;
    }
    if (this.committed) {
      this.log.push({ message, flags: context.flags, callback: context.callback, bytes: 0 });
      this.pump(this.committed);
      return;
    }
    const bytes = this.singleRequest ? -1 : this.measure(message);
    if (bytes < 0 || this.ctx.pool.tryReserve(this.bufferedBytes, bytes)) {
      if (bytes > 0) this.bufferedBytes += bytes;
      this.log.push({ message, flags: context.flags, callback: undefined, bytes });
      // Safe in the replay buffer: the writer may go on at once.
      if (context.callback) process.nextTick(context.callback);
      this.pumpAll();
      return;
    }
    // The replay buffer overflows: commit to the attempt that has sent the most (A6).
    this.log.push({ message, flags: context.flags, callback: context.callback, bytes: 0 });
    const target = this.attemptThatSentMost();
    if (target) {
      this.commit(target, 'buffer-overflow');
      this.pump(target);
    } else {
      // Between attempts: the next attempt carries the whole log once, and is the last.
      this.commitNextAttempt = true;
    }
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    if (this.ended || this.cancelled || this.halfClosed) return;
    this.halfClosed = true;
    this.pumpAll();
  }

  startRead(): void {
    if (this.ended || this.cancelled) return;
    if (this.committed) {
      this.committed.call.startRead();
      return;
    }
    if (this.readRequested) return;
    this.readRequested = true;
    const live = this.live;
    if (live.length === 1) (live[0] as Attempt).call.startRead();
    else for (const attempt of live.slice()) attempt.call.startRead();
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.ended || this.cancelled) return;
    this.cancelled = true;
    this.clearTimer();
    if (this.firstCall) {
      // Cancelled before start: nothing went out, but let grpc-js release what it holds for the call.
      this.firstCall.cancelWithStatus(code, details);
      this.firstCall = undefined;
    }
    for (const attempt of this.live.slice()) this.cancelAttempt(attempt, code, details, 'call-cancelled');
    const status: StatusObject = { code, details, metadata: new Metadata() };
    process.nextTick(() => this.finish(status));
  }

  getPeer(): string {
    const attempt = this.committed ?? this.lastAttempt;
    return attempt ? attempt.call.getPeer() : '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    const attempt = this.committed ?? this.lastAttempt;
    return attempt ? attempt.call.getAuthContext() : null;
  }

  // ---- attempts ----

  private startAttempt(kind: AttemptKind): void {
    const number = this.attemptsStarted + 1;
    let call: InterceptingCallInterface;
    if (this.firstCall) {
      call = this.firstCall;
      this.firstCall = undefined;
    } else {
      try {
        call = this.nextCall(this.options);
      } catch (error) {
        this.finish({
          code: Status.UNAVAILABLE,
          details: `could not start attempt ${number}: ${errorMessage(error)}`,
          metadata: new Metadata(),
        });
        return;
      }
    }
    this.attemptsStarted = number;
    const now = Date.now();
    if (this.idleSince >= 0) {
      this.retryDelayMs += now - this.idleSince;
      this.idleSince = -1;
    }
    const metadata = (this.metadata as Metadata).clone();
    if (number > 1) metadata.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(number - 1));
    const attempt = new Attempt(this, number, kind, call, now, this.logBase);
    this.live.push(attempt);
    this.lastAttempt = attempt;
    this.emit?.({
      type: 'attempt-start',
      method: this.method,
      callId: this.callId,
      attempt: number,
      kind,
      previousAttempts: number - 1,
      metadata,
    });
    call.start(metadata, attempt);
    this.pump(attempt);
    if (attempt.state !== 'live') return;
    if (this.readRequested) call.startRead();
    if (this.commitNextAttempt && !this.committed && attempt.state === 'live') {
      this.commit(attempt, 'buffer-overflow');
    }
  }

  private cancelAttempt(attempt: Attempt, code: Status, details: string, reason: AttemptCancelReason): void {
    if (attempt.state !== 'live') return;
    attempt.state = 'cancelled';
    attempt.cancelReason = reason;
    this.removeLive(attempt);
    attempt.call.cancelWithStatus(code, details);
  }

  private removeLive(attempt: Attempt): void {
    const live = this.live;
    if (live.length === 1 && live[0] === attempt) {
      live.pop();
      return;
    }
    const index = live.indexOf(attempt);
    if (index >= 0) live.splice(index, 1);
  }

  private pumpAll(): void {
    const live = this.live;
    if (live.length === 1) this.pump(live[0] as Attempt);
    else for (const attempt of live.slice()) this.pump(attempt);
  }

  private attemptThatSentMost(): Attempt | undefined {
    let target: Attempt | undefined;
    for (const attempt of this.live) {
      if (!target || attempt.sent > target.sent) target = attempt;
    }
    return target;
  }

  /**
   * Reserve replay-buffer room for what a further attempt must resend (lazily measured messages are measured now).
   * False when it does not fit: the call may then make no further attempt.
   */
  private fitsReplayBuffer(): boolean {
    for (const entry of this.log) {
      if (entry.bytes >= 0) continue;
      const bytes = this.measure(entry.message);
      if (!this.ctx.pool.tryReserve(this.bufferedBytes, bytes)) return false;
      this.bufferedBytes += bytes;
      entry.bytes = bytes;
    }
    return true;
  }

  /** @internal */
  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void {
    if (attempt.state !== 'live' || this.ended) return;
    if (!this.committed) this.commit(attempt, 'headers');
    if (this.committed === attempt) this.listener?.onReceiveMetadata?.(metadata);
  }

  /** @internal */
  onAttemptMessage(attempt: Attempt, message: unknown): void {
    if (attempt.state !== 'live' || this.ended) return;
    if (this.committed !== attempt) {
      if (this.committed) return;
      // grpc-js hands unary listeners a null message before a status that came without one: not a response.
      if (message === null && !this.options.method_definition.responseStream) return;
      this.commit(attempt, 'message');
    }
    this.readRequested = false;
    this.listener?.onReceiveMessage?.(message);
  }

  /** @internal */
  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    if (attempt.state === 'done') return;
    const wasLive = attempt.state === 'live';
    attempt.state = 'done';
    if (wasLive) this.removeLive(attempt);
    this.emit?.({
      type: 'attempt-end',
      method: this.method,
      callId: this.callId,
      attempt: attempt.number,
      kind: attempt.kind,
      ...(attempt.cancelReason ? { cancelReason: attempt.cancelReason } : {}),
      code: status.code,
      details: status.details,
      durationMs: Date.now() - attempt.startedAt,
    });
    if (!wasLive || this.ended) return;
    if (this.committed === attempt) {
      // Committed: no further attempt, but a failure still counts against the server (A6 throttling).
      if (status.code !== Status.OK) this.countFailure(status);
      this.finish(status);
      return;
    }
    if (this.committed) return;
    this.onUncommittedStatus(attempt, status);
  }

  /**
   * A6 throttling: a failure with a retryable (hedging: non-fatal) code, or with a do-not-retry pushback, takes a
   * token. Returns what the decision to retry needs.
   */
  private countFailure(status: StatusObject): { retryable: boolean; pushback: Pushback } {
    const policy = this.policy;
    const codes = policy.kind === 'retry' ? policy.retryableStatusCodes : policy.nonFatalStatusCodes;
    const retryable = codes.includes(status.code);
    const pushback = parsePushback(status.metadata);
    if (retryable || pushback.kind === 'do-not-retry') this.ctx.throttle?.recordFailure();
    return { retryable, pushback };
  }

  private onUncommittedStatus(attempt: Attempt, status: StatusObject): void {
    if (status.code === Status.OK) {
      this.commit(attempt, 'status');
      this.finish(status);
      return;
    }
    const { retryable, pushback } = this.countFailure(status);
    if (status.code === Status.DEADLINE_EXCEEDED && Number.isFinite(this.deadlineMs)) {
      // The call's own deadline (shared by all attempts) has passed.
      this.finish(status);
      return;
    }
    if (this.policy.kind === 'retry') this.afterRetryableFailure(status, retryable, pushback);
    else this.afterHedgeFailure(status, retryable, pushback);
  }

  // ---- retries ----

  private afterRetryableFailure(status: StatusObject, retryable: boolean, pushback: Pushback): void {
    const policy = this.policy;
    if (policy.kind !== 'retry') return;
    if (
      !retryable ||
      pushback.kind === 'do-not-retry' ||
      this.attemptsStarted >= policy.maxAttempts ||
      this.commitNextAttempt ||
      this.deadlinePassed()
    ) {
      this.finish(status);
      return;
    }
    if (!this.throttleAllows('retry')) {
      this.finish(status);
      return;
    }
    if (!this.fitsReplayBuffer()) {
      this.emit?.({
        type: 'committed',
        method: this.method,
        callId: this.callId,
        attempt: this.attemptsStarted,
        reason: 'buffer-overflow',
      });
      this.finish(status);
      return;
    }
    let delayMs: number;
    let reason: 'backoff' | 'pushback';
    if (pushback.kind === 'retry-after') {
      delayMs = pushback.delayMs;
      reason = 'pushback';
      this.backoff?.reset();
    } else {
      this.backoff ??= new Backoff(policy, this.ctx.jitter, this.ctx.random);
      delayMs = this.backoff.next();
      reason = 'backoff';
    }
    if (this.ctx.deadlineAware && Date.now() + delayMs >= this.deadlineMs) {
      this.finish(status);
      return;
    }
    this.lastFailure = status;
    this.emit?.({
      type: 'retry-scheduled',
      method: this.method,
      callId: this.callId,
      attempt: this.attemptsStarted + 1,
      delayMs,
      reason,
    });
    this.idleSince = Date.now();
    this.schedule(delayMs, () => this.startAttempt('retry'));
  }

  // ---- hedging ----

  private afterHedgeFailure(status: StatusObject, nonFatal: boolean, pushback: Pushback): void {
    if (!nonFatal) {
      this.finish(status);
      return;
    }
    this.lastFailure = status;
    if (pushback.kind === 'do-not-retry') {
      this.hedgesStopped = true;
      this.clearTimer();
    } else if (pushback.kind === 'retry-after') {
      this.continueHedging(pushback.delayMs, 'pushback');
    } else {
      this.continueHedging(0, 'non-fatal-status');
    }
    this.finishIfHedgingIsOver();
  }

  private canHedgeMore(): boolean {
    return (
      this.policy.kind === 'hedging' &&
      !this.ended &&
      !this.cancelled &&
      !this.committed &&
      !this.hedgesStopped &&
      !this.commitNextAttempt &&
      this.attemptsStarted < this.policy.maxAttempts
    );
  }

  /** Send the next hedge after `delayMs` (at once when 0), then keep sending them every hedgingDelay. */
  private continueHedging(delayMs: number, reason: 'hedging-delay' | 'non-fatal-status' | 'pushback'): void {
    this.clearTimer();
    if (this.policy.kind !== 'hedging') return;
    const hedgingDelayMs = this.policy.hedgingDelayMs;
    while (this.canHedgeMore()) {
      this.emit?.({
        type: 'hedge-scheduled',
        method: this.method,
        callId: this.callId,
        attempt: this.attemptsStarted + 1,
        delayMs,
        reason,
      });
      if (delayMs > 0) {
        if (this.live.length === 0) this.idleSince = Date.now();
        this.schedule(delayMs, () => {
          if (this.sendHedge()) this.continueHedging(hedgingDelayMs, 'hedging-delay');
          else this.finishIfHedgingIsOver();
        });
        return;
      }
      if (!this.sendHedge()) {
        this.finishIfHedgingIsOver();
        return;
      }
      delayMs = hedgingDelayMs;
      reason = 'hedging-delay';
    }
  }

  private sendHedge(): boolean {
    if (!this.canHedgeMore()) return false;
    if (!this.throttleAllows('hedge')) {
      this.hedgesStopped = true;
      return false;
    }
    if (!this.fitsReplayBuffer()) {
      // A6: keep the attempt that has sent the most, or, with none in flight, send nothing more.
      this.hedgesStopped = true;
      const target = this.attemptThatSentMost();
      if (target) this.commit(target, 'buffer-overflow');
      return false;
    }
    this.startAttempt('hedge');
    return true;
  }

  /** When no attempt is in flight and none is coming, the last failure is the result. */
  private finishIfHedgingIsOver(): void {
    if (this.ended || this.committed || this.live.length > 0 || this.timer !== undefined) return;
    this.finish(
      this.lastFailure ?? {
        code: Status.UNAVAILABLE,
        details: 'no hedge could be sent',
        metadata: new Metadata(),
      },
    );
  }

  // ---- commit, buffers, timers, end ----

  private commit(attempt: Attempt, reason: 'headers' | 'message' | 'status' | 'buffer-overflow'): void {
    this.committed = attempt;
    this.clearTimer();
    if (this.live.length > 1) {
      for (const other of this.live.slice()) {
        if (other !== attempt)
          this.cancelAttempt(other, Status.CANCELLED, 'another attempt committed', 'other-attempt-committed');
      }
    }
    this.ctx.pool.release(this.bufferedBytes);
    this.bufferedBytes = 0;
    this.freeWritten(attempt);
    this.emit?.({
      type: 'committed',
      method: this.method,
      callId: this.callId,
      attempt: attempt.number,
      reason,
    });
  }

  private measure(message: unknown): number {
    try {
      return this.options.method_definition.requestSerialize(message).length;
    } catch {
      return 0; // the attempt itself will fail with the serialization error
    }
  }

  /**
   * Hand `attempt` the next message of the log it has not had, one at a time as grpc-js requires, then the
   * half-close.
   */
  private pump(attempt: Attempt): void {
    if (attempt.state !== 'live') return;
    const end = this.logBase + this.log.length;
    if (!attempt.writing && attempt.sent < end) {
      const entry = this.log[attempt.sent - this.logBase] as LoggedMessage;
      attempt.sent += 1;
      attempt.writing = true;
      attempt.call.sendMessageWithContext(
        { flags: entry.flags, callback: attempt.onWriteDone },
        entry.message,
      );
    }
    // The half-close goes right behind the last message for a single request, as grpc-js's own unary path sends
    // it; for a request stream only once the last write completed, as grpc-js's writable stream does (older
    // grpc-js versions can lose a streamed message that a half-close overtakes).
    if (
      this.halfClosed &&
      !attempt.halfCloseSent &&
      attempt.state === 'live' &&
      attempt.sent >= end &&
      (!attempt.writing || this.singleRequest)
    ) {
      attempt.halfCloseSent = true;
      attempt.call.halfClose();
    }
  }

  /** @internal */
  onWritten(attempt: Attempt): void {
    attempt.writing = false;
    const entry = this.log[attempt.sent - 1 - this.logBase];
    if (entry?.callback) {
      const callback = entry.callback;
      entry.callback = undefined;
      callback();
    }
    if (this.committed === attempt) this.freeWritten(attempt);
    this.pump(attempt);
  }

  /** Once committed, what the committed attempt has written is needed no more. */
  private freeWritten(attempt: Attempt): void {
    const written = (attempt.writing ? attempt.sent - 1 : attempt.sent) - this.logBase;
    if (written <= 0) return;
    this.log.splice(0, written);
    this.logBase += written;
  }

  /** At the end of the call: drop the log and release every writer still waiting. */
  private dropLog(): void {
    this.ctx.pool.release(this.bufferedBytes);
    this.bufferedBytes = 0;
    const log = this.log;
    this.logBase += log.length;
    this.log = [];
    for (const entry of log) {
      if (entry.callback) process.nextTick(entry.callback);
    }
  }

  private throttleAllows(kind: 'retry' | 'hedge'): boolean {
    const throttle = this.ctx.throttle;
    if (!throttle || throttle.allowAttempt(kind)) return true;
    this.emit?.({
      type: 'throttled',
      method: this.method,
      callId: this.callId,
      attempt: this.attemptsStarted + 1,
      kind,
      gate: throttle.name ?? 'gate',
      tokens: throttle.tokens ?? Number.NaN,
    });
    return false;
  }

  private deadlinePassed(): boolean {
    return Date.now() >= this.deadlineMs;
  }

  /** Run `action` after `delayMs`, unless the deadline comes first: then the call ends with DEADLINE_EXCEEDED. */
  private schedule(delayMs: number, action: () => void): void {
    this.clearTimer();
    const dueAt = Date.now() + delayMs;
    const deadlineFirst = this.deadlineMs <= dueAt;
    const target = deadlineFirst ? this.deadlineMs : dueAt;
    const arm = () => {
      const remaining = target - Date.now();
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          if (remaining > MAX_TIMER_MS) arm();
          else if (deadlineFirst) this.finishOnDeadline();
          else action();
        },
        Math.max(0, Math.min(remaining, MAX_TIMER_MS)),
      );
    };
    arm();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private finishOnDeadline(): void {
    const last = this.lastFailure;
    const details = last
      ? `Deadline exceeded while waiting to retry (last attempt: ${Status[last.code] ?? last.code} ${last.details})`
      : 'Deadline exceeded';
    this.finish({ code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() });
  }

  private finish(status: StatusObject): void {
    if (this.ended) return;
    this.ended = true;
    this.clearTimer();
    if (this.live.length > 0) {
      for (const attempt of this.live.slice()) {
        if (attempt !== this.committed)
          this.cancelAttempt(attempt, Status.CANCELLED, 'call ended', 'call-ended');
      }
    }
    this.dropLog();
    if (this.idleSince >= 0) {
      this.retryDelayMs += Date.now() - this.idleSince;
      this.idleSince = -1;
    }
    if (status.code === Status.OK) this.ctx.throttle?.recordSuccess();
    // The attempt count, visible to the caller in the trailers (as grpc-java does); absent means no retry or hedge.
    if (this.attemptsStarted > 1)
      status.metadata?.set(PREVIOUS_ATTEMPTS_METADATA_KEY, String(this.attemptsStarted - 1));
    this.emit?.({
      type: 'call-end',
      method: this.method,
      callId: this.callId,
      code: status.code,
      details: status.details,
      attempts: this.attemptsStarted,
      retryDelayMs: this.retryDelayMs,
      durationMs: Date.now() - this.startedAt,
    });
    const listener = this.listener;
    this.listener = undefined;
    this.metadata = undefined;
    listener?.onReceiveStatus?.(status);
  }
}
