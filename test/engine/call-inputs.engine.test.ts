/**
 * What a call is made with is read once, when it starts, as grpc-js reads it for a call without retries: the
 * application's Metadata, a Date deadline, and the parent server call (`parent`, `propagate_flags`), whose
 * cancellation and deadline then bound the whole call, across attempts and backoffs (src/retry/parent-call.ts).
 * And what the application reads at the end names the attempt that answered: the peer and the trailers'
 * `grpc-previous-rpc-attempts`.
 */
import { EventEmitter } from 'node:events';
import { type InterceptorOptions, Metadata, propagate } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { callBounds } from '../../src/retry/parent-call.js';
import { engineCall, eventsOfType, hedgingPolicy, retryPolicy, Status, T0 } from '../helpers/engine.js';

/** A parent server call: an EventEmitter with the deadline grpc-js would give it. */
function parentCall(deadlineMs: number = Number.POSITIVE_INFINITY) {
  const parent = new EventEmitter() as EventEmitter & { cancelled: boolean; getDeadline(): number };
  parent.cancelled = false;
  parent.getDeadline = () => deadlineMs;
  return parent;
}

describe("engine: the application's metadata", () => {
  it('later attempts send the headers as they were when the call started, whatever the application does next', () => {
    const metadata = new Metadata();
    metadata.set('x-token', 'v1');
    metadata.add('x-multi', 'a');
    metadata.set('x-bin', Buffer.from([1, 2]));
    const h = engineCall(retryPolicy(), { metadata });
    // The application prepares its next call on the same object.
    metadata.set('x-token', 'v2');
    metadata.add('x-multi', 'b');
    (metadata.get('x-bin')[0] as Buffer)[0] = 9;
    metadata.set('x-added-later', 'yes');
    h.attempt(0).fail();
    h.clock.runNext();
    for (const attempt of h.attempts) {
      expect(attempt.metadata?.get('x-token')).toEqual(['v1']);
      expect(attempt.metadata?.get('x-multi')).toEqual(['a']);
      expect(attempt.metadata?.get('x-bin')).toEqual([Buffer.from([1, 2])]);
      expect(attempt.metadata?.get('x-added-later')).toEqual([]);
    }
    expect(h.attempts).toHaveLength(2);
  });

  it("hedges too; and the application's object is never written to", () => {
    const metadata = new Metadata({ corked: true });
    metadata.set('x-token', 'v1');
    const h = engineCall(hedgingPolicy({}, { waitForReady: true }), { metadata });
    metadata.set('x-token', 'v2');
    h.clock.advance(100);
    expect(h.attempts.map((a) => a.header('x-token'))).toEqual(['v1', 'v1']);
    expect(h.attempt(1).header('grpc-previous-rpc-attempts')).toBe('1');
    expect(metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
    expect(metadata.getOptions()).toEqual({ corked: true });
  });

  it("a config's waitForReady on a method with no policy goes on a copy, not on the application's object", () => {
    const config = { methodConfig: [{ name: [{ service: 'test.Svc' }], waitForReady: true }] };
    const metadata = new Metadata();
    const h = engineCall(config, { metadata });
    expect(h.attempt(0).metadata?.getOptions().waitForReady).toBe(true);
    expect(metadata.getOptions().waitForReady).toBeUndefined();
    // The call's own value is kept, and then its object is handed on as it is.
    const own = new Metadata({ waitForReady: false });
    expect(engineCall(config, { metadata: own }).attempt(0).metadata).toBe(own);
  });
});

describe('engine: a Date deadline', () => {
  it('is read once: a Date the application moves after the call started moves neither the call nor its attempts', () => {
    const deadline = new Date(T0 + 500);
    const h = engineCall(retryPolicy({ initialBackoff: '0.3s', maxBackoff: '0.3s' }), {
      callOptions: { deadline },
    });
    deadline.setTime(T0 + 10_000);
    h.attempt(0).fail();
    h.clock.advance(300);
    expect(h.attempts).toHaveLength(2);
    // Still a Date (an interceptor below may call its methods), in a copy of the call's own.
    for (const attempt of h.attempts) {
      expect(attempt.options.deadline).toBeInstanceOf(Date);
      expect((attempt.options.deadline as Date).getTime()).toBe(T0 + 500);
      expect(attempt.options.deadline).not.toBe(deadline);
    }
    h.attempt(1).fail();
    h.clock.advance(200);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(2);
  });
});

describe('engine: the parent call', () => {
  it("its cancellation during a backoff ends the call with grpc-js's status, and no retry is made", async () => {
    const parent = parentCall();
    const h = engineCall(retryPolicy(), { callOptions: { parent } });
    h.attempt(0).fail();
    parent.cancelled = true;
    parent.emit('cancelled', 'cancelled');
    await h.settle();
    h.clock.advance(10_000);
    expect(h.status).toMatchObject({ code: Status.CANCELLED, details: 'Cancelled by parent call' });
    expect(h.attempts).toHaveLength(1);
    expect(parent.listenerCount('cancelled')).toBe(0);
  });

  it('its cancellation during an attempt cancels that attempt and every hedge', async () => {
    const parent = parentCall();
    const h = engineCall(hedgingPolicy(), { callOptions: { parent } });
    h.clock.advance(100);
    parent.emit('cancelled', 'cancelled');
    await h.settle();
    expect(h.status.details).toBe('Cancelled by parent call');
    expect(h.attempts.map((a) => a.cancelled?.code)).toEqual([Status.CANCELLED, Status.CANCELLED]);
  });

  it('the attempts keep the parent, with the earlier of the two deadlines, and leave the cancellation to the call', () => {
    const parent = parentCall(T0 + 400);
    const h = engineCall(retryPolicy({ initialBackoff: '0.3s', maxBackoff: '0.3s' }), {
      deadlineMs: 1_000,
      callOptions: { parent },
    });
    expect(parent.listenerCount('cancelled')).toBe(1);
    expect(h.attempt(0).options.parent).toBe(parent);
    // grpc-js's defaults (every flag) less the cancellation, which the call follows once (it listens once)
    expect(h.attempt(0).options.propagate_flags).toBe(propagate.DEFAULTS & ~propagate.CANCELLATION);
    // the earlier of the two deadlines, fixed for every attempt
    expect(h.attempt(0).options.deadline).toBe(T0 + 400);
    h.attempt(0).fail();
    h.clock.advance(300);
    h.attempt(1).fail();
    h.clock.advance(100);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.attempts).toHaveLength(2);
    expect(parent.listenerCount('cancelled')).toBe(0);
  });

  it('the listener goes when the call ends any other way', () => {
    const parent = parentCall();
    const h = engineCall(retryPolicy(), { callOptions: { parent } });
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(parent.listenerCount('cancelled')).toBe(0);
  });

  it('holds one listener on the parent however many of its calls are out, and lets go when the last ends', async () => {
    // A listener a call would pass Node's limit of 10 at the eleventh child, and warn again at every batch.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const parent = parentCall();
      for (let batch = 0; batch < 2; batch++) {
        const calls = Array.from({ length: 20 }, () =>
          engineCall(retryPolicy(), { callOptions: { parent } }),
        );
        expect(parent.listenerCount('cancelled')).toBe(1);
        for (const h of calls.slice(0, 19)) h.attempt(0).succeed();
        expect(parent.listenerCount('cancelled')).toBe(1);
        calls[19]?.attempt(0).succeed();
        expect(parent.listenerCount('cancelled')).toBe(0);
      }
      const calls = Array.from({ length: 12 }, () =>
        engineCall(hedgingPolicy(), { callOptions: { parent } }),
      );
      calls[0]?.attempt(0).succeed(); // one ended before the parent's cancel
      parent.emit('cancelled', 'cancelled');
      for (const h of calls) await h.settle();
      expect(calls.map((h) => h.status.code)).toEqual([Status.OK, ...Array(11).fill(Status.CANCELLED)]);
      expect(parent.listenerCount('cancelled')).toBe(0);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('propagate_flags choose: without CANCELLATION nothing listens; without DEADLINE the call keeps its own', () => {
    const parent = parentCall(T0 + 400);
    const noCancel = engineCall(retryPolicy(), {
      deadlineMs: 1_000,
      callOptions: { parent, propagate_flags: propagate.DEADLINE },
    });
    expect(parent.listenerCount('cancelled')).toBe(0);
    expect(noCancel.attempt(0).options).toMatchObject({
      deadline: T0 + 400,
      propagate_flags: propagate.DEADLINE,
    });
    const noDeadline = engineCall(retryPolicy(), {
      deadlineMs: 1_000,
      callOptions: { parent, propagate_flags: propagate.CANCELLATION },
    });
    expect(parent.listenerCount('cancelled')).toBe(1);
    expect(noDeadline.attempt(0).options).toMatchObject({ deadline: T0 + 1_000, propagate_flags: 0 });
  });

  it('with no parent and no Date, the attempts are made with the call options as they are', () => {
    const options = { method_definition: {}, deadline: T0 + 100, host: 'h' } as unknown as InterceptorOptions;
    expect(callBounds(options)).toEqual({
      deadline: T0 + 100,
      attemptOptions: options,
      cancelledWith: undefined,
    });
    expect(callBounds(options).attemptOptions).toBe(options);
    // grpc-js's own default for no parent
    const nullParent = { ...options, parent: null } as unknown as InterceptorOptions;
    expect(callBounds(nullParent).attemptOptions).toBe(nullParent);
    const h = engineCall(retryPolicy(), { deadlineMs: 100 });
    expect(h.attempt(0).options).not.toHaveProperty('propagate_flags');
  });

  it("a Date deadline stays a Date when the parent's comes first; no deadline at all stays none", () => {
    const parent = parentCall(T0 + 400);
    const dated = engineCall(retryPolicy(), { callOptions: { parent, deadline: new Date(T0 + 1_000) } });
    expect(dated.attempt(0).options.deadline).toEqual(new Date(T0 + 400));
    const none = engineCall(retryPolicy(), { callOptions: { parent: parentCall(Infinity) } });
    expect(none.attempt(0).options.deadline).toBeUndefined();
  });
});

describe('engine: what the application reads at the end names the attempt that answered', () => {
  it("grpc-previous-rpc-attempts in the trailers: the committed attempt's number less one", () => {
    const firstWins = engineCall(hedgingPolicy());
    firstWins.clock.advance(200);
    expect(firstWins.attempts).toHaveLength(3);
    firstWins.attempt(0).succeed();
    expect(firstWins.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);

    const secondWins = engineCall(hedgingPolicy());
    secondWins.clock.advance(200);
    secondWins.attempt(1).succeed();
    expect(secondWins.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);

    const exhausted = engineCall(retryPolicy({ maxAttempts: 3 }));
    for (let i = 0; i < 3; i++) {
      exhausted.attempt(i).fail();
      exhausted.clock.runNext();
    }
    expect(exhausted.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['2']);
  });

  it('every hedge failed: the attempt whose status the call ends with (the last to fail) is the one named', () => {
    const nonFatal = hedgingPolicy({ hedgingDelay: '0s', nonFatalStatusCodes: ['UNAVAILABLE'] });
    const firstLast = engineCall(nonFatal);
    firstLast.attempt(1).fail();
    firstLast.attempt(2).fail();
    firstLast.attempt(0).fail();
    expect(firstLast.status.details).toBe('attempt 1 failed');
    expect(firstLast.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
    expect(firstLast.call.getPeer()).toBe('peer-0');

    const secondLast = engineCall(nonFatal);
    secondLast.attempt(0).fail();
    secondLast.attempt(2).fail();
    secondLast.attempt(1).fail();
    expect(secondLast.status.details).toBe('attempt 2 failed');
    expect(secondLast.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
    expect(secondLast.call.getPeer()).toBe('peer-1');
  });

  it("the caller's cancel before any attempt answered: no attempt is named in the trailers", async () => {
    const h = engineCall(hedgingPolicy({ hedgingDelay: '0s' }));
    expect(h.attempts).toHaveLength(3);
    h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual([]);
  });

  it("the deadline during a backoff (the engine's own status): the attempts made less one", () => {
    const h = engineCall(retryPolicy({ maxAttempts: 5 }), { deadlineMs: 250 });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    h.clock.advance(250);
    expect(h.status.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(h.status.details).toContain('while waiting to retry');
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
  });

  it("a status the engine makes comes with trailers of the caller's Metadata class (another copy of grpc-js)", () => {
    /** Stands for another copy's Metadata: its clone is of its own class, as each copy's is. */
    class ForeignMetadata extends Metadata {
      override clone(): Metadata {
        const copy = new ForeignMetadata();
        for (const [key, values] of Object.entries(this.toJSON())) {
          for (const value of values) copy.add(key, value);
        }
        return copy;
      }
    }
    const h = engineCall(retryPolicy({ maxAttempts: 5 }), {
      deadlineMs: 250,
      metadata: new ForeignMetadata(),
    });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).fail();
    h.clock.advance(250);
    expect(h.status.details).toContain('while waiting to retry');
    expect(h.status.metadata).toBeInstanceOf(ForeignMetadata);
    expect(h.status.metadata.get('grpc-previous-rpc-attempts')).toEqual(['1']);
  });

  it("getPeer() after the end is the winner's, not the newest hedge's", () => {
    const h = engineCall(hedgingPolicy());
    h.clock.advance(200);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(h.call.getPeer()).toBe('peer-0');
  });
});

describe('engine: an attempt committed before the application cancels', () => {
  it('is reported committed at its end, with the cancel as its reason', async () => {
    const h = engineCall(retryPolicy(), { type: 'server-stream' });
    h.attempt(0).headers();
    h.call.cancelWithStatus(Status.CANCELLED, 'Cancelled on client');
    await h.settle();
    h.attempt(0).status(Status.CANCELLED, 'Cancelled on client');
    expect(eventsOfType(h.events, 'committed')).toEqual([
      expect.objectContaining({ attempt: 1, reason: 'headers' }),
    ]);
    expect(eventsOfType(h.events, 'attempt-end')).toEqual([
      expect.objectContaining({ attempt: 1, committed: true, cancelReason: 'call-cancelled' }),
    ]);
  });
});
