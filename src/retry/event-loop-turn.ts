/**
 * Which turn of the event loop this is, counted by the immediates that end each turn in which somebody asked.
 *
 * Why the engine needs it: grpc-js (1.10 to 1.14 at least) makes the call under a started one a few microtasks
 * later (`ResolvingCall` creates its child in a `.then`). A call cancelled before that has no child to cancel; the
 * child is made and started all the same and is never reset, so its HTTP/2 stream stays open on the server until
 * the deadline, or for good without one. An attempt cancelled in the turn it was started in is therefore cancelled
 * on the next turn (see `cancelOrLeaveRunning`), when grpc-js has made the child.
 * @internal
 */
let turn = 0;
let ending = false;

/**
 * The guard is on unless a test turns it off: engine tests drive a call under a fake clock with scripted attempts
 * (no grpc-js below), all in one turn, and look for each cancel where it happens.
 * @internal
 */
export const turnGuard = { enabled: true };

function nextTurn(): void {
  turn += 1;
  ending = false;
}

/** The current turn, and a mark that it must be told apart from the next (one immediate per turn, shared). */
export function markTurn(): number {
  if (!ending) {
    ending = true;
    setImmediate(nextTurn);
  }
  return turn;
}

/** Whether `mark` (from {@link markTurn}) was taken in the current turn. */
export function inTurn(mark: number): boolean {
  return turnGuard.enabled && ending && mark === turn;
}
