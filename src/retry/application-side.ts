import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { InterceptingCallInterface, MessageContext } from '../shared/grpc-types.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../shared/headers.js';
import type { Attempt, AttemptOwner } from './attempt.js';
import type { AttemptSet } from './attempt-set.js';
import type { CallPhase } from './call-phase.js';
import type { ReplayBuffer } from './replay-buffer.js';
import { type RetryOutcome, recordRetryOutcome } from './retry-outcome.js';

/** What the application side reads of its call, and what it asks of it. @internal */
export interface ApplicationHost {
  /** The call's phase; only the call changes it. */
  readonly phase: CallPhase;
  /** The committed attempt while the phase is `committed`. */
  readonly committedTo: Attempt | undefined;
  /** The call's attempts: fed, asked to read and told of completed writes from here, never changed. */
  readonly attempts: AttemptSet;
  /** A live attempt answered first while the call is in flight: commit to it. */
  commit(attempt: Attempt, reason: 'headers' | 'message'): void;
  /**
   * The replay buffer overflows: commit to the live attempt that has sent the most (A6), or, during a wait (no
   * attempt in flight), end the call with the failure the wait followed.
   */
  commitMostAdvanced(): void;
  /** An attempt's status arrived (or an attempt never started). */
  onAttemptStatus(attempt: Attempt, status: StatusObject): void;
  /** A message `attempt` had still to send changed after another attempt wrote it: end that attempt. */
  onAttemptRequestChanged(attempt: Attempt, index: number): void;
  /** What `attempt` received (its headers, or its trailers): a retry layer below may have marked it. */
  checkRetriedBelow(attempt: Attempt, received: Metadata): void;
}

/**
 * The application's side of one call: what it sends (writes into the replay buffer, the half-close, its read
 * requests) and what it sees (only the committed attempt's headers and messages, the peer, one status). The
 * attempts report here; their statuses go on to the call, which alone decides (commits, retries, ends).
 * @internal
 */
export class ApplicationSide implements AttemptOwner {
  /** The application half-closed: each attempt sends the half-close once it has every message. */
  halfClosed = false;
  /** The application asked for a response it has not had: each attempt starts its read when it starts. */
  readRequested = false;
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  /** The attempt the call was committed to when it ended: its peer stays the call's. */
  private decidedBy: Attempt | undefined;
  /** A message (a null one included) reached the application. */
  private messageDelivered = false;

  constructor(
    private readonly host: ApplicationHost,
    private readonly replay: ReplayBuffer,
    /** The method streams responses (a unary listener gets a null message before a status without one). */
    private readonly responseStream: boolean,
  ) {}

  /** grpc-js's `start`: the application's headers and listener. */
  open(metadata: Metadata, listener: Partial<InterceptingListener> | undefined): void {
    // A copy, taken now as grpc-js takes one when a call without retries starts: an application that changes or
    // reuses its Metadata object afterwards must not change what later attempts send.
    this.metadata = metadata.clone();
    this.listener = listener;
  }

  /** The application's request headers, which every attempt sends (with its own additions). */
  get headers(): Metadata {
    return this.metadata as Metadata;
  }

  write(context: MessageContext, message: unknown): void {
    const host = this.host;
    if (host.phase.tag === 'ended') {
      if (context.callback) {
        process.nextTick(context.callback);
      }
      return;
    }
    const committed = host.committedTo;
    const verdict = this.replay.append(message, context.flags, context.callback);
    if (committed !== undefined) {
      host.attempts.feed(committed);
    } else if (verdict === 'kept') {
      // The writer goes on once the attempts handed the message have written it (the buffer holds its callback).
      host.attempts.feedAll(undefined);
    } else {
      host.commitMostAdvanced();
    }
  }

  halfClose(): void {
    if (this.host.phase.tag === 'ended' || this.halfClosed) {
      return;
    }
    this.halfClosed = true;
    this.host.attempts.feedAll(this.host.committedTo);
  }

  startRead(): void {
    const host = this.host;
    const committed = host.committedTo;
    if (committed !== undefined) {
      committed.call.startRead();
      return;
    }
    const tag = host.phase.tag;
    if (tag === 'ended' || this.readRequested) {
      return;
    }
    this.readRequested = true;
    if (tag === 'in-flight') {
      host.attempts.startReads();
    }
  }

  /**
   * The committed attempt's peer (after the end too), or the newest attempt's when none was committed; before the
   * call starts, the first attempt's call already made answers (with the channel's target, as grpc-js does).
   */
  peer(): string {
    return this.answering()?.getPeer() ?? '';
  }

  authContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.answering()?.getAuthContext() ?? null;
  }

  private answering(): InterceptingCallInterface | undefined {
    const host = this.host;
    const phase = host.phase;
    if (phase.tag === 'not-started') {
      return phase.firstCall;
    }
    return (host.committedTo ?? this.decidedBy ?? host.attempts.newest)?.call;
  }

  // ---- what the attempts report (AttemptOwner) ----

  onAttemptMetadata(attempt: Attempt, metadata: Metadata): void {
    if (attempt.state !== 'live') {
      return;
    }
    const host = this.host;
    // grpc-js's own retries mark the headers of an attempt of theirs after their first, when it has headers
    host.checkRetriedBelow(attempt, metadata);
    if (host.phase.tag === 'in-flight') {
      host.commit(attempt, 'headers');
    } else if (attempt.timer !== undefined && host.committedTo === attempt) {
      host.attempts.stopTimer(attempt); // committed by the buffer's overflow: its first response
    }
    if (host.committedTo === attempt) {
      this.listener?.onReceiveMetadata?.(withPreviousAttempts(metadata, attempt.number - 1));
    }
  }

  onAttemptMessage(attempt: Attempt, message: unknown): void {
    const host = this.host;
    if (host.committedTo !== attempt) {
      // An attempt left running is read to its end, its responses dropped.
      if (attempt.state === 'left-running') {
        attempt.call.startRead();
      }
      if (host.phase.tag !== 'in-flight' || attempt.state !== 'live') {
        return;
      }
      // grpc-js hands unary listeners a null message before a status that came without one: not a response.
      if (message === null && !this.responseStream) {
        return;
      }
      host.commit(attempt, 'message');
      if (host.committedTo !== attempt) {
        return;
      }
    } else if (attempt.state !== 'live') {
      return;
    } else if (attempt.timer !== undefined) {
      host.attempts.stopTimer(attempt); // committed by the buffer's overflow: its first response
    }
    this.readRequested = false;
    this.messageDelivered = true;
    this.listener?.onReceiveMessage?.(message);
  }

  onAttemptStatus(attempt: Attempt, status: StatusObject): void {
    this.host.onAttemptStatus(attempt, status);
  }

  onAttemptRequestChanged(attempt: Attempt, index: number): void {
    this.host.onAttemptRequestChanged(attempt, index);
  }

  onAttemptWritten(attempt: Attempt): void {
    this.host.attempts.written(attempt, this.host.committedTo === attempt);
  }

  // ---- the end ----

  /**
   * The application's one status, now or on the next tick (after a cancel); nothing reaches it afterwards. Writers
   * still waiting on the replay buffer go on after it, with no error, as grpc-js calls back a write completed
   * before the status arrived. (grpc-js drops the callback of a write still in flight at the status, which leaves
   * a writer waiting for 'drain' forever: here it runs.)
   * `decidedBy`: the attempt whose status it is (the committed one, or the one whose failure ended the call).
   * `cancelled`: the caller cancelled, so the status is the caller's own.
   * `outcome`: what `retryOutcomeOf` finds by the status delivered (its trailers' Metadata), if anything.
   */
  close(
    given: StatusObject,
    deliverLater: boolean,
    decidedBy: Attempt | undefined,
    cancelled: boolean,
    outcome?: RetryOutcome,
  ): void {
    this.decidedBy = decidedBy;
    let status = inCallersMetadata(given, this.metadata);
    // How many attempts came before the one whose answer the caller gets, in the trailers (as grpc-java does):
    // the number of the attempt whose status it is, less one (a first attempt that beat its hedges: absent); for a
    // status of the engine's own (the deadline during a backoff), the attempts made less one; for the caller's
    // cancel, absent, committed or not: the status is the caller's, made on the client as grpc-js makes it, and
    // carries no trailers. Absent means none.
    const previous = cancelled ? 0 : decidedBy ? decidedBy.number - 1 : this.host.attempts.count - 1;
    if (previous > 0 && status.metadata) {
      status = { ...status, metadata: withPreviousAttempts(status.metadata, previous) };
    }
    if (outcome !== undefined && status.metadata) {
      // Kept by the trailers object, which must be this call's own: grpc-js may hand the same one to every call
      // that fails while the channel has no connection (see withPreviousAttempts), and another call's outcome
      // would be found by them (a later call with no retry policy, or through no retry interceptor).
      if (status.metadata === given.metadata) {
        status = { ...status, metadata: status.metadata.clone() };
      }
      recordRetryOutcome(status.metadata, outcome);
    }
    const listener = this.listener;
    this.listener = undefined;
    this.metadata = undefined;
    const waiting = this.replay.clear();
    // As grpc-js's own unary-response calls do, a status that came without a response is preceded by a null
    // message: an interceptor above this one sees the sequence it sees on a call without retries.
    const nullFirst = !this.responseStream && !this.messageDelivered;
    const deliver = () => {
      releaseAfter(waiting);
      if (nullFirst) {
        listener?.onReceiveMessage?.(null);
      }
      listener?.onReceiveStatus?.(status);
    };
    if (deliverLater) {
      process.nextTick(deliver);
    } else {
      deliver();
    }
  }
}

/**
 * Runs each writer's callback on a tick of its own after the current one: after the status being delivered (one a
 * listener throws from, too), and each apart, so that one writer's throw does not hold back the others.
 */
function releaseAfter(waiting: readonly (() => void)[] | undefined): void {
  if (waiting) {
    for (const callback of waiting) {
      process.nextTick(callback);
    }
  }
}

/**
 * `status` with its trailers in the caller's own Metadata class. A status the engine makes up carries this package's
 * copy of grpc-js's Metadata; when the client runs on another copy (nice-grpc's own grpc-js under an application on
 * an older one), code that checks `instanceof Metadata` with its copy (nice-grpc's `ClientError`) would not take
 * it for trailers.
 */
function inCallersMetadata(status: StatusObject, callers: Metadata | undefined): StatusObject {
  const Callers = callers?.constructor as (new () => Metadata) | undefined;
  const trailers: Metadata | undefined = status.metadata;
  if (Callers === undefined || trailers instanceof Callers) {
    return status;
  }
  const metadata = new Callers();
  const entries: Record<string, (string | Buffer)[]> = (trailers as Metadata | undefined)?.toJSON() ?? {};
  for (const [key, values] of Object.entries(entries)) {
    for (const value of values) {
      metadata.add(key, value);
    }
  }
  return { ...status, metadata };
}

/**
 * `received` as the application gets it from an attempt that had `previous` attempts before it: marked with
 * `grpc-previous-rpc-attempts` when there were any (A6: the count may be set in the response metadata the client
 * application receives). The response headers carry it, as grpc-js's own retries put it there, and so does the
 * final status's trailers, as grpc-java does. On a copy: grpc-js may hand the same trailers to every call that fails
 * while the channel has no connection (one object per picker), and a count written into them would reach other
 * calls' attempts, where it reads as a retry layer below (the nested-retries warning).
 */
function withPreviousAttempts(received: Metadata, previous: number): Metadata {
  if (previous <= 0) {
    return received;
  }
  const marked = received.clone();
  marked.set(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, String(previous));
  return marked;
}
