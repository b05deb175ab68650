import { status as Status, type StatusObject } from '@grpc/grpc-js';

/** How grpc-js begins the details of a deadline its own timer ended a call at (a timing diagnostic follows). */
const GRPC_JS_DEADLINE = 'Deadline exceeded after ';

/**
 * The call's status when grpc-js's deadline timer ended attempt `attemptNumber` of a call that made `attempts`
 * attempts, more than one. Each attempt is a grpc-js call of its own, so grpc-js times it from the attempt's start:
 * a 500 ms call whose deadline ended its second attempt would read "Deadline exceeded after 0.096s". The time is
 * relabelled as the current attempt's, and the call's other attempts are counted as grpc-js's own retries report
 * them ("previous attempts: 1"): those before it for a retry, and every other hedge for a hedged call, whichever of
 * its attempts reported. The rest of grpc-js's diagnostic is kept. Any other status, or a call of one attempt
 * (timed from the call's start), is returned as it is.
 * @internal
 */
export function withAttemptDeadline(
  status: StatusObject,
  attemptNumber: number,
  attempts = attemptNumber,
): StatusObject {
  const made = Math.max(attemptNumber, attempts);
  if (
    made < 2 ||
    status.code !== Status.DEADLINE_EXCEEDED ||
    typeof status.details !== 'string' ||
    !status.details.startsWith(GRPC_JS_DEADLINE)
  ) {
    return status;
  }
  const rest = status.details.slice(GRPC_JS_DEADLINE.length);
  return {
    ...status,
    details: `Deadline exceeded,previous attempts: ${made - 1},current attempt: ${rest}`,
  };
}
