import { type InterceptorOptions, propagate } from '@grpc/grpc-js';
import { deadlineToMs } from './deadline.js';

/**
 * What a call takes from its parent server call (the `parent` call option, with `propagate_flags`), read once when
 * the call is made, as grpc-js reads it for a call without retries: the parent's deadline when it comes first, and
 * its cancellation. The engine applies both to the whole call, across every attempt and backoff: grpc-js ties an
 * attempt to its parent only when the attempt is made, so a retry made after the parent was cancelled would never
 * hear of it. The attempts still get the parent (an interceptor below may read it), and the caller's propagate
 * flags less the cancellation's, which the engine follows once for the call.
 * @internal
 */
export interface CallBounds {
  /** The call's deadline, ms since the epoch (`Infinity` for none): its own, or the parent's when earlier. */
  readonly deadline: number;
  /** The options each attempt is made with. */
  readonly attemptOptions: InterceptorOptions;
  /** The parent whose cancellation cancels the call, when the flags ask for it. */
  readonly cancelledWith: ParentEvents | undefined;
}

/** The part of a grpc-js server call used here (it is an EventEmitter that emits `cancelled`). @internal */
export interface ParentEvents {
  on(event: 'cancelled', listener: () => void): unknown;
  removeListener(event: 'cancelled', listener: () => void): unknown;
}

/**
 * The call's deadline and its attempts' options. The attempts get the call's deadline (the parent's when earlier)
 * in the caller's form: a Date stays a Date, for an interceptor below that reads it as one, in a copy of its own,
 * so that an application that moves its Date after making the call (reusing one options object) does not move the
 * deadline of later attempts.
 * @internal
 */
export function callBounds(options: InterceptorOptions): CallBounds {
  const own = options.deadline;
  const parent = options.parent;
  const flags = options.propagate_flags ?? propagate.DEFAULTS;
  const ownMs = deadlineToMs(own);
  const deadline =
    parent && flags & propagate.DEADLINE ? Math.min(ownMs, deadlineToMs(parent.getDeadline())) : ownMs;
  const attemptDeadline = own instanceof Date ? new Date(deadline) : deadline === ownMs ? own : deadline;
  const followed = parent !== undefined && parent !== null && (flags & propagate.CANCELLATION) !== 0;
  if (attemptDeadline === own && !followed) {
    return { deadline, attemptOptions: options, cancelledWith: undefined };
  }
  const attemptOptions: InterceptorOptions =
    attemptDeadline === undefined ? { ...options } : { ...options, deadline: attemptDeadline };
  if (!followed) {
    return { deadline, attemptOptions, cancelledWith: undefined };
  }
  attemptOptions.propagate_flags = flags & ~propagate.CANCELLATION;
  return { deadline, attemptOptions, cancelledWith: parent as unknown as ParentEvents };
}

/** The calls that follow a parent's cancellation, and the one listener the parent holds for them all. */
interface Followers {
  readonly calls: Set<() => void>;
  readonly listener: () => void;
}
const followersOf = new WeakMap<ParentEvents, Followers>();

/**
 * Runs `onCancelled` when `parent` emits `cancelled`, until the returned function is called. The parent holds one
 * listener for all the calls that follow it, however many are out at once: a listener each would pass Node's
 * limit of 10 with the eleventh concurrent child, and as the children end and the count drops to 0, warn again
 * (MaxListenersExceededWarning) at every batch.
 * @internal
 */
export function followParentCancel(parent: ParentEvents, onCancelled: () => void): () => void {
  let followers = followersOf.get(parent);
  if (followers === undefined) {
    const calls = new Set<() => void>();
    const listener = (): void => {
      for (const call of [...calls]) {
        call();
      }
    };
    followers = { calls, listener };
    followersOf.set(parent, followers);
    parent.on('cancelled', listener);
  }
  const { calls, listener } = followers;
  // An entry of its own, so that the same function following twice is called twice and stopped once.
  const entry = (): void => onCancelled();
  calls.add(entry);
  return () => {
    // A set emptied is forgotten with its listener, so a later follower starts a new one.
    if (calls.delete(entry) && calls.size === 0) {
      followersOf.delete(parent);
      parent.removeListener('cancelled', listener);
    }
  };
}
