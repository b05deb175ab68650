import type { Attempt } from './attempt.js';
import type { ReplayBuffer } from './replay-buffer.js';

/**
 * Hand `attempt` the next message of the replay buffer it has not had, one at a time as grpc-js requires, then
 * the half-close once the application has half-closed and the attempt has everything.
 *
 * The half-close goes right behind the last message for a single request, as grpc-js's own unary path sends it;
 * for a request stream only once the last write completed, as grpc-js's writable stream does (older grpc-js
 * versions can lose a streamed message that a half-close overtakes).
 * @internal
 */
export function feedAttempt(
  attempt: Attempt,
  replay: ReplayBuffer,
  halfClosed: boolean,
  singleRequest: boolean,
): void {
  if (attempt.state !== 'live' || !attempt.started) {
    return;
  }
  const end = replay.end;
  if (!attempt.writing && attempt.sent < end) {
    const index = attempt.sent;
    attempt.sent += 1;
    attempt.writing = true;
    attempt.call.sendMessageWithContext(
      { flags: replay.flagsAt(index), callback: attempt.onWriteDone },
      replay.messageAt(index),
    );
  }
  if (
    halfClosed &&
    !attempt.halfCloseSent &&
    attempt.state === 'live' &&
    attempt.sent >= end &&
    (!attempt.writing || singleRequest)
  ) {
    attempt.halfCloseSent = true;
    attempt.call.halfClose();
  }
}
