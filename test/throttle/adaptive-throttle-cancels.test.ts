/**
 * The adaptive throttle's calls without a network, at their edges: cancels of a call let through (before or after
 * its status; counted once, as cancelled or as timed out), cancels of a rejected call (before it starts, while it is
 * decided, after it started), a call used before its start, listeners that leave callbacks out, getAuthContext on a
 * grpc-js with and without it, and request messages handed on untouched to grpc-js's serialization.
 */
import { type InterceptorOptions, Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { PREVIOUS_RPC_ATTEMPTS_METADATA_KEY } from '../../src/shared/headers.js';
import { isLocalRejection } from '../../src/shared/local-rejection.js';
import {
  type AdaptiveThrottleOptions,
  createAdaptiveThrottleInterceptor,
} from '../../src/throttle/adaptive-throttle.js';
import { oneEntryConfig, RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';

const options = { method_definition: { path: '/pkg.Greeter/SayHello' } } as unknown as InterceptorOptions;

type Listener = Partial<
  Record<'onReceiveMetadata' | 'onReceiveMessage' | 'onReceiveStatus', (x: never) => void>
>;

/**
 * Next calls that behave as grpc-js's do: the status comes once, when the test answers (`answer`), and a cancel
 * does not end the call by itself (its status comes later, when the test answers with it); a cancel after the
 * status changes nothing. `cancels` records the cancels that reached the call.
 */
function scriptedNext(extra: Partial<InterceptingCallInterface> = {}) {
  const made: Array<{
    listener: Listener | undefined;
    cancels: Array<[number, string]>;
    sent: unknown[];
    answer(code: number, details?: string): void;
  }> = [];
  const next = () => {
    let ended = false;
    const record: (typeof made)[number] = {
      listener: undefined,
      cancels: [],
      sent: [],
      answer(code, details = '') {
        if (ended) return;
        ended = true;
        record.listener?.onReceiveStatus?.({ code, details, metadata: new Metadata() } as never);
      },
    };
    made.push(record);
    const call: Partial<InterceptingCallInterface> = {
      start(_md, l) {
        record.listener = l as Listener;
      },
      cancelWithStatus(code, details) {
        if (!ended) record.cancels.push([code, details]);
      },
      sendMessageWithContext(context, m) {
        record.sent.push(m);
        context.callback?.();
      },
      sendMessage(m) {
        record.sent.push(m);
      },
      halfClose() {},
      startRead() {},
      getPeer: () => 'peer-1',
      ...extra,
    };
    return call as InterceptingCallInterface;
  };
  return { next, made };
}

/** A throttle that lets every call through (random 0.99 and an empty state). */
function letThrough(extra: AdaptiveThrottleOptions = {}) {
  return createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.99, ...extra });
}

/** A throttle whose state for pkg.Greeter holds one failed request, and random 0: its next call is rejected. */
function primed(extra: AdaptiveThrottleOptions = {}) {
  const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0, ...extra });
  const { next, made } = scriptedNext();
  throttle(options, next).start(new Metadata(), {});
  made[0]!.answer(status.UNAVAILABLE);
  return { throttle, next, made };
}

/** Starts `call` with a listener that records every status it gets. */
function startRecording(call: InterceptingCallInterface, metadata = new Metadata()): StatusObject[] {
  const statuses: StatusObject[] = [];
  call.start(metadata, { onReceiveStatus: (s) => statuses.push(s) });
  return statuses;
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('a call let through, cancelled by the client', () => {
  it('counts a cancel before the status as cancelled, not by the rule', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    const statuses = startRecording(call);
    call.cancelWithStatus(status.CANCELLED, 'hedge lost');
    expect(made[0]!.cancels).toEqual([[status.CANCELLED, 'hedge lost']]);
    made[0]!.answer(status.CANCELLED, 'hedge lost');
    expect(statuses.map((s) => s.code)).toEqual([status.CANCELLED]);
    expect(throttle.counters()).toEqual({ calls: 1, rejected: 0, accepted: 0, notAccepted: 0, cancelled: 1 });
    expect(throttle.state()['pkg.Greeter']).toEqual({ requests: 0, accepts: 0, probability: 0 });
  });

  it('counts a cancel with DEADLINE_EXCEEDED (a per-attempt timeout) as a request not accepted', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    startRecording(call);
    call.cancelWithStatus(status.DEADLINE_EXCEEDED, 'per-attempt timeout');
    made[0]!.answer(status.DEADLINE_EXCEEDED);
    expect(throttle.counters()).toEqual({ calls: 1, rejected: 0, accepted: 0, notAccepted: 1, cancelled: 0 });
    expect(throttle.state()['pkg.Greeter']).toMatchObject({ requests: 1, accepts: 0 });
  });

  it('goes by the first cancel when a second comes before the status', () => {
    const timedOutFirst = letThrough();
    const a = scriptedNext();
    const first = timedOutFirst(options, a.next);
    startRecording(first);
    first.cancelWithStatus(status.DEADLINE_EXCEEDED, 'per-attempt timeout');
    first.cancelWithStatus(status.CANCELLED, 'the application gave up');
    a.made[0]!.answer(status.CANCELLED);
    expect(timedOutFirst.counters()).toMatchObject({ notAccepted: 1, cancelled: 0 });

    const cancelledFirst = letThrough();
    const b = scriptedNext();
    const second = cancelledFirst(options, b.next);
    startRecording(second);
    second.cancelWithStatus(status.CANCELLED, 'hedge lost');
    second.cancelWithStatus(status.DEADLINE_EXCEEDED, 'per-attempt timeout');
    b.made[0]!.answer(status.DEADLINE_EXCEEDED);
    expect(cancelledFirst.counters()).toMatchObject({ notAccepted: 0, cancelled: 1 });
  });

  it('counts a cancel after the status not at all: the status counted stands', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    const statuses = startRecording(call);
    made[0]!.answer(status.OK);
    call.cancelWithStatus(status.DEADLINE_EXCEEDED, 'too late');
    call.cancelWithStatus(status.CANCELLED, 'too late');
    expect(statuses.map((s) => s.code)).toEqual([status.OK]);
    expect(throttle.counters()).toEqual({ calls: 1, rejected: 0, accepted: 1, notAccepted: 0, cancelled: 0 });
  });

  it('counts a call once even when the call below it delivers a status twice', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    startRecording(call);
    const deliver = (code: number) =>
      made[0]!.listener!.onReceiveStatus!({ code, details: '', metadata: new Metadata() } as never);
    deliver(status.OK);
    deliver(status.UNAVAILABLE);
    call.cancelWithStatus(status.CANCELLED, 'after the status');
    deliver(status.CANCELLED);
    expect(throttle.counters()).toEqual({ calls: 1, rejected: 0, accepted: 1, notAccepted: 0, cancelled: 0 });
    expect(throttle.state()['pkg.Greeter']).toMatchObject({ requests: 1, accepts: 1 });
  });
});

describe('a call let through, started without a whole listener', () => {
  it('takes headers, messages and its status with no listener at all', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    throttle(options, next).start(new Metadata());
    const below = made[0]!.listener!;
    expect(() => {
      below.onReceiveMetadata?.(new Metadata() as never);
      below.onReceiveMessage?.('reply' as never);
      made[0]!.answer(status.OK);
    }).not.toThrow();
    expect(throttle.counters()).toMatchObject({ calls: 1, accepted: 1 });
  });

  it('takes headers, messages and its status with a listener that has none of the callbacks', () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    throttle(options, next).start(new Metadata(), {});
    const below = made[0]!.listener!;
    expect(() => {
      below.onReceiveMetadata?.(new Metadata() as never);
      below.onReceiveMessage?.('reply' as never);
      made[0]!.answer(status.UNAVAILABLE);
    }).not.toThrow();
    expect(throttle.counters()).toMatchObject({ calls: 1, notAccepted: 1 });
  });
});

describe('a call cancelled before the throttle decided it', () => {
  it('cancelled before its start: ends with the cancel, its next call is cancelled unstarted, and it is not counted', async () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    call.cancelWithStatus(status.CANCELLED, 'cancelled early');
    call.cancelWithStatus(status.DEADLINE_EXCEEDED, 'a second cancel');
    const ended = await new Promise<StatusObject>((resolve) =>
      call.start(new Metadata(), { onReceiveStatus: resolve }),
    );
    expect(ended).toMatchObject({ code: status.CANCELLED, details: 'cancelled early' });
    // The next call, made with the call, is cancelled once (with the first cancel), never started or written to.
    expect(made).toEqual([
      expect.objectContaining({
        listener: undefined,
        sent: [],
        cancels: [[status.CANCELLED, 'cancelled early']],
      }),
    ]);
    expect(throttle.counters()).toEqual({ calls: 0, rejected: 0, accepted: 0, notAccepted: 0, cancelled: 0 });
  });

  it('cancelled by an onEvent listener while it is rejected: ends with the cancel, once', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    let call: InterceptingCallInterface | undefined;
    const { throttle, next } = primed({
      onEvent: () => call!.cancelWithStatus(status.CANCELLED, 'cancelled by the listener'),
    });
    call = throttle(options, next);
    const statuses = startRecording(call);
    vi.runAllTimers();
    expect(statuses.map((s) => [s.code, s.details])).toEqual([
      [status.CANCELLED, 'cancelled by the listener'],
    ]);
    expect(throttle.counters()).toMatchObject({ calls: 2, rejected: 1 });
  });
});

describe('a rejected call', () => {
  it('cancelled after its start, before it ended: ends with the cancel, once', () => {
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    const { throttle, next } = primed();
    const call = throttle(options, next);
    const statuses = startRecording(call);
    call.cancelWithStatus(status.CANCELLED, 'gave up');
    call.cancelWithStatus(status.DEADLINE_EXCEEDED, 'gave up again');
    vi.runAllTimers();
    call.cancelWithStatus(status.CANCELLED, 'after the end');
    vi.runAllTimers();
    expect(statuses.map((s) => [s.code, s.details])).toEqual([[status.CANCELLED, 'gave up']]);
  });

  it.each([
    ['no listener', undefined],
    ['a listener without onReceiveStatus', {}],
  ])('ends without throwing when started with %s, cancelled or not', (_, listener) => {
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    const { throttle, next } = primed();
    throttle(options, next).start(new Metadata(), listener);
    expect(() => vi.runAllTimers()).not.toThrow();
    const cancelled = throttle(options, next);
    cancelled.start(new Metadata(), listener);
    cancelled.cancelWithStatus(status.CANCELLED, 'gave up');
    expect(() => vi.runAllTimers()).not.toThrow();
    expect(throttle.counters()).toMatchObject({ calls: 3, rejected: 2 });
  });

  it('after its start: completes writes at once, with or without a callback, and has no peer or auth context', () => {
    const { throttle, next, made } = primed();
    const call = throttle(options, next);
    call.start(new Metadata(), {});
    const written = vi.fn();
    call.sendMessageWithContext({ callback: written }, 'm');
    expect(written).toHaveBeenCalledOnce();
    expect(() => {
      call.sendMessageWithContext({}, 'm');
      call.sendMessage('m');
      call.startRead();
      call.halfClose();
    }).not.toThrow();
    expect(call.getPeer()).toBe('');
    expect(call.getAuthContext()).toBeNull();
    // Beside the priming call, only the rejected call's own next call, cancelled unstarted: nothing was sent on it.
    expect(made).toHaveLength(2);
    expect(made[1]).toMatchObject({
      listener: undefined,
      sent: [],
      cancels: [[status.CANCELLED, 'adaptive throttle: the call did not go ahead']],
    });
  });

  it("ends with trailers of the caller's Metadata class (nice-grpc's own copy of grpc-js), rejected or cancelled", () => {
    /** Stands for another copy of grpc-js's Metadata, as nice-grpc's `ClientError` checks with `instanceof`. */
    class ForeignMetadata extends Metadata {}
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    const { throttle, next } = primed();
    const rejected = startRecording(throttle(options, next), new ForeignMetadata());
    const cancelled = throttle(options, next);
    const cancelledStatuses = startRecording(cancelled, new ForeignMetadata());
    cancelled.cancelWithStatus(status.CANCELLED, 'gave up');
    const early = throttle(options, next);
    early.cancelWithStatus(status.CANCELLED, 'cancelled early');
    const earlyStatuses = startRecording(early, new ForeignMetadata());
    vi.runAllTimers();
    const ends = [...rejected, ...cancelledStatuses, ...earlyStatuses];
    expect(ends.map((s) => [s.code, s.metadata instanceof ForeignMetadata])).toEqual([
      [status.UNAVAILABLE, true],
      [status.CANCELLED, true],
      [status.CANCELLED, true],
    ]);
    // Still a local rejection to a retry interceptor above, which tells it from a server's answer by its trailers.
    expect(isLocalRejection(rejected[0]!)).toBe(true);
  });

  it("a retry rejected under retries: 'same-probability' says it was rejected with the same probability", async () => {
    const { throttle, next } = primed({ retries: 'same-probability' });
    const metadata = new Metadata();
    metadata.set(PREVIOUS_RPC_ATTEMPTS_METADATA_KEY, '1');
    const ended = await new Promise<StatusObject>((resolve) =>
      throttle(options, next).start(metadata, { onReceiveStatus: resolve }),
    );
    expect(ended.details).toBe(
      'adaptive throttle: rejected locally (client-side adaptive throttling of pkg.Greeter: a retry or hedge, ' +
        'rejection probability 0.111, 1 requests and 0 accepts in the last 1 s)',
    );
  });
});

describe('a call used before its start', () => {
  it("drops writes and reads without throwing, completes a write at once, has no auth context, and the next call's peer", () => {
    const throttle = letThrough();
    const { next, made } = scriptedNext();
    const call = throttle(options, next);
    const written = vi.fn();
    expect(() => {
      call.sendMessageWithContext({}, 'early');
      call.sendMessageWithContext({ callback: written }, 'early');
      call.sendMessage('early');
      call.startRead();
      call.halfClose();
    }).not.toThrow();
    expect(written).toHaveBeenCalledOnce();
    expect(call.getPeer()).toBe('peer-1'); // what grpc-js's call names before its start: the channel's target
    expect(call.getAuthContext()).toBeNull();
    call.start(new Metadata(), {});
    call.sendMessage('late');
    expect(made).toHaveLength(1); // the call made to say the peer is the one that goes
    expect(made[0]!.sent).toEqual(['late']);
  });
});

describe('getAuthContext of a call let through', () => {
  it("is the next call's", () => {
    const auth = { transportSecurityType: 'ssl' };
    const { next } = scriptedNext({ getAuthContext: () => auth as never });
    const call = letThrough()(options, next);
    call.start(new Metadata(), {});
    expect(call.getAuthContext()).toBe(auth);
  });

  it('is null on a grpc-js before 1.13, whose calls have no getAuthContext', () => {
    const { next } = scriptedNext();
    const call = letThrough()(options, next);
    call.start(new Metadata(), {});
    expect(call.getAuthContext()).toBeNull();
  });
});

describe('request messages through the throttle, under the retry interceptor', () => {
  /** grpc-js's bottom call, as far as the retry engine looks at it: it serializes with the method's definition. */
  function bottomNext(definition: { requestSerialize: (m: unknown) => Uint8Array }) {
    const sent: string[] = [];
    const next = () =>
      ({
        methodDefinition: definition,
        start() {},
        sendMessageWithContext(context: { callback?: () => void }, message: unknown) {
          sent.push(Buffer.from(definition.requestSerialize(message)).toString());
          context.callback?.();
        },
        sendMessage() {},
        halfClose() {},
        startRead() {},
        cancelWithStatus() {},
        getPeer: () => '',
      }) as unknown as InterceptingCallInterface;
    return { next, sent };
  }

  it('are serialized once: the bytes the retry engine made are the ones grpc-js sends', () => {
    let runs = 0;
    const definition = {
      path: '/pkg.Greeter/SayHello',
      requestSerialize: (message: unknown): Uint8Array => {
        runs += 1;
        return Buffer.from(`${JSON.stringify(message)}#${runs}`);
      },
      responseDeserialize: (b: Buffer) => b,
    };
    const callOptions = { method_definition: definition } as unknown as InterceptorOptions;
    const retry = createRetryInterceptor(oneEntryConfig('pkg.Greeter', RETRY_UNAVAILABLE_POLICY));
    const throttle = letThrough();
    const { next, sent } = bottomNext(definition);
    const call = retry(
      callOptions,
      (o) => throttle(o, next) as never,
    ) as unknown as InterceptingCallInterface;
    call.start(new Metadata(), {});
    call.sendMessageWithContext({}, { a: 1 });
    call.halfClose();
    expect(sent).toEqual(['{"a":1}#1']);
    expect(runs).toBe(1);
  });
});
