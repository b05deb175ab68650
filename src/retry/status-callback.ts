import { turnGuard } from './event-loop-turn.js';

/**
 * Whether the engine is handling an attempt's status, which grpc-js reports from inside Node's HTTP/2 session.
 *
 * Why the engine needs it: when a connection goes down (the server shut down, the socket closed), Node tears the
 * session down stream by stream and grpc-js reports each stream's status from inside that teardown. Resetting
 * another stream of the same session from there (cancelling a losing hedge because one attempt's status ended
 * the call, as a client that cancels its other streams in an `'error'` handler would) sends Node's HTTP/2 into a
 * loop that never returns (Node 20, grpc-js 1.14: the process spins at 100% CPU and never exits; a
 * `process.nextTick` or a microtask is still inside it, an immediate is not). Cancels made while a status is
 * handled therefore go on the next turn of the event loop (see `cancelOrLeaveRunning`).
 * @internal
 */
let depth = 0;

/** The engine starts handling an attempt's status (a pair with {@link leaveAttemptStatus}, in a `finally`). */
export function enterAttemptStatus(): void {
  depth += 1;
}

/** The engine is done handling an attempt's status. */
export function leaveAttemptStatus(): void {
  depth -= 1;
}

/** Whether an attempt's status is being handled now (always false while a test turns the guard off). */
export function inAttemptStatus(): boolean {
  return depth > 0 && turnGuard.enabled;
}
