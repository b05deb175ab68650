/**
 * A half-close reaches the committed attempt whenever it is made: before the commit, after it, while a write is
 * still completing, or after the replay buffer overflowed. (It was once lost after a commit, and every bidi chat
 * and every upload past the replay limit hung until its deadline.)
 */
import { describe, expect, it } from 'vitest';
import { engineCall, hedgingPolicy, retryPolicy } from '../helpers/engine.js';

const POLICIES = {
  retry: retryPolicy({ maxAttempts: 3 }),
  hedging: hedgingPolicy({ maxAttempts: 2, hedgingDelay: '1s' }),
};

describe.each(Object.entries(POLICIES))('half-close under %s', (_name, config) => {
  it('bidi chat: write, the echo commits, then end(): the half-close goes out', async () => {
    const call = engineCall(config, { type: 'bidi', deadlineMs: 3000 });
    call.call.sendMessageWithContext({}, 'hello');
    const attempt = call.attempt(0);
    attempt.headers();
    attempt.message('hello');
    expect(call.received.messages).toEqual(['hello']);
    expect(attempt.halfClosed).toBe(false);
    call.call.halfClose();
    expect(attempt.halfClosed).toBe(true);
    attempt.status(0, 'OK');
    await call.settle();
    expect(call.status.code).toBe(0);
  });

  it('headers commit first; a write and the half-close made 50 ms later both go out, in order', async () => {
    const call = engineCall(config, { type: 'bidi', deadlineMs: 3000 });
    const attempt = call.attempt(0);
    attempt.headers();
    call.clock.advance(50);
    call.call.sendMessageWithContext({}, 'x');
    call.call.halfClose();
    expect(attempt.messages).toEqual(['x']);
    expect(attempt.halfClosed).toBe(true);
  });

  it('after the commit, a half-close made while a write is still completing follows that write', async () => {
    const call = engineCall(config, { type: 'client-stream', deadlineMs: 3000 });
    const attempt = call.attempt(0);
    attempt.autoCompleteWrites = false;
    attempt.headers();
    let written = 0;
    call.call.sendMessageWithContext({ callback: () => written++ }, 'chunk');
    call.call.halfClose();
    expect(attempt.halfClosed).toBe(false);
    attempt.pendingWrites.shift()?.();
    expect(written).toBe(1);
    expect(attempt.halfClosed).toBe(true);
  });

  it('an upload past the replay limit commits, then a later end() goes out', async () => {
    const call = engineCall(config, {
      type: 'client-stream',
      deadlineMs: 3000,
      interceptor: { perRpcBufferBytes: 4096 },
    });
    const attempt = call.attempt(0);
    let written = 0;
    for (let i = 0; i < 10; i++) {
      call.call.sendMessageWithContext({ callback: () => written++ }, 'x'.repeat(1024));
    }
    await call.settle();
    expect(written).toBe(10);
    expect(call.events.some((e) => e.type === 'committed' && e.reason === 'replay-buffer')).toBe(true);
    call.clock.advance(20);
    call.call.halfClose();
    expect(attempt.messages).toHaveLength(10);
    expect(attempt.halfClosed).toBe(true);
  });
});
