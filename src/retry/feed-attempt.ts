import type { Attempt } from './attempt.js';
import type { ReplayBuffer } from './replay-buffer.js';

/**
 * Hand `attempt` the next message of the replay buffer it has not had, one at a time as grpc-js requires, then
 * the half-close once the application has half-closed and the attempt has everything.
 *
 * The half-close goes right behind the last message for a single request, as grpc-js's own unary path sends it;
 * for a request stream only once the last write completed, as grpc-js's writable stream does (older grpc-js
 * versions can lose a streamed message that a half-close overtakes).
 *
 * A message another attempt has already written may have changed since (its writer was called back, and may reuse
 * the object): it is checked against what was written, and not sent if it changed (`onChanged`).
 *
 * A layer below that completes a write before `sendMessageWithContext` returns (an in-memory transport, a test
 * double) has the next message handed over by the loop here, not from inside its callback: a replay of thousands
 * of messages would otherwise recurse once per message and overflow the stack.
 * @internal
 */
export function feedAttempt(
  attempt: Attempt,
  replay: ReplayBuffer,
  owner: { readonly halfClosed: boolean },
  singleRequest: boolean,
  onChanged: (attempt: Attempt, index: number) => void,
): void {
  if (attempt.state !== 'live' || !attempt.started || attempt.feeding) {
    return;
  }
  attempt.feeding = true;
  try {
    while (attempt.state === 'live' && !attempt.writing && attempt.sent < replay.end) {
      const index = attempt.sent;
      if (!replay.handOver(index)) {
        // Its writer was called back when another attempt wrote it, and has changed it since.
        onChanged(attempt, index);
        return;
      }
      attempt.sent += 1;
      attempt.writing = true;
      const flags = replay.flagsAt(index);
      replay.send(
        attempt.call,
        flags === undefined ? { callback: attempt.onWriteDone } : { flags, callback: attempt.onWriteDone },
        index,
      );
    }
  } finally {
    attempt.feeding = false;
  }
  // Read after the writes: a callback run during them may have half-closed.
  if (
    owner.halfClosed &&
    !attempt.halfCloseSent &&
    attempt.state === 'live' &&
    attempt.sent >= replay.end &&
    (!attempt.writing || singleRequest)
  ) {
    attempt.halfCloseSent = true;
    attempt.call.halfClose();
  }
}
