/**
 * What the application sends and sees through the engine (src/retry/application-side.ts): reads go where they
 * are wanted and only once, writers are never left waiting, only the committed attempt's responses and peer
 * reach the application, and its one status arrives even through a listener that lacks methods.
 */
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status } from '../helpers/engine.js';

describe('engine: reads', () => {
  it('an attempt reads only once the application asked, and the ask is not repeated', () => {
    const h = engineCall(retryPolicy(), { type: 'bidi', start: false });
    h.call.start(new Metadata(), {});
    expect(h.attempt(0).reads).toBe(0);
    h.call.startRead();
    h.call.startRead();
    expect(h.attempt(0).reads).toBe(1);
    // The ask carries over to the next attempt, which reads as it starts.
    h.attempt(0).fail();
    h.clock.runNext();
    expect(h.attempt(1).reads).toBe(1);
  });

  it('every started hedge reads; one the listener reads from before it starts reads once', () => {
    let read = () => {};
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s', maxAttempts: 2 }), {
      type: 'server-stream',
      start: false,
      interceptor: {
        onEvent: (e) => {
          if (e.type === 'attempt-start' && e.attempt === 2) read();
        },
      },
    });
    read = () => h.call.startRead();
    h.start();
    expect(h.attempts.map((a) => a.reads)).toEqual([1, 1]);
  });

  it('after the commit each read goes to the committed attempt, at once', () => {
    const h = engineCall(retryPolicy(), { type: 'server-stream' });
    expect(h.attempt(0).reads).toBe(1);
    h.attempt(0).headers();
    h.attempt(0).message('m1');
    h.call.startRead();
    h.call.startRead();
    expect(h.attempt(0).reads).toBe(3);
    expect(h.received.messages).toEqual(['m1']);
  });

  it('a read asked for during a backoff waits for the next attempt; after the end it goes nowhere', () => {
    const h = engineCall(retryPolicy(), { type: 'bidi', start: false });
    h.call.start(new Metadata(), {});
    h.attempt(0).fail();
    h.call.startRead();
    expect(h.attempt(0).reads).toBe(0);
    h.clock.runNext();
    expect(h.attempt(1).reads).toBe(1);
    h.attempt(1).succeed();
    h.call.startRead();
    expect(h.attempt(1).reads).toBe(1);
  });
});

describe('engine: writes', () => {
  it('a write after the end is not sent, and its callback still runs (on the next tick)', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 100 } });
    h.attempt(0).fail(Status.INVALID_ARGUMENT);
    let small = 0;
    let large = 0;
    h.call.sendMessageWithContext({ callback: () => small++ }, 'late');
    // Too large for the replay buffer: still never held.
    h.call.sendMessageWithContext({ callback: () => large++ }, Buffer.alloc(1000));
    h.call.sendMessage('no callback');
    h.call.halfClose();
    expect(small + large).toBe(0);
    await h.settle();
    expect([small, large]).toEqual([1, 1]);
    expect(h.attempt(0).messages).toEqual([]);
    expect(h.attempt(0).halfClosed).toBe(false);
  });

  it('a writer held by an overflow goes on when the call ends before the write completes', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 100 } });
    h.attempt(0).autoCompleteWrites = false;
    let done = 0;
    h.call.sendMessageWithContext({ callback: () => done++ }, Buffer.alloc(500));
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'replay-buffer' }),
    ]);
    expect(h.attempt(0).messages).toHaveLength(1);
    await h.settle();
    expect(done).toBe(0); // held until the committed attempt has written it
    h.call.cancelWithStatus(Status.CANCELLED, 'gave up');
    await h.settle();
    expect(done).toBe(1);
    expect(h.status.code).toBe(Status.CANCELLED);
  });

  it("a writer held when the caller cancels goes on after the cancel's status, as grpc-js orders them", async () => {
    const order: string[] = [];
    for (const cancelled of [true, false]) {
      order.length = 0;
      const h = engineCall(retryPolicy(), { type: 'bidi', start: false });
      h.call.start(new Metadata(), { onReceiveStatus: (s) => order.push(`status ${s.code}`) });
      h.attempt(0).autoCompleteWrites = false;
      h.call.sendMessageWithContext({ callback: () => order.push('write 1') }, 'held');
      h.call.sendMessageWithContext({ callback: () => order.push('write 2') }, 'queued');
      if (cancelled) {
        h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
      } else {
        h.attempt(0).fail(Status.INVALID_ARGUMENT);
      }
      await h.settle();
      const code = cancelled ? Status.CANCELLED : Status.INVALID_ARGUMENT;
      expect(order).toEqual([`status ${code}`, 'write 1', 'write 2']);
    }
  });

  it('a write the committed attempt completes releases its writer then', async () => {
    const h = engineCall(retryPolicy(), { type: 'client-stream', interceptor: { perRpcBufferBytes: 100 } });
    h.attempt(0).autoCompleteWrites = false;
    let done = 0;
    h.call.sendMessageWithContext({ callback: () => done++ }, Buffer.alloc(500));
    h.call.sendMessage('next');
    expect(h.attempt(0).messages).toHaveLength(1); // one write at a time
    (h.attempt(0).pendingWrites.shift() as () => void)();
    expect(done).toBe(1);
    expect(h.attempt(0).messages).toHaveLength(2);
  });
});

describe('engine: what the application sees', () => {
  it('headers and messages of an attempt that already failed never reach it, nor commit', () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '1s', maxAttempts: 3 }), { type: 'server-stream' });
    h.attempt(0).fail(); // non-fatal: the hedge goes at once
    expect(h.attempts).toHaveLength(2);
    const reads = h.attempt(0).reads;
    h.attempt(0).headers();
    h.attempt(0).message('stale');
    expect(h.attempt(0).reads).toBe(reads); // only an attempt left running is read on
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    expect(h.received.headers).toHaveLength(0);
    h.attempt(1).succeed('fresh');
    expect(h.received.messages).toEqual(['fresh']);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'headers' }),
    ]);
  });

  it('a unary response without headers commits on the message; a null one does not', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).message(null);
    expect(eventsOfType(h.events, 'committed')).toEqual([]);
    h.attempt(0).message('r');
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'message' }),
    ]);
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.received.messages).toEqual(['r']);
    expect(h.status.code).toBe(Status.OK);
  });

  it('an OK status with no response before it commits on the status', () => {
    const h = engineCall(retryPolicy());
    h.attempt(0).status(Status.OK, 'OK');
    expect(h.status.code).toBe(Status.OK);
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'status' }),
    ]);
    expect(eventsOfType(h.events, 'attempt-end')[0]).toMatchObject({ committed: true });
  });

  it('a listener without methods, or none at all, gets nothing and breaks nothing', async () => {
    for (const listener of [{}, undefined]) {
      const h = engineCall(retryPolicy(), { type: 'server-stream', start: false });
      h.call.start(new Metadata(), listener);
      h.attempt(0).headers();
      h.attempt(0).message('m');
      h.attempt(0).status(Status.OK, 'OK');
      const cancelled = engineCall(retryPolicy(), { start: false });
      cancelled.call.start(new Metadata(), listener);
      cancelled.call.cancelWithStatus(Status.CANCELLED, 'bye');
      await cancelled.settle();
      expect(eventsOfType(h.events, 'call-end')).toHaveLength(1);
      expect(eventsOfType(cancelled.events, 'call-end')).toHaveLength(1);
    }
  });

  it("the peer is the first call's before the start, the newest attempt's before the commit, the committed one's after", () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }), { start: false });
    // grpc-js answers with the channel's target before a call starts: the call made for the first attempt does
    const early = { transportSecurityType: 'insecure' };
    h.attempt(0).getAuthContext = () => early as never;
    expect(h.call.getPeer()).toBe('peer-0');
    expect(h.call.getAuthContext()).toBe(early);
    h.start();
    expect(h.call.getPeer()).toBe('peer-0');
    // cancelled before it started: no attempt to ask
    const cancelled = engineCall(retryPolicy(), { start: false });
    cancelled.call.cancelWithStatus(Status.CANCELLED, 'early');
    expect(cancelled.call.getPeer()).toBe('');
    expect(cancelled.call.getAuthContext()).toBeNull();
    h.clock.advance(100);
    expect(h.call.getPeer()).toBe('peer-1');
    const auth = { transportSecurityType: 'ssl' };
    h.attempt(0).getAuthContext = () => auth as never;
    h.attempt(0).headers();
    expect(h.call.getPeer()).toBe('peer-0');
    expect(h.call.getAuthContext()).toBe(auth);
  });

  it('a cancel reaches the application on the next tick, with its own code and details', async () => {
    const h = engineCall(retryPolicy());
    h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    expect(h.received.statuses).toHaveLength(0);
    await h.settle();
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'Cancelled on client' });
    // The attempt tells the server the caller's status.
    expect(h.attempt(0).cancelled).toEqual({ code: Status.CANCELLED, details: 'Cancelled on client' });
    expect(eventsOfType(h.events, 'attempt-end')[0]).toMatchObject({ cancelReason: 'call-cancelled' });
  });

  it('one attempt: no grpc-previous-rpc-attempts trailer; two: "1"', () => {
    const one = engineCall(retryPolicy());
    one.attempt(0).succeed();
    expect(one.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
    const two = engineCall(retryPolicy());
    two.attempt(0).fail();
    two.clock.runNext();
    two.attempt(1).succeed();
    expect(two.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
  });

  it("the headers of an attempt after the first carry grpc-previous-rpc-attempts, on a copy; the first's carry none", () => {
    const first = engineCall(retryPolicy());
    const firstHeaders = new Metadata();
    first.attempt(0).headers(firstHeaders);
    expect(first.received.headers).toEqual([firstHeaders]);
    expect(first.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual([]);

    const retried = engineCall(retryPolicy());
    retried.attempt(0).fail();
    retried.clock.runNext();
    const fromServer = new Metadata();
    fromServer.set('x-served-by', 'b');
    retried.attempt(1).headers(fromServer);
    expect(retried.received.headers).toHaveLength(1);
    expect(retried.received.headers[0]?.getMap()).toEqual({
      'x-served-by': 'b',
      'grpc-previous-rpc-attempts': '1',
    });
    expect(fromServer.get('grpc-previous-rpc-attempts')).toEqual([]); // the attempt's own object is left as it came
    retried.attempt(1).succeed();
    expect(retried.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);

    const hedged = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 3 }));
    hedged.clock.advance(200);
    hedged.attempt(2).headers();
    expect(hedged.received.headers[0]?.get('grpc-previous-rpc-attempts')).toEqual(['2']);
  });

  it("the caller's cancel carries no grpc-previous-rpc-attempts, after a hedge or a retry committed too", async () => {
    const hedged = engineCall(hedgingPolicy({ hedgingDelay: '0.1s', maxAttempts: 2 }));
    hedged.clock.advance(100);
    hedged.attempt(1).headers();
    const retried = engineCall(retryPolicy());
    retried.attempt(0).fail();
    retried.clock.runNext();
    retried.attempt(1).headers();
    for (const h of [hedged, retried]) {
      expect(eventsOfType(h.events, 'committed')).toEqual([expect.objectContaining({ attempt: 2 })]);
      h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
      await h.settle();
      expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'Cancelled on client' });
      expect(h.status.metadata.toJSON()).toEqual({});
      // the committed attempt's peer is still the call's
      expect(h.call.getPeer()).toBe('peer-1');
    }
  });
});
