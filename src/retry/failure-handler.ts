import { status as Status, type StatusObject } from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import { isLocalRejection } from '../shared/local-rejection.js';
import type { GateVerdict, RetryGate } from '../shared/retry-gate.js';
import type { Attempt } from './attempt.js';
import type { AttemptSet } from './attempt-set.js';
import type { BackoffState } from './backoff.js';
import type { RetryingCallContext } from './call-context.js';
import type { CallEvents } from './call-events.js';
import { engineStatus } from './engine-statuses.js';
import type { CallEndReason } from './events.js';
import { isLoadBalancerDrop, isMessageSizeRejection } from './local-failure.js';
import type { ReplayBuffer, ReplayVerdict } from './replay-buffer.js';
import {
  type AttemptFailure,
  countsAgainstServer,
  decideAfterFailure,
  type FailureDecision,
  type FinishReason,
  finishStatus,
  type HedgeFailureDecision,
  replayFinishReason,
} from './retry-decision.js';
import { NO_HINT, readServerHint } from './server-hint.js';

/** What the failure handler asks of its call. @internal */
export interface FailureHost {
  /** The call's gate (the `gate` option, or its target's A6 throttle); undefined: none. */
  readonly gate: RetryGate | undefined;
  /** The call is in flight and uncommitted (a listener may end it inside any step). */
  readonly inFlight: boolean;
  /** The call's time, as its deadline is read (the clock's, or later once the deadline timer has fired). */
  now(): number;
  /** The call ends with `status`, the failure of `from`. */
  finish(status: StatusObject, from: Attempt): void;
  /** The call's deadline has passed: it ends with DEADLINE_EXCEEDED, naming `last`, its last failure. */
  endAtDeadline(last: StatusObject): void;
  /** No attempt is in flight: wait `delayMs`, then retry; `lastFailure` is the result if the deadline comes first. */
  wait(next: 'retry', delayMs: number, lastFailure: StatusObject): void;
  /** Hedging: `status` is the call's last failure, and the hedge scheduler takes `decision`. */
  hedgeAfterFailure(status: StatusObject, decision: HedgeFailureDecision): void;
  /** No further attempt follows, for `reason` (what the call's end reports). */
  noFurtherAttempt(reason: CallEndReason): void;
}

/**
 * What follows a failed attempt: whether it counts against the server (the interceptor's gate), what the pure
 * `decideAfterFailure` says given where the backoff stands, and handing the verdict to the call (finish, or wait
 * and retry) or to the hedge scheduler. It also ends an attempt that hit its per-attempt receive timeout, and asks
 * the gate for the call's hedges. Made at a call's first failure or hedge, so that a call that never fails makes
 * none.
 * @internal
 */
export class FailureHandler {
  /** Where the backoff stands; undefined before the first retry. */
  private backoff: BackoffState | undefined;
  /**
   * The last failure a server (or the transport) gave, as opposed to a local rejection by an adaptive throttle below
   * this interceptor, and its attempt: what the call reports when its next attempt is rejected locally (its trailers
   * count the attempts before that one, and a per-attempt timeout says why no attempt followed).
   */
  private lastAnswered: { readonly status: StatusObject; readonly attempt: Attempt } | undefined;
  /** The failure the last retry wait followed, and its attempt: what the call shows if the retry does not go. */
  private waitedAfter: { readonly status: StatusObject; readonly attempt: Attempt } | undefined;

  constructor(
    private readonly policy: CallPolicy,
    private readonly ctx: RetryingCallContext,
    /** The call's deadline, ms since the epoch; `Infinity` for none. */
    private readonly deadline: number,
    private readonly host: FailureHost,
    /** Read, and a timed-out attempt cancelled (and its end reported). */
    private readonly attempts: Pick<AttemptSet, 'count' | 'live' | 'cancelAndSettle'>,
    private readonly replay: Pick<ReplayBuffer, 'replayable'>,
    private readonly events: CallEvents | undefined,
  ) {}

  /**
   * `attempt` had no response within the per-attempt receive timeout: it is cancelled (its `attempt-end` comes now,
   * before what follows its failure), or left running under the cancel-rate limit; and it fails.
   */
  afterTimeout(attempt: Attempt, timeoutMs: number): void {
    const committed = attempt.committed;
    if (attempt.state !== 'live' || (!committed && !this.host.inFlight)) {
      return;
    }
    const status = engineStatus.recvTimeout(timeoutMs, attempt.number);
    // DEADLINE_EXCEEDED tells the interceptors below (an adaptive throttle, say) why: the backend was too slow.
    this.attempts.cancelAndSettle(attempt, 'per-attempt-timeout', status.code, status.details);
    if (committed) {
      // Committed by the request outgrowing the replay buffer, before any response: the timeout still limits the
      // attempt (it stops at a response, not at a commit), and no attempt follows it.
      const reason = this.afterCommittedFailure(status, attempt, true, true);
      this.host.finish(finishStatus(status, reason, 'per-attempt-timeout'), attempt);
      return;
    }
    if (this.host.inFlight) {
      this.afterFailure(attempt, status, true); // unless an attempt-end listener ended the call
    }
  }

  /**
   * An uncommitted attempt failed, or hit its per-attempt timeout (`timedOut`).
   *
   * An attempt an adaptive throttle below rejected locally, asking for no retry (its do-not-retry pushback), ends
   * the attempts whatever the policy's codes say: a retrying call ends with reason `throttled`, as when the
   * interceptor's own gate refuses a retry, and a hedged call sends no further hedge while the attempts in flight
   * may still answer. Either way the call reports the last failure a server gave, not the client's refusal (the
   * rejection itself only when no server answered). A local rejection counts nothing against the gate.
   */
  afterFailure(attempt: Attempt, status: StatusObject, timedOut: boolean): void {
    const { policy, ctx, host } = this;
    const rejectedLocally = isLocalRejection(status);
    if (!rejectedLocally) {
      this.lastAnswered = { status, attempt };
    }
    const { status: shown, attempt: shownBy } = (rejectedLocally && this.lastAnswered) || { status, attempt };
    const failure = this.failureOf(status, attempt, timedOut, rejectedLocally);
    if (rejectedLocally && failure.hint.kind === 'do-not-retry') {
      if (policy.kind === 'hedging') {
        host.hedgeAfterFailure(shown, { type: 'stop-hedging', reason: 'throttled' });
        return;
      }
      this.host.noFurtherAttempt('throttled');
      if (host.inFlight) {
        host.finish(finishStatus(shown, 'throttled', shownBy.cancelReason), shownBy); // unless a listener ended the call
      }
      return;
    }
    const decision = this.decide(
      failure,
      policy.kind === 'retry' ? ctx.random() : 0,
      () => this.replay.replayable(),
      () => this.askGate('retry'),
    );
    if (!host.inFlight) {
      return; // a `throttled` listener ended the call
    }
    switch (decision.type) {
      case 'finish': {
        this.host.noFurtherAttempt(decision.reason);
        // A failure the policy would retry (or hedge past), come once the deadline has passed: the call ends for its
        // deadline, as it does when the deadline passes during a backoff, not with a status a retry was meant to
        // hide (grpc-js's own retries end such a call at its deadline timer too). A DEADLINE_EXCEEDED is that status.
        if (decision.reason === 'deadline' && status.code !== Status.DEADLINE_EXCEEDED) {
          host.endAtDeadline(shown);
          return;
        }
        // A request the replay buffer cannot hold ('replay-buffer') commits no attempt here: the failed one has
        // ended, and the call ends with its status, as when all attempts fail (no `committed` event).
        host.finish(finishStatus(shown, decision.reason, shownBy.cancelReason), shownBy);
        return;
      }
      case 'retry':
        this.backoff = decision.backoff;
        this.events?.retryScheduled(this.attempts.count + 1, decision.delayMs, decision.reason);
        if (host.inFlight) {
          this.waitedAfter = { status: shown, attempt: shownBy };
          host.wait('retry', decision.delayMs, shown); // unless a listener ended the call
        }
        return;
      default:
        host.hedgeAfterFailure(shown, decision);
    }
  }

  /**
   * The retry's wait is over: whether it may go. The request was checked when the retry was decided, but the
   * application may change a message it wrote (or write one that does not serialize) while the call waits; then no
   * attempt is started, and the call ends as it does when the change comes before the failure: with the failure it
   * waited after and reason `request-changed` (or `request-unserializable`). The gate's leave for the retry is not
   * given back.
   */
  retryMayGo(): boolean {
    const verdict = this.replay.replayable();
    const after = this.waitedAfter;
    if (verdict === 'fits' || after === undefined) {
      return true;
    }
    const reason = replayFinishReason(verdict);
    this.host.noFurtherAttempt(reason);
    this.host.finish(finishStatus(after.status, reason, after.attempt.cancelReason), after.attempt);
    return false;
  }

  /**
   * The status of a call that ends, for `reason`, while it waits after `status` (no attempt in flight): that failure,
   * saying why no retry followed when it was a per-attempt timeout, as when the wait ends ({@link retryMayGo}).
   */
  endedInWait(status: StatusObject, reason: FinishReason): StatusObject {
    const after = this.waitedAfter;
    return after?.status === status ? finishStatus(status, reason, after.attempt.cancelReason) : status;
  }

  /**
   * A failure of the committed attempt: no further attempt (A6), but it still counts against the server, and the
   * call's end says why none followed: `committed` (by the server's answer) or `replay-buffer` (by the request
   * outgrowing the buffer) when, uncommitted, the failure would have been retried or hedged past; otherwise what
   * would have ended it anyway (a fatal status, attempts used up).
   */
  afterCommittedFailure(
    status: StatusObject,
    attempt: Attempt,
    committedByOverflow: true,
    timedOut?: boolean,
  ): FinishReason;
  afterCommittedFailure(
    status: StatusObject,
    attempt: Attempt,
    committedByOverflow: boolean,
    timedOut?: boolean,
  ): FinishReason | 'committed';
  afterCommittedFailure(
    status: StatusObject,
    attempt: Attempt,
    committedByOverflow: boolean,
    timedOut = false,
  ): FinishReason | 'committed' {
    const failure = this.failureOf(status, attempt, timedOut);
    // Asked of the pure decision as if the call were not committed; the gate is not asked (it comes after the
    // buffer), and neither the backoff nor the random source moves.
    const decision = this.decide(
      failure,
      0.5,
      () => (committedByOverflow ? 'full' : 'fits'),
      () => 'allow',
    );
    const another = decision.type !== 'finish' || decision.reason === 'replay-buffer';
    const reason = !another ? decision.reason : committedByOverflow ? 'replay-buffer' : 'committed';
    this.host.noFurtherAttempt(reason);
    return reason;
  }

  /**
   * What the decision reads of `attempt`'s failed status; one that counts against the server is told the gate (a
   * local rejection never reached the server, and says nothing of it).
   */
  private failureOf(
    status: StatusObject,
    attempt: Attempt,
    timedOut: boolean,
    rejectedLocally = false,
  ): AttemptFailure {
    const hint = timedOut ? NO_HINT : readServerHint(status.metadata, this.ctx.retryInfo);
    const failure = {
      code: status.code,
      hint,
      timedOut,
      sizeRejected: isMessageSizeRejection(status),
      dropped: !timedOut && isLoadBalancerDrop(status, () => attempt.call.getPeer()),
    };
    if (!rejectedLocally && countsAgainstServer(this.policy, failure)) {
      this.host.gate?.recordFailure();
    }
    return failure;
  }

  /** The pure decision on `failure`, where the call and its backoff stand now. */
  private decide(
    failure: AttemptFailure,
    random: number,
    replay: () => ReplayVerdict,
    gate: () => GateVerdict,
  ): FailureDecision {
    const { policy, ctx } = this;
    return decideAfterFailure({
      policy,
      failure,
      attemptsStarted: this.attempts.count,
      attemptsInFlight: this.attempts.live.length,
      backoff: this.backoff,
      jitter: ctx.jitter,
      random,
      now: this.host.now(),
      deadline: this.deadline,
      deadlineAware: ctx.deadlineAware,
      replay,
      gate,
    });
  }

  /** The interceptor's gate (A6 throttle or the `gate` option) for one more attempt; a refusal is reported. */
  askGate(kind: 'retry' | 'hedge'): GateVerdict {
    const gate = this.host.gate;
    if (gate === undefined || gate.allowAttempt(kind)) {
      return 'allow';
    }
    this.events?.throttled(this.attempts.count + 1, kind, gate);
    return 'refused-by-gate';
  }
}
