/**
 * What the application side of a call promises that the other suites leave unchecked
 * (src/retry/application-side.ts): writers still waiting when the call ends are called back, nothing of an attempt
 * reaches the application after its status or from a loser while the losers are being cancelled, and a status
 * that comes without trailers still reaches it.
 */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  engineCall,
  eventsOfType,
  hedgingPolicy,
  retryPolicy,
  Status,
  spentLimiter,
  T0,
} from '../helpers/engine.js';

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown) {
  const done = { called: 0 };
  call.sendMessageWithContext({ callback: () => (done.called += 1) }, message);
  return done;
}

describe('engine: writers still waiting when the call ends', () => {
  it('a message queued behind a write in progress: its writer is called back when the call is cancelled, on the next tick', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    h.attempt(0).autoCompleteWrites = false;
    const first = write(h.call, 'm0');
    const second = write(h.call, 'm1'); // not handed over yet: one write at a time
    expect(h.attempt(0).messages).toEqual(['m0']);
    h.call.cancelWithStatus(Status.CANCELLED, 'stop');
    expect([first.called, second.called]).toEqual([0, 0]);
    await h.settle();
    expect([first.called, second.called]).toEqual([1, 1]);
    expect(h.attempt(0).messages).toEqual(['m0']);
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it('a message written during a backoff: its writer is called back when the deadline ends the call', async () => {
    const h = engineCall(retryPolicy({ initialBackoff: '5s', maxBackoff: '5s' }), {
      type: 'client-stream',
      deadlineMs: 1000,
    });
    h.attempt(0).fail();
    const during = write(h.call, 'm0');
    await h.settle();
    expect(during.called).toBe(0); // it waits for the retry to write it
    h.clock.advance(1000);
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    await h.settle();
    expect(during.called).toBe(1);
  });
});

describe('engine: a single request larger than the replay limits', () => {
  it('commits the only attempt in flight as it is written (A6: sent once, not retryable)', () => {
    const h = engineCall(retryPolicy(), { start: false, interceptor: { perRpcBufferBytes: 100 } });
    h.call.start(new Metadata(), {});
    h.call.sendMessage(Buffer.alloc(500));
    h.call.halfClose();
    expect(h.attempt(0).messages).toHaveLength(1);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    h.attempt(0).succeed();
    expect(eventsOfType(h.events, 'committed')).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.OK, attempts: 1 }),
    ]);
  });
});

describe('engine: what reaches the application from an attempt', () => {
  it('nothing the committed attempt reports after its status (here from an attempt-end listener)', () => {
    let afterStatus = () => {};
    const h = engineCall(retryPolicy(), {
      type: 'server-stream',
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-end' && e.committed) afterStatus();
        },
      },
    });
    afterStatus = () => {
      h.attempt(0).message('after its status');
      h.attempt(0).headers();
    };
    h.attempt(0).headers();
    h.attempt(0).message('m1');
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.received.messages).toEqual(['m1']);
    expect(h.received.headers).toHaveLength(1);
    expect(h.status.code).toBe(Status.OK);
  });

  it("a loser's headers that arrive while the losers are being cancelled (here from an attempt-left-running listener) do not reach it", async () => {
    const clock = new FakeClock(T0);
    const limiter = spentLimiter(clock); // the losers are left running
    let onLeftRunning = () => {};
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 3 }), {
      clock,
      interceptor: {
        cancelRateLimit: limiter,
        onEvent: (e) => {
          if (e.type === 'attempt-left-running' && e.attempt === 2) onLeftRunning();
        },
      },
    });
    onLeftRunning = () => {
      const md = new Metadata();
      md.set('x-attempt', '3');
      h.attempt(2).headers(md);
      h.attempt(2).message('from a loser');
    };
    expect(h.attempts).toHaveLength(3);
    const md = new Metadata();
    md.set('x-attempt', '1');
    h.attempt(0).headers(md);
    expect(h.received.headers.map((m) => m.get('x-attempt'))).toEqual([['1']]);
    expect(eventsOfType(h.events, 'attempt-left-running').map((e) => e.attempt)).toEqual([2, 3]);
    h.attempt(0).message('winner');
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.received.messages).toEqual(['winner']);
    expect(h.status.code).toBe(Status.OK);
  });

  it('a status without trailers (a layer below that leaves them out) still reaches it, after a retry too', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).fail();
    h.clock.runNext();
    const listener = h.attempt(1).listener;
    expect(() => listener?.onReceiveStatus?.({ code: Status.OK, details: 'OK' } as never)).not.toThrow();
    expect(h.status).toMatchObject({ code: Status.OK, details: 'OK' });
  });
});
