/**
 * A retry replays what the application wrote one message at a time; a write callback run during the replay may end
 * the call. The attempt it cancelled must then be sent nothing more: no further message, no half-close.
 */
import { describe, expect, it } from 'vitest';
import { engineCall, retryPolicy, Status } from '../helpers/engine.js';

/** Writes m0 (whose callback cancels the call), then `more`, while no attempt is in flight; starts the retry. */
function replayThatCancels(more: string[], halfClose: boolean) {
  const h = engineCall(retryPolicy(), { type: 'client-stream' });
  h.attempt(0).fail();
  h.call.sendMessageWithContext(
    { callback: () => h.call.cancelWithStatus(Status.CANCELLED, 'stop') },
    Buffer.from('m0'),
  );
  for (const m of more) h.call.sendMessageWithContext({ callback: () => {} }, Buffer.from(m));
  if (halfClose) h.call.halfClose();
  h.clock.runNext(); // the backoff ends: the retry is handed m0, whose write completes at once
  return h;
}

describe('engine: a write callback that cancels the call while a retry is replayed', () => {
  it('stops the replay: the cancelled attempt is sent no further message', async () => {
    const h = replayThatCancels(['m1', 'm2'], true);
    const retry = h.attempt(1);
    expect(retry.messages.map(String)).toEqual(['m0']);
    expect(retry.cancelled?.details).toBe('stop');
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('sends the cancelled attempt no half-close, even when it had been handed every message', async () => {
    const h = replayThatCancels([], true);
    const retry = h.attempt(1);
    expect(retry.messages.map(String)).toEqual(['m0']);
    expect(retry.cancelled?.details).toBe('stop');
    expect(retry.halfClosed).toBe(false);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
  });
});
