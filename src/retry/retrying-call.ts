import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { HedgingPolicy, RetryPolicy } from '../config/types.js';
import { type Attempt, mostAdvanced } from './attempt.js';
import { type BackoffState, initialBackoffState } from './backoff.js';
import type { RetryingCallContext } from './call-context.js';
import type { CallPhase } from './call-phase.js';
import { endStatus } from './call-phase.js';
import { ReplayBuffer } from './replay-buffer.js';
import {
  countsAgainstServer,
  decideAfterFailure,
  decideHedgeSend,
  type FailureDecision,
} from './retry-decision.js';
import { NO_HINT, readServerHint } from './server-hint.js';

type HedgeReason = 'hedging-delay' | 'adaptive-delay' | 'non-fatal-status' | 'pushback' | 'retry-info';

import { CallBase } from './call-base.js';

/**
 * One logical call under a retry or hedging policy: the A6 state machine shared by both.
 *
 * It sits where grpc-js expects an intercepting call, starts attempts through `nextCall`, keeps what the
 * application sends in a {@link ReplayBuffer}, commits to one attempt on response headers, a response message, an
 * OK status or a buffer overflow, and reports exactly one status to the application. What to do after a failed
 * attempt is decided by the pure functions of `retry-decision.ts`; this class only carries it out.
 * @internal
 */
export class RetryingCall extends CallBase {
  /** Where the backoff stands; created at the first retry decision. */
  private backoff: BackoffState | undefined;
  /** Hedging: the delay between hedges (the config's, or the adaptive one), and which it is. */
  private hedge: HedgeSchedule | undefined;
  /** Set by gateAllows when the adaptive hedge budget (not the config's gate) refused a hedge, and for which. */

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    this.ctx.gate?.recordCall?.();
    if (this.policy.kind === 'hedging') {
      this.hedge = hedgeScheduleOf(this.policy, this.ctx, this.options);
    }
    this.events?.callStart(this.policy, this.deadline);
    if (this.phase.tag === 'ended') {
      return;
    }
    this.startAttempt('original');
    if (this.hedge) {
      this.scheduleHedge(this.hedge.delayMs, this.hedge.reason);
    }
  }

  // ---- after a failure: decide, then carry the decision out ----

  protected onAttemptFailed(attempt: Attempt, status: StatusObject, timedOut: boolean): void {
    const policy = this.policy;
    const hint = timedOut ? NO_HINT : readServerHint(status.metadata, this.ctx.retryInfo);
    const failure = { code: status.code, hint, timedOut };
    if (countsAgainstServer(policy, failure)) {
      this.ctx.gate?.recordFailure();
    }
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
    if (phase.tag !== 'in-flight') {
      return;
    }
    switch (decision.type) {
      case 'finish':
        if (decision.reason === 'replay-buffer') {
          this.events?.committed(attempt.number, 'buffer-overflow');
        }
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
    if (phase.tag !== 'in-flight' || this.policy.kind !== 'hedging') {
      return;
    }
    this.clearHedgeTimer(phase);
    while (phase.hedging && this.attemptsStarted < this.policy.maxAttempts) {
      this.events?.hedgeScheduled(this.attemptsStarted + 1, delayMs, reason);
      if (this.phase !== phase) {
        return; // a listener ended the call
      }
      if (delayMs > 0) {
        if (phase.live.length === 0) {
          this.waitThenStart('hedge', delayMs, phase.lastFailure as StatusObject);
        } else {
          phase.hedgeTimer = this.setTimerBeforeDeadline(delayMs, () => this.onHedgeTimer());
        }
        return;
      }
      if (!this.trySendHedge()) {
        return;
      }
      phase = this.phase;
      if (phase.tag !== 'in-flight') {
        return;
      }
      delayMs = (this.hedge as HedgeSchedule).delayMs;
      reason = (this.hedge as HedgeSchedule).reason;
    }
    this.finishIfHedgingIsOver();
  }

  private onHedgeTimer(): void {
    if (this.phase.tag === 'in-flight') {
      this.phase.hedgeTimer = undefined;
    }
    this.sendHedge();
  }

  /** A hedge timer fired: send the hedge, then schedule the next. */
  private sendHedge(): void {
    if (this.policy.kind !== 'hedging' || !this.trySendHedge()) {
      return;
    }
    const hedge = this.hedge as HedgeSchedule;
    this.scheduleHedge(hedge.delayMs, hedge.reason);
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
    const hedge = this.hedge as HedgeSchedule;
    if (phase.tag === 'in-flight' && hedge.budgetRefused && phase.live.length > 0) {
      // The hedge budget is empty now: ask again one hedging delay later, while the call is still outstanding,
      // rather than give up hedging for the call (only slow calls then compete for what flows back in).
      phase.hedgeTimer = this.setTimerBeforeDeadline(hedge.delayMs, () => this.onHedgeTimer());
      return false;
    }
    if (phase.tag === 'waiting') {
      // Nothing in flight and nothing more to send: the last failure is the result.
      this.end(phase.lastFailure, 'call-ended');
    } else if (phase.tag === 'in-flight') {
      // A6: on a full replay buffer, keep the attempt that has sent the most.
      if (verdict.reason === 'replay-buffer' && phase.live.length > 0) {
        this.commit(mostAdvanced(phase.live), 'buffer-overflow');
      } else {
        this.stopHedging(phase);
      }
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
    if (phase.tag !== 'in-flight' || phase.live.length > 0 || phase.hedgeTimer !== undefined) {
      return;
    }
    const last = phase.lastFailure ?? {
      code: Status.UNAVAILABLE,
      details: 'no hedge could be sent',
      metadata: new Metadata(),
    };
    this.end(last, 'call-ended');
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
      if (next === 'retry') {
        this.startAttempt('retry');
      } else {
        this.sendHedge();
      }
    });
  }

  /**
   * The config's gate first (A6's throttle spends nothing when asked), then, for a hedge, the adaptive hedge budget
   * (which withdraws when it says yes).
   */
  private gateAllows(kind: 'retry' | 'hedge'): boolean {
    const hedge = this.hedge;
    if (hedge) {
      hedge.budgetRefused = false;
    }
    const gate = this.ctx.gate;
    if (gate && !gate.allowAttempt(kind)) {
      this.events?.throttled(this.attemptsStarted + 1, kind, gate);
      return false;
    }
    const budget = kind === 'hedge' ? this.ctx.adaptive?.budget : undefined;
    if (hedge && budget && !budget.allowAttempt('hedge')) {
      // Reported once per hedge, however often the call asks again for it.
      if (hedge.budgetRefusedFor !== this.attemptsStarted + 1) {
        hedge.budgetRefusedFor = this.attemptsStarted + 1;
        this.events?.throttled(this.attemptsStarted + 1, kind, budget);
      }
      hedge.budgetRefused = true;
      return false;
    }
    return true;
  }

  /**
   * Adaptive hedging learns, at the commit, whether the call's first attempt outlived the delay the call used:
   * the winner's time to its first response when the first attempt won, or the time so far of a first attempt
   * still running when a hedge won (a lower bound, flagged as superseded). A first attempt that already failed
   * tells nothing here: fast failures do not pull the delay down.
   */
  protected recordLatencies(winner: Attempt, live: readonly Attempt[]): void {
    const adaptive = this.ctx.adaptive;
    const first = winner.number === 1 ? winner : live.find((a) => a.number === 1);
    if (!adaptive || !this.hedge || first === undefined) {
      return;
    }
    const latencyMs = this.ctx.clock.now() - first.startedAt;
    adaptive.recordOutcome(
      this.options.method_definition.path,
      this.hedge.delayMs,
      latencyMs,
      first !== winner,
    );
  }
}

/** Per-call hedging state: the delay between hedges (the config's or the adaptive one), and budget refusals. */
interface HedgeSchedule {
  readonly delayMs: number;
  readonly reason: 'hedging-delay' | 'adaptive-delay';
  /** The adaptive hedge budget (not the config's gate) refused the last hedge asked for. */
  budgetRefused: boolean;
  /** The attempt number the budget last refused, so that a refusal is reported once. */
  budgetRefusedFor: number;
}

/** The hedge delay of a call: the config's, or (adaptive hedging) the method's observed percentile. */
function hedgeScheduleOf(
  policy: HedgingPolicy,
  ctx: RetryingCallContext,
  options: InterceptorOptions,
): HedgeSchedule {
  const adaptive = ctx.adaptive;
  let delayMs = policy.hedgingDelayMs;
  let reason: HedgeSchedule['reason'] = 'hedging-delay';
  if (adaptive) {
    adaptive.budget?.recordCall();
    const choice = adaptive.delayFor(options.method_definition.path, policy.hedgingDelayMs);
    delayMs = choice.delayMs;
    if (choice.adaptive) {
      reason = 'adaptive-delay';
    }
  }
  return { delayMs, reason, budgetRefused: false, budgetRefusedFor: 0 };
}
