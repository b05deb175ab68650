import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { ReplicaHint } from '../lb/tried-replicas.js';
import type { TimerHandle } from '../shared/clock.js';
import type { InterceptingCallInterface } from '../shared/grpc-types.js';
import { markTurn } from './event-loop-turn.js';
import type { AttemptCancelReason, AttemptKind } from './events.js';
import { enterAttemptStatus, leaveAttemptStatus } from './status-callback.js';

/** What an attempt reports to the call that owns it. @internal */
export interface AttemptOwner {
  /** The application half-closed: each attempt sends the half-close once it has every message. */
  readonly halfClosed: boolean;
  /** The application asked for a response it has not had: each attempt starts its read when it starts. */
  readonly readRequested: boolean;
  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void;
  onAttemptMessage(attempt: Attempt, message: unknown): void;
  onAttemptStatus(attempt: Attempt, status: StatusObject): void;
  onAttemptWritten(attempt: Attempt): void;
  /** A message `attempt` had still to send is no longer what was written: it must not be sent. */
  onAttemptRequestChanged(attempt: Attempt, index: number): void;
}

/**
 * One attempt of a call: the grpc-js call under it, where it stands in the replay buffer, and whether it is still
 * in flight. It is also the listener grpc-js reports the attempt's responses to.
 * @internal
 */
export class Attempt implements InterceptingListener {
  /**
   * `live`: in flight and counted by the call; `cancelled`: the client ended it; `left-running`: the call is done
   * with it, but the cancel-rate limit let it run to completion (its result is discarded); `done`: its status
   * arrived.
   */
  state: 'live' | 'cancelled' | 'left-running' | 'done' = 'live';
  /** The call committed to this attempt (it stays so when the call ends before the attempt reports its status). */
  committed = false;

  cancelReason: AttemptCancelReason | undefined;
  /** Absolute index of the next message of the replay buffer to hand to this attempt. */
  sent: number;
  /** A message was handed over and its write has not completed: grpc-js takes one at a time. */
  writing = false;
  halfCloseSent = false;
  /** `feedAttempt` is handing this attempt messages (a write completing meanwhile leaves the next to its loop). */
  feeding = false;
  /** grpc-js's `start` was called on the attempt's call: until then nothing may be written to it or read. */
  started = false;
  /**
   * The attempt's timer, while one runs: its per-attempt receive timeout while it is live, or, once left running
   * on a call without a deadline, the cap that cancels it.
   */
  timer: TimerHandle | undefined;
  /** Left running: withdraws its place in the cancel limiter's queue (see `CancelRateLimiter.whenAllowed`). */
  withdrawCancel: (() => void) | undefined;
  /** The replica-avoidance hint this attempt carries (src/lb), whose `picked` says where it went. */
  replica: ReplicaHint | undefined;
  /** The event-loop turn the attempt was made in (see `event-loop-turn.ts`: a cancel in it waits a turn). */
  readonly turn = markTurn();
  /** Write-completion callback, one per attempt (only one write is in flight at a time). */
  readonly onWriteDone = (): void => this.owner.onAttemptWritten(this);

  constructor(
    private readonly owner: AttemptOwner,
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
    // Marked without a closure: this runs once per attempt of every call.
    enterAttemptStatus();
    try {
      this.owner.onAttemptStatus(this, status);
    } finally {
      leaveAttemptStatus();
    }
  }
}

/** What a cancelled attempt tells the server, by why it was cancelled. @internal */
export const CANCEL_DETAILS: Readonly<Record<AttemptCancelReason, string>> = {
  'other-attempt-committed': 'another attempt committed',
  'call-cancelled': 'call cancelled',
  'call-ended': 'call ended',
  'per-attempt-timeout': 'per-attempt receive timeout',
  'request-changed': 'a request message changed before this attempt sent it',
};

/** Index one past the last message `attempt` has fully written. @internal */
export function writtenBy(attempt: Attempt): number {
  return attempt.writing ? attempt.sent - 1 : attempt.sent;
}
