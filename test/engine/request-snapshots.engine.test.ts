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
