import type { HedgingPolicy } from '../config/types.js';
import type { TimerHandle } from '../shared/clock.js';
import type { HedgeDelaySource } from '../shared/hedge-delay-source.js';
import type { GateVerdict } from '../shared/retry-gate.js';
import type { Attempt } from './attempt.js';
import type { AttemptSet } from './attempt-set.js';
import type { RetryingCallContext } from './call-context.js';
import type { CallEvents } from './call-events.js';
import type { CallEndReason, HedgeScheduledEvent } from './events.js';
import type { ReplayBuffer } from './replay-buffer.js';
import { decideHedgeSend, type HedgeFailureDecision, type HedgeSendDecision } from './retry-decision.js';

/** The shortest wait before a hedge the budget refused asks it again. */
const MIN_BUDGET_ASK_INTERVAL_MS = 1;

/**
 * A hedge timer that fires more than this after its due time (ms) lets pending I/O run before the hedge goes. Node's
 * timers fire up to a millisecond late on an idle loop, and `Date.now()` counts whole milliseconds.
 */
const LATE_TIMER_MS = 1;

/**
 * A hedge timer of at least this long that fires with the clock reading exactly the time it was set at finds a
 * clock that stands still (a test that froze `Date`), not one a millisecond behind Node's timers: the hedge goes
 * rather than wait out the whole delay again, as it does when the clock reads earlier than when the timer was set
 * (it stepped back). A timer set late in a long turn of the event loop can fire with the clock unmoved too, but
 * only when the turn ran as long as the delay.
 */
const STILL_CLOCK_MIN_DELAY_MS = 20;

/** What the hedge scheduler asks of its call. @internal */
export interface HedgeHost {
  /** The call has not committed or ended (a listener may end it inside any step). */
  readonly uncommitted: boolean;
  /** Uncommitted, and not waiting out a delay with nothing in flight. */
  readonly inFlight: boolean;
  /** Send one hedge now. */
  startHedge(): void;
  /** Nothing is in flight: wait `delayMs` with no attempt out, then tell {@link HedgeScheduler.onWaitOver}. */
  waitForHedge(delayMs: number): void;
  /** The interceptor's gate (A6 throttle or the `gate` option), reporting a refusal. */
  askGate(kind: 'hedge'): GateVerdict;
  /** Adaptive hedging for this call (its target's, or the one given); undefined: the policy's hedgingDelay. */
  readonly adaptive: HedgeDelaySource | undefined;
  /** The replay buffer cannot hold another hedge: commit to the attempt that has sent the most (A6). */
  commitMostAdvanced(): void;
  /** Nothing is in flight and nothing more will go: the call ends with its last failure. */
  finishWithLastFailure(): void;
  /** Runs `action` after `delayMs`, or ends the call at its deadline when that comes first. */
  setTimerBeforeDeadline(delayMs: number, action: () => void): TimerHandle;
  /** When the clock reads the call's deadline as passed, ends the call at its deadline and says so. */
  endIfPastDeadline(): boolean;
  /** No further attempt follows, for `reason` (what the call's end reports). */
  noFurtherAttempt(reason: CallEndReason): void;
}

/**
 * The hedging schedule of one call (made only for hedging policies): the timer of the next hedge, the delay
 * between hedges (the config's, or adaptive hedging's for the method), sending each hedge when A6's rules and the
 * gates allow it, asking an empty hedge budget again one delay later, and what the winner tells adaptive hedging.
 * @internal
 */
export class HedgeScheduler {
  /** The delay between hedges, and where it comes from. */
  private readonly delayMs: number;
  private readonly reason: 'hedging-delay' | 'adaptive-delay';
  /** The timer of the next hedge, while one is due, and when it is due (clock ms). */
  private timer: TimerHandle | undefined;
  private dueAt = 0;
  /** The timer fired before the clock said the hedge was due, and was set again for the rest (once per timer). */
  private rearmed = false;
  /** When the hedge timer was set (clock ms). */
  private setAt = 0;
  /** A late timer's hedge, waiting for the I/O that came in while the event loop was held (see onTimer). */
  private deferred: ReturnType<typeof setImmediate> | undefined;
  /** Further hedges may still be sent (a do-not-retry hint, exhaustion or a refusal closes the schedule). */
  private open = true;
  /** The next hedge has been scheduled at least once (by {@link begin}, or by a failure before it). */
  private scheduled = false;
  /** The hedge held until the method's next answer (its calls stall): forgets the wait. */
  private unhold: (() => void) | undefined;
  /** The held hedge was released: it goes once the I/O polled with the answer is read (cleared by {@link stop}). */
  private released: ReturnType<typeof setImmediate> | undefined;
  /** The attempt number last told to adaptive hedging as due, so that a hedge asked again is not counted twice. */
  private dueToldFor = 0;
  /** The attempt number the hedge budget last refused, so that a refusal is reported once. */
  private budgetRefusedFor = 0;
  /**
   * The attempt number of a hedge the gates allowed when it was decided, to go after a wait with nothing in flight
   * (see {@link schedule}): not asked of them again when the wait is over.
   */
  private allowedFor = 0;
  private readonly budget: HedgeDelaySource['budget'];
  /**
   * Adaptive hedging, when it chooses this call's delay and learns from its outcome; undefined for a call whose
   * policy was given with the call (its delay is used as given, and its outcome, measured against another delay,
   * is not learned from).
   */
  private readonly learning: HedgeDelaySource | undefined;

  constructor(
    private readonly policy: HedgingPolicy,
    private readonly ctx: RetryingCallContext,
    private readonly method: string,
    private readonly host: HedgeHost,
    /** Read only: how many attempts went and how many are in flight. */
    private readonly attempts: Pick<AttemptSet, 'count' | 'live'>,
    private readonly replay: Pick<ReplayBuffer, 'replayable'>,
    private readonly events: CallEvents | undefined,
    /** The policy was given with the call (`withRetryOptions`): its hedgingDelay is used as given. */
    delayGivenPerCall: boolean,
  ) {
    const adaptive = host.adaptive;
    this.delayMs = policy.hedgingDelayMs;
    this.reason = 'hedging-delay';
    this.learning = delayGivenPerCall ? undefined : adaptive;
    if (adaptive) {
      // The budget caps every call's hedges, whichever delay the call uses.
      this.budget = adaptive.budget;
      this.budget?.recordCall?.();
    }
    if (this.learning) {
      const choice = this.learning.delayFor(method, policy.hedgingDelayMs);
      this.delayMs = choice.delayMs;
      if (choice.adaptive) {
        this.reason = 'adaptive-delay';
      }
    }
  }

  /**
   * The first attempt went: the hedges follow, one every delay. Unless its failure, reported while it started (an
   * interceptor below refused it at once), has scheduled the next hedge already: once is enough.
   */
  begin(): void {
    if (!this.scheduled) {
      this.schedule(this.delayMs, this.reason);
    }
  }

  /** An attempt failed before the call committed; `decision` is what the rules say of the next hedge. */
  afterFailure(decision: HedgeFailureDecision): void {
    switch (decision.type) {
      case 'hedge-now':
        this.schedule(0, 'non-fatal-status');
        return;
      case 'hedge-after':
        this.schedule(decision.delayMs, decision.reason);
        return;
      case 'stop-hedging':
        this.host.noFurtherAttempt(decision.reason);
        this.close();
        return;
    }
  }

  /**
   * A hedge could not be made (grpc-js refused the call: the channel was closed meanwhile): none will go after it,
   * and the call ends with its last failure once no attempt is in flight.
   */
  sendNoMore(): void {
    this.close();
  }

  /** The call's wait for the next hedge is over (it waited with nothing in flight). */
  onWaitOver(): void {
    this.sendNext();
  }

  /** The call committed or ended, or waits with nothing in flight: no hedge timer may fire. */
  stop(): void {
    if (this.timer !== undefined) {
      this.ctx.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
    if (this.deferred !== undefined) {
      clearImmediate(this.deferred);
      this.deferred = undefined;
    }
    if (this.unhold !== undefined) {
      this.unhold();
      this.unhold = undefined;
    }
    if (this.released !== undefined) {
      clearImmediate(this.released);
      this.released = undefined;
    }
  }

  /**
   * An attempt's status came from the server before the call committed (a Trailers-Only answer, fatal or not): the
   * server answers, so hedges adaptive hedging held behind a stall of the method's calls go, as at a commit.
   */
  serverAnswered(): void {
    this.host.adaptive?.answered?.(this.method);
  }

  /**
   * The call is committing to `winner` (not on overflow), `live` being the attempts in flight until now. Adaptive
   * hedging learns whether the call's first attempt outlived the delay this call used: the winner's time to its
   * first response when the first attempt won, or the time so far of a first attempt still running when a hedge
   * won (a lower bound, flagged as superseded). A first attempt that already failed tells nothing: fast failures
   * do not pull the delay down. Nor does a first attempt that answered while the first hedge was held back for
   * pending I/O (see onTimer): its answer came in at some point while the event loop was held, before or after the
   * due time, so neither its latency nor whether it outlived the delay is known. (On a real client these are the
   * calls a GC pause held; learned from, they put the delay above the pause's length.)
   */
  recordLatencies(winner: Attempt, live: readonly Attempt[]): void {
    const adaptive = this.host.adaptive;
    const first = winner.number === 1 ? winner : live.find((a) => a.number === 1);
    if (!adaptive) {
      return;
    }
    if (
      this.learning === undefined ||
      first === undefined ||
      (first === winner && this.deferred !== undefined && this.attempts.count === 1)
    ) {
      adaptive.answered?.(this.method);
      return;
    }
    const latencyMs = this.ctx.clock.now() - first.startedAt;
    adaptive.recordOutcome(this.method, this.delayMs, latencyMs, first !== winner);
  }

  /** Send the next hedge after `delayMs` (at once when 0), then one every delay, while attempts remain. */
  private schedule(delayMs: number, reason: HedgeScheduledEvent['reason']): void {
    const host = this.host;
    this.scheduled = true;
    this.stop();
    while (this.open && this.attempts.count < this.policy.maxAttempts) {
      this.events?.hedgeScheduled(this.attempts.count + 1, delayMs, reason);
      if (!host.uncommitted) {
        return; // a listener ended the call
      }
      if (delayMs > 0) {
        if (this.attempts.live.length === 0) {
          // The hedge replaces attempts that failed (a server's pushback set its delay), as a retry does, and like
          // a retry it is asked of the gates now, not when the wait is over: A6's throttled hedges do not block,
          // and with no other hedge out the failure is the call's at once.
          if (this.allowNow()) {
            host.waitForHedge(delayMs);
          }
        } else {
          this.setTimer(delayMs);
        }
        return;
      }
      // A hedge due at once goes only before the deadline, as one due later does (see onTimer): past it, the live
      // attempts' own deadline statuses end the call, as without the interceptor (a call made after its deadline).
      if (host.endIfPastDeadline() || !this.trySend() || !host.uncommitted) {
        return;
      }
      delayMs = this.delayMs;
      reason = this.reason;
    }
    this.finishIfOver();
  }

  private setTimer(delayMs: number): void {
    this.setAt = this.ctx.clock.now();
    this.dueAt = this.setAt + delayMs;
    this.rearmed = false;
    this.timer = this.host.setTimerBeforeDeadline(delayMs, () => this.onTimer());
  }

  /**
   * The hedge is due. When the timer fired before the clock says so, the rest of the delay is waited out first,
   * once: Node arms a timer from the event loop's time as cached at the start of the loop's turn, and
   * `Date.now()` ticks apart from it, so a timer may fire up to a millisecond or so before the delay has passed
   * as the call's clock reads it. Such a hedge went for answers the clock then read at the delay or under it,
   * hedges adaptive hedging did not count (it counts the attempts read over their delay).
   * When the timer fired late, the event loop was held past the due time (a GC pause, a busy
   * handler), and an answer that came in meanwhile is still unread: Node runs due timers before it polls for I/O.
   * The hedge then waits for that poll (setImmediate runs after it), and goes only if the call is still
   * uncommitted: otherwise every call in flight across a pause of the client sent a hedge it did not need. Nor
   * does it go when the clock has passed the deadline meanwhile: the call ends at its deadline.
   */
  private onTimer(): void {
    this.timer = undefined;
    const now = this.ctx.clock.now();
    const pastDue = now - this.dueAt;
    // A clock that stepped back since the timer was set, or stands still, would hold the hedge for nothing.
    const sinceSet = now - this.setAt;
    const clockAstray =
      sinceSet < 0 || (sinceSet === 0 && this.dueAt - this.setAt >= STILL_CLOCK_MIN_DELAY_MS);
    if (pastDue < 0 && !this.rearmed && !clockAstray) {
      this.rearmed = true;
      this.timer = this.host.setTimerBeforeDeadline(-pastDue, () => this.onTimer());
      return;
    }
    if (pastDue > LATE_TIMER_MS) {
      this.deferred = setImmediate(() => {
        this.deferred = undefined;
        if (this.host.uncommitted && !this.host.endIfPastDeadline()) {
          this.sendDue();
        }
      });
      return;
    }
    this.sendDue();
  }

  /**
   * The hedge is due and its timer on time (or the pending I/O read). With adaptive hedging it is told once per
   * hedge; when the method's calls stall (a hedge came due before it with no answer since), the hedge waits for
   * the method's next answer, and goes then if the call is still uncommitted. It goes after the I/O polled with
   * that answer is read (setImmediate): when a stall ends, the calls it held answer together, this one's too,
   * and the hedge is not sent for a call whose answer is already in. (Nor inside grpc-js's callback: the answer
   * is another call's commit.) No timer runs meanwhile: the held hedge goes at the next answer or not at all (the
   * call's own answer, a failure or the deadline ends the wait).
   */
  private sendDue(): void {
    const adaptive = this.learning;
    const number = this.attempts.count + 1;
    if (
      adaptive?.holdHedge !== undefined &&
      adaptive.whenAnswered !== undefined &&
      this.dueToldFor !== number
    ) {
      this.dueToldFor = number;
      if (adaptive.holdHedge(this.method)) {
        this.unhold = adaptive.whenAnswered(this.method, () => this.release());
        this.events?.hedgeHeld(number);
        return;
      }
    }
    this.sendNext();
  }

  /** The method answered while this call's hedge was held: send it once the polled I/O is read, unless stopped. */
  private release(): void {
    this.unhold = undefined;
    this.released = setImmediate(() => {
      this.released = undefined;
      if (this.host.uncommitted && !this.host.endIfPastDeadline()) {
        this.sendNext();
      }
    });
  }

  private sendNext(): void {
    if (this.trySend()) {
      this.schedule(this.delayMs, this.reason);
    }
  }

  /** What the rules say of sending the next hedge now; the gates are not asked again for one they allowed. */
  private decideSend(): HedgeSendDecision {
    const number = this.attempts.count + 1;
    return decideHedgeSend({
      maxAttempts: this.policy.maxAttempts,
      attemptsStarted: this.attempts.count,
      liveAttempts: this.attempts.live.length,
      replay: () => this.replay.replayable(),
      gate: () => (this.allowedFor === number ? 'allow' : this.askGates()),
    });
  }

  /**
   * A hedge due after a wait with nothing in flight: true when the rules let it go (the gates' leave is kept for
   * it), else no further hedge goes and the call ends with its last failure.
   */
  private allowNow(): boolean {
    const verdict = this.decideSend();
    if (verdict.type === 'stop') {
      this.sendNoFurther(verdict.reason);
      return false;
    }
    if (verdict.type === 'send') {
      this.allowedFor = this.attempts.count + 1;
    }
    return this.host.inFlight; // unless a `throttled` listener ended the call
  }

  /** Sends one hedge if the rules allow it. True when it went and the call is still in flight. */
  private trySend(): boolean {
    const host = this.host;
    const verdict = this.decideSend();
    switch (verdict.type) {
      case 'send':
        host.startHedge();
        // Not when the hedge failed inside its own start and its pushback put the call in a wait: the wait sends
        // the next hedge when it is over.
        return host.inFlight;
      case 'wait-for-budget':
        if (!host.inFlight) {
          return false; // a `throttled` listener ended the call
        }
        // Ask again one delay later while the call is outstanding, rather than give up hedging for the call
        // (only slow calls then compete for what flows back into the budget); a millisecond at least, so that a
        // delay of 0 ("send them all at once") does not ask again in the same instant for as long as it refuses.
        this.setTimer(Math.max(this.delayMs, MIN_BUDGET_ASK_INTERVAL_MS));
        return false;
      case 'stop':
        this.sendNoFurther(verdict.reason);
        return false;
    }
  }

  /**
   * The rules let no further hedge go: the call commits to the attempt that has sent the most when the request
   * outgrew the replay buffer with attempts in flight, else it ends with its last failure once none is.
   */
  private sendNoFurther(reason: Extract<HedgeSendDecision, { type: 'stop' }>['reason']): void {
    this.host.noFurtherAttempt(reason);
    if (reason === 'replay-buffer' && this.attempts.live.length > 0) {
      this.host.commitMostAdvanced();
    } else {
      this.close();
    }
  }

  /**
   * The hedge budget and the interceptor's gate (A6's throttle, a retry budget, your own). The budget holds the
   * extra load of hedges sent while an attempt is in flight, and is asked first then: it refuses often, and the call
   * asks again one delay later, so a gate that spends when it allows (a retry budget) must not be asked, and
   * charged, for a hedge the budget then holds back. A hedge with nothing in flight replaces attempts that failed
   * with a non-fatal status: were it refused, the call would fail where fixed hedging recovers, so the gate is asked
   * first, and the budget spends on it if it can and lets it go in any case; `maxAttempts` and the gate bound it, as
   * they bound retries.
   */
  private askGates(): GateVerdict {
    const budget = this.budget;
    if (budget === undefined) {
      return this.host.askGate('hedge');
    }
    if (this.attempts.live.length === 0) {
      const verdict = this.host.askGate('hedge');
      if (verdict === 'allow') {
        if (budget.spendIfHeld !== undefined) {
          budget.spendIfHeld();
        } else {
          budget.allowAttempt('hedge');
        }
      }
      return verdict;
    }
    if (budget.allowAttempt('hedge')) {
      const verdict = this.host.askGate('hedge');
      if (verdict !== 'allow') {
        // The hedge does not go: the budget is charged only for the hedges sent.
        budget.refund?.();
      }
      return verdict;
    }
    // Reported once per hedge, however often the call asks again for it.
    const number = this.attempts.count + 1;
    if (this.budgetRefusedFor !== number) {
      this.budgetRefusedFor = number;
      this.events?.throttled(number, 'hedge', budget);
    }
    return 'refused-by-hedge-budget';
  }

  /** No further hedge: once nothing is in flight, the call ends with its last failure. */
  private close(): void {
    this.open = false;
    this.stop();
    this.finishIfOver();
  }

  private finishIfOver(): void {
    if (
      this.attempts.live.length === 0 &&
      this.timer === undefined &&
      this.deferred === undefined &&
      this.unhold === undefined &&
      this.released === undefined
    ) {
      this.host.finishWithLastFailure();
    }
  }
}
