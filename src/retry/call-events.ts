import { type Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import type { CallPolicy } from '../config/types.js';
import type { Clock } from '../shared/clock.js';
import type { RetryGate } from '../shared/retry-gate.js';
import type { Attempt } from './attempt.js';
import type {
  CallEndReason,
  CommittedEvent,
  HedgeScheduledEvent,
  RetryEvent,
  RetryScheduledEvent,
} from './events.js';

/**
 * Builds and delivers the typed events of one call. The engine holds one only when somebody listens, so that a
 * call nobody observes never builds an event or reads the clock for one.
 * @internal
 */
export class CallEvents {
  private readonly startedAt: number;
  /** Time spent waiting with no attempt in flight (retry backoffs, delayed hedges), for `call-end`. */
  private retryDelayMs = 0;

  constructor(
    private readonly emit: (event: RetryEvent) => void,
    private readonly method: string,
    private readonly callId: number,
    private readonly clock: Clock,
    /**
     * The call's target (see `call-target.ts`), said by `call-start` and repeated by `hedge-scheduled`,
     * `throttled` and `call-end`.
     */
    private readonly target: string,
  ) {
    this.startedAt = clock.now();
  }

  callStart(policy: CallPolicy, deadline: number): void {
    const { method, callId, target } = this;
    this.emit({
      type: 'call-start',
      method,
      callId,
      policy: policy.kind,
      maxAttempts: policy.maxAttempts,
      deadline,
      target,
    });
  }

  /** `attempt-start`, then `hedge-sent` when the attempt is a hedge (and no listener cancelled the call meanwhile). */
  attemptStart(attempt: Attempt, metadata: Metadata): void {
    const { method, callId } = this;
    this.emit({
      type: 'attempt-start',
      method,
      callId,
      attempt: attempt.number,
      kind: attempt.kind,
      previousRpcAttempts: attempt.number - 1,
      metadata,
    });
    if (attempt.kind === 'hedge' && attempt.state === 'live') {
      const sinceCallStartMs = roundMs(this.clock.now() - this.startedAt);
      this.emit({ type: 'hedge-sent', method, callId, attempt: attempt.number, sinceCallStartMs });
    }
  }

  attemptLeftRunning(
    attempt: Attempt,
    reason: 'other-attempt-committed' | 'per-attempt-timeout',
    capMs: number | undefined,
  ): void {
    const { method, callId } = this;
    this.emit({
      type: 'attempt-left-running',
      method,
      callId,
      attempt: attempt.number,
      cancelReason: reason,
      loserCapMs: capMs,
    });
  }

  attemptEnd(attempt: Attempt, status: StatusObject, committed: boolean, leftRunning: boolean): void {
    const { method, callId } = this;
    this.emit({
      type: 'attempt-end',
      method,
      callId,
      attempt: attempt.number,
      kind: attempt.kind,
      committed,
      ...(attempt.cancelReason ? { cancelReason: attempt.cancelReason } : {}),
      ...(leftRunning ? { leftRunning: true as const } : {}),
      code: status.code,
      details: status.details,
      durationMs: this.clock.now() - attempt.startedAt,
      ...peerOf(attempt),
    });
  }

  retryScheduled(attempt: number, delayMs: number, reason: RetryScheduledEvent['reason']): void {
    const { method, callId } = this;
    this.emit({ type: 'retry-scheduled', method, callId, attempt, delayMs: roundMs(delayMs), reason });
  }

  hedgeScheduled(attempt: number, delayMs: number, reason: HedgeScheduledEvent['reason']): void {
    const { method, callId, target } = this;
    this.emit({
      type: 'hedge-scheduled',
      method,
      callId,
      attempt,
      delayMs: roundMs(delayMs),
      reason,
      target,
    });
  }

  hedgeHeld(attempt: number): void {
    const { method, callId } = this;
    this.emit({ type: 'hedge-held', method, callId, attempt });
  }

  throttled(attempt: number, kind: 'retry' | 'hedge', gate: RetryGate): void {
    const { method, callId, target } = this;
    const tokens = gate.tokens ?? Number.NaN;
    this.emit({
      type: 'throttled',
      method,
      callId,
      attempt,
      kind,
      gate: gate.name ?? 'gate',
      tokens,
      target,
    });
  }

  committed(attempt: number, reason: CommittedEvent['reason']): void {
    const { method, callId } = this;
    this.emit({ type: 'committed', method, callId, attempt, reason });
  }

  internalError(message: string): void {
    const { method, callId } = this;
    this.emit({ type: 'internal-error', method, callId, message });
  }

  /** A wait with no attempt in flight, begun at `since`, is over. */
  waitOver(since: number): void {
    this.retryDelayMs += this.clock.now() - since;
  }

  /**
   * The call ended. `endReason`: why its last failure got no further attempt (the call keeps it, see
   * `RetryingCall.noFurtherAttempt`); said only for a call that failed.
   */
  callEnd(status: StatusObject, attempts: number, endReason: CallEndReason | undefined): void {
    const { method, callId, target } = this;
    const reason = status.code === Status.OK ? undefined : endReason;
    this.emit({
      type: 'call-end',
      method,
      callId,
      code: status.code,
      details: status.details,
      ...(reason === undefined ? {} : { reason }),
      attempts,
      retryDelayMs: roundMs(this.retryDelayMs),
      durationMs: this.clock.now() - this.startedAt,
      target,
    });
  }
}

/**
 * Where an attempt went: the replica-avoiding picker's record, else what grpc-js says; nothing when no connection
 * carried it (see {@link servedPeer}).
 */
function peerOf(attempt: Attempt): { peer?: string } {
  const peer = servedPeer(attempt.replica?.picked ?? attempt.call.getPeer());
  return peer === undefined ? {} : { peer };
}

/** `host:port` or `[v6]:port` (a zone id allowed): no scheme, no list, a numeric port. */
const TCP_PEER = /^(?:\[[^\][\s,/]+\]|[^\][\s,/:]+):\d{1,5}$/;

/**
 * `peer` when it is the address of a connection that carried the attempt, else undefined. grpc-js's `getPeer`
 * names the subchannel once the attempt has one: `host:port`, `[v6]:port`, or a unix socket's path as the target
 * gave it (`/run/app.sock` for `unix:/run/app.sock` or `unix:///run/app.sock`, `app.sock` for `unix:app.sock`).
 * Before that (the name is being resolved, no subchannel is ready or picked: nothing listens, or the attempt was
 * cancelled first) it names the channel's target instead, which always has a scheme (`dns:localhost:50051`,
 * `ipv4:127.0.0.1:50051,127.0.0.1:50052`, `unix:/run/app.sock`), or says `unknown`: none of these served it.
 * @internal
 */
export function servedPeer(peer: string | undefined): string | undefined {
  if (peer === undefined || peer === '' || peer === 'unknown') {
    return undefined;
  }
  if (TCP_PEER.test(peer)) {
    return peer;
  }
  // A unix socket's path: absolute, or relative with no colon (a target always has one, after its scheme).
  return peer.startsWith('/') || !peer.includes(':') ? peer : undefined;
}

/** Delays in events are whole milliseconds, as Node's timers are ("retrying in 117 ms", not 117.05321187382198). */
function roundMs(ms: number): number {
  return Math.round(ms);
}
