import type { RetryingCallContext } from './call-context.js';
import type { CallEvents } from './call-events.js';
import type { CallEndReason } from './events.js';

/**
 * No further attempt follows, for `reason`: the call's `call-end` will say why, and a request that changed after
 * it was written, or that outgrew the replay buffer, is reported to the application (once per interceptor). Every
 * place that stops the attempts (a failure's decision, the end of a retry's wait, the hedges' schedule, a commit
 * with no attempt in flight) goes through here, so that none reports the reason without the warning.
 * @internal
 */
export function noFurtherAttempt(
  events: CallEvents | undefined,
  ctx: Pick<RetryingCallContext, 'onRequestChanged' | 'onReplayBufferFull'>,
  reason: CallEndReason,
): void {
  events?.noFurtherAttempt(reason);
  if (reason === 'request-changed') {
    ctx.onRequestChanged();
  } else if (reason === 'replay-buffer') {
    ctx.onReplayBufferFull();
  }
}
