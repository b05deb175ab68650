import { Metadata, status as Status, type StatusObject } from '@grpc/grpc-js';
import { errorMessage } from '../util/error-message.js';

/**
 * The statuses the engine makes up itself, when no attempt's status is the call's: each is a fresh object (the
 * call may add trailers to it), and its details say what happened.
 * @internal
 */
export const engineStatus = {
  /** The channel refused a further attempt's call. */
  startFailed: (attempt: number, error: unknown): StatusObject =>
    made(Status.UNAVAILABLE, `could not start attempt ${attempt}: ${errorMessage(error)}`),
  /** An attempt had no response within its per-attempt receive timeout (its cancel tells the server this). */
  recvTimeout: (timeoutMs: number, attempt: number): StatusObject =>
    made(Status.DEADLINE_EXCEEDED, `per-attempt receive timeout (${timeoutMs} ms) hit on attempt ${attempt}`),
  /** Hedging ended with nothing in flight and no failure to report. */
  noHedgeSent: (): StatusObject => made(Status.UNAVAILABLE, 'no hedge could be sent'),
  /**
   * The call's deadline passed with no attempt's status; `last` is the last failure, if any, and `hedging` whether
   * the call was hedging (other attempts may still have been in flight) rather than waiting to retry.
   */
  deadlineExceeded: (
    last: StatusObject | undefined,
    during: 'hedging' | 'waiting to retry' | 'retrying' = 'waiting to retry',
  ): StatusObject =>
    made(
      Status.DEADLINE_EXCEEDED,
      last
        ? `Deadline exceeded while ${during} (${during === 'retrying' ? 'last failed attempt' : 'last attempt'}: ${Status[last.code] ?? last.code} ${last.details})`
        : 'Deadline exceeded',
    ),
  /** A broken invariant of the engine (production only; under vitest it throws). */
  internalError: (message: string): StatusObject =>
    made(Status.INTERNAL, `grpc-retry-hedging internal error: ${message}`),
  /**
   * The attempt the call depends on cannot send message `index` as it was written: the application changed the
   * object after its write callback, which another attempt's write had brought.
   */
  requestChanged: (attempt: number, index: number): StatusObject =>
    made(
      Status.INTERNAL,
      `grpc-retry-hedging: request message ${index} changed after its write callback, before attempt ${attempt} sent it; the call ends rather than send other data than was written`,
    ),
  /** The application cancelled the call. */
  cancelled: (code: Status, details: string): StatusObject => made(code, details),
};

function made(code: Status, details: string): StatusObject {
  return { code, details, metadata: new Metadata() };
}
