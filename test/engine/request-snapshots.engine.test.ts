/**
 * A further attempt resends only what the application wrote. The engine hands grpc-js message objects (only the
 * bottom of the chain serializes), so it checks, before each retry or hedge, that every message still serializes
 * as it did when written; and a writer is called back only once an attempt has written its message, as without
 * the interceptor, so the first attempt always sends what was written.
 */
import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function write(call: { sendMessageWithContext: (c: object, m: unknown) => void }, message: unknown) {
  const done = { called: false };
  call.sendMessageWithContext({ callback: () => (done.called = true) }, message);
  return done;
}

describe('engine: write callbacks before the commit', () => {
  it('wait until an attempt has written the message, as without the interceptor', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    const attempt = h.attempt(0);
    attempt.autoCompleteWrites = false;
    const first = write(h.call, Buffer.from('a'));
    await h.settle();
    expect(first.called).toBe(false);
    attempt.pendingWrites.shift()?.();
    expect(first.called).toBe(true);
  });

  it('of messages written while no attempt is in flight wait for the retry to write them', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    h.attempt(0).fail();
    const during = write(h.call, Buffer.from('b'));
    await h.settle();
    expect(during.called).toBe(false);
    h.clock.runNext();
    expect(h.attempt(1).messages).toEqual([Buffer.from('b')]);
    expect(during.called).toBe(true);
  });
});

describe('engine: a request changed after it was written', () => {
  it('is not resent: a reused buffer refilled after its write callback ends the call with the failure', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    buffer.write('1'); // its callback came: the writer may reuse it
    write(h.call, buffer);
    h.call.halfClose();
    expect(h.attempt(0).messages.map(String)).toEqual(['1', '1']); // (the same object, twice)
    h.attempt(0).fail();
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(eventsOfType(h.events, 'retry-scheduled')).toEqual([]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('its request message had changed'), {
      code: 'GRPC_RETRY_HEDGING_REQUEST_CHANGED',
    });
  });

  it('is resent when each write is a new object, with what was written', () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    write(h.call, Buffer.from('0'));
    write(h.call, Buffer.from('1'));
    h.call.halfClose();
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempt(1).messages.map(String)).toEqual(['0', '1']);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
  });

  it('a single request changed after the call was made is not retried', () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { start: false });
    const request = { id: 1, toString: () => `id=${request.id}` };
    h.call.start(new Metadata(), {});
    h.call.sendMessageWithContext({}, request);
    h.call.halfClose();
    request.id = 2; // a loop that reuses its request object for the next call
    h.attempt(0).fail();
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
  });

  it('while the retry waits: no attempt is started, and the call ends with the failure, reason request-changed', () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    h.call.halfClose();
    h.attempt(0).fail();
    expect(eventsOfType(h.events, 'retry-scheduled')).toHaveLength(1);
    buffer.write('1'); // during the backoff
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(eventsOfType(h.events, 'attempt-start')).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ code: Status.UNAVAILABLE, attempts: 1, reason: 'request-changed' }),
    ]);
  });

  it('while the retry waits, with no listener: the same end, and the request-changed warning', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { type: 'client-stream', unobserved: true });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    h.call.halfClose();
    h.attempt(0).fail();
    expect(warn).not.toHaveBeenCalled();
    buffer.write('1');
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('its request message had changed'), {
      code: 'GRPC_RETRY_HEDGING_REQUEST_CHANGED',
    });
  });

  it('a message written during the wait that does not serialize: no retry, reason request-unserializable, no request-changed warning', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    write(h.call, Buffer.from('0'));
    h.attempt(0).fail();
    write(h.call, {
      toString: () => {
        throw new Error('not a message');
      },
    });
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 1, reason: 'request-unserializable' }),
    ]);
    expect(warn).not.toHaveBeenCalledWith(expect.anything(), { code: 'GRPC_RETRY_HEDGING_REQUEST_CHANGED' });
  });

  it('a message whose serializer throws only at the check before the retry: request-unserializable, not request-changed', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(retryPolicy(), { type: 'client-stream' });
    let serialized = 0;
    write(h.call, {
      toString: () => {
        serialized += 1;
        if (serialized === 2) throw new Error('the serializer failed this once');
        return 'same bytes';
      },
    });
    h.call.halfClose();
    h.attempt(0).fail();
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 1, reason: 'request-unserializable' }),
    ]);
    expect(warn).not.toHaveBeenCalledWith(expect.anything(), { code: 'GRPC_RETRY_HEDGING_REQUEST_CHANGED' });
  });

  it('while a hedge waits out a pushback: no hedge is started, and the call ends with reason request-changed', () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s', maxAttempts: 3 }), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    h.call.halfClose();
    h.attempt(0).fail(Status.UNAVAILABLE, { 'grpc-retry-pushback-ms': '50' });
    buffer.write('1'); // during the pushback's wait
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 1, reason: 'request-changed' }),
    ]);
  });

  it('sends no hedge, and leaves the attempt in flight to answer', () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 }), { type: 'client-stream' });
    const buffer = Buffer.from('0');
    write(h.call, buffer);
    buffer.write('1');
    h.clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});

describe('engine: a request that does not serialize', () => {
  it('is not retried, whatever status its attempt gets', () => {
    const h = engineCall(retryPolicy({ retryableStatusCodes: ['UNAVAILABLE', 'INTERNAL'] }), {
      start: false,
    });
    h.call.start(new Metadata(), {});
    h.call.sendMessageWithContext(
      {},
      {
        toString: () => {
          throw new Error('not a message');
        },
      },
    );
    h.call.halfClose();
    h.attempt(0).fail(Status.INTERNAL);
    while (h.clock.runNext()) {}
    expect(h.attempts).toHaveLength(1);
  });
});

describe('engine: a hedge that lags behind the attempt whose writes called the writer back', () => {
  /**
   * Two buffers used in turn, each refilled only once its write callback came. The hedge holds message 0 (its
   * write has not completed), so the writer of buffer A waits; buffer B (message 1) went only to the leader, which
   * wrote it, so its writer may refill it for message 2 before the hedge is handed message 1.
   */
  function lagging() {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), { type: 'client-stream' });
    const lag = h.attempt(1);
    lag.autoCompleteWrites = false;
    const a = write(h.call, Buffer.from('0'));
    const bufferB = Buffer.from('1');
    const b = write(h.call, bufferB);
    expect([a.called, b.called]).toEqual([false, true]);
    bufferB.write('2');
    write(h.call, bufferB);
    return { h, lag, a };
  }

  it('holds a writer until every attempt handed its message has written it', async () => {
    const { lag, a } = lagging();
    await new Promise((r) => setImmediate(r));
    expect(a.called).toBe(false);
    lag.pendingWrites.shift()?.();
    expect(a.called).toBe(true);
  });

  it('is not sent a message changed since it was written: it ends, and the leader carries the call', () => {
    const { h, lag } = lagging();
    expect(h.attempt(0).messages).toHaveLength(3); // (it keeps references: a real one serialized "1" at once)
    lag.pendingWrites.shift()?.(); // its write of message 0 completes; message 1 now reads "2"
    expect(lag.messages.map(String)).toEqual(['0']);
    expect(lag.cancelled?.details).toBe('a request message changed before this attempt sent it');
    h.call.halfClose();
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.attempts).toHaveLength(2);
  });

  it('ends the call with INTERNAL, naming the message, when the lagging hedge was the one committed', async () => {
    const { h, lag } = lagging();
    lag.headers(); // commits to the lagging hedge; the leader is cancelled
    lag.pendingWrites.shift()?.();
    // The hedge's end is reported before the call's, at once.
    expect(h.eventTypes().slice(-2)).toEqual(['attempt-end', 'call-end']);
    expect(eventsOfType(h.events, 'attempt-end').at(-1)).toMatchObject({
      attempt: 2,
      cancelReason: 'request-changed',
    });
    await h.settle();
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(h.status.details).toMatch(
      /request message 1 changed after its write callback, before attempt 2 sent it/,
    );
    expect(lag.messages).toHaveLength(1);
  });

  it('calls a held writer back on the next tick when the attempt holding its message is cancelled', async () => {
    const { h, a } = lagging();
    h.attempt(0).headers(); // commits to the leader: the hedge is cancelled with message 0 outstanding
    expect(a.called).toBe(false);
    await new Promise((r) => process.nextTick(r));
    expect(a.called).toBe(true);
  });
});
