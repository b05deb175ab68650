import { type InterceptorOptions, Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { createAdaptiveThrottleInterceptor, serviceOfMethod } from '../../src/throttle/adaptive-throttle.js';

/** A next call that ends with `code` when cancelled or when `answer` is called. */
function fakeNext() {
  const calls: Array<{
    answer(code: number): void;
    started: boolean;
    cancelled: [number, string] | undefined;
  }> = [];
  const next = () => {
    let listener: { onReceiveStatus?: (s: StatusObject) => void } | undefined;
    const record = {
      started: false,
      cancelled: undefined as [number, string] | undefined,
      answer(code: number) {
        listener?.onReceiveStatus?.({ code, details: '', metadata: new Metadata() });
      },
    };
    calls.push(record);
    const call: Partial<InterceptingCallInterface> = {
      start(_md, l) {
        record.started = true;
        listener = l as typeof listener;
      },
      cancelWithStatus(code, details) {
        record.cancelled ??= [code, details];
        record.answer(code);
      },
      halfClose() {},
      sendMessage() {},
    };
    return call as InterceptingCallInterface;
  };
  return { next, calls };
}

const options = { method_definition: { path: '/pkg.Greeter/SayHello' } } as unknown as InterceptorOptions;
const listener = { onReceiveStatus: () => {} };

describe('createAdaptiveThrottleInterceptor (unit, fake time)', () => {
  it('keys by service by default', () => {
    expect(serviceOfMethod('/pkg.Greeter/SayHello')).toBe('pkg.Greeter');
    expect(serviceOfMethod('nomethod')).toBe('nomethod');
  });

  it('counts a client cancel with DEADLINE_EXCEEDED (a per-attempt timeout) as not accepted, and ignores CANCELLED', () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0.999 });
    const { next } = fakeNext();
    const a = throttle(options, next);
    a.start(new Metadata(), listener);
    a.cancelWithStatus(status.CANCELLED, 'hedge lost');
    const b = throttle(options, next);
    b.start(new Metadata(), listener);
    b.cancelWithStatus(status.DEADLINE_EXCEEDED, 'per-attempt timeout');
    expect(throttle.counters()).toEqual({ calls: 2, rejected: 0, accepted: 0, notAccepted: 1, cancelled: 1 });
    expect(throttle.state()['pkg.Greeter']).toEqual({ requests: 1, accepts: 0, probability: 1 / 9 });
  });

  it('decides when the call starts, from its metadata: a retry is rejected while P > 0 and its next call is never started', async () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0.999 });
    const { next, calls } = fakeNext();
    const first = throttle(options, next);
    expect(calls.map((c) => c.started)).toEqual([false]); // made with the call (where a closed channel throws), not started
    first.start(new Metadata(), listener);
    calls[0]?.answer(status.UNAVAILABLE); // refused: P = 1/9
    const retryMetadata = new Metadata();
    retryMetadata.set('grpc-previous-rpc-attempts', '1');
    const retry = throttle(options, next);
    const ended: StatusObject[] = [];
    retry.start(retryMetadata, { onReceiveStatus: (s) => ended.push(s) });
    // The retry was not passed on: its next call was cancelled, never started.
    expect(calls.map((c) => [c.started, c.cancelled])).toEqual([
      [true, undefined],
      [false, [status.CANCELLED, 'adaptive throttle: the call did not go ahead']],
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual([expect.objectContaining({ code: status.UNAVAILABLE })]);
    expect(ended[0]?.details).toContain(
      "a retry or hedge, rejected while new calls are rejected with probability 0.111 (option retries: 'reject-while-throttling'), 1 requests and 0 accepts",
    );
    expect(ended[0]?.metadata.get('grpc-retry-pushback-ms')).toEqual(['-1']);
    // A first attempt goes (0.999 is above P).
    throttle(options, next).start(new Metadata(), listener);
    expect(calls.map((c) => c.started)).toEqual([true, false, true]);
    expect(throttle.counters()).toMatchObject({ calls: 3, rejected: 1 });
  });

  it('a call cancelled before it starts ends with the cancel status, and its next call is cancelled unstarted', async () => {
    const throttle = createAdaptiveThrottleInterceptor();
    const { next, calls } = fakeNext();
    const call = throttle(options, next);
    call.cancelWithStatus(status.CANCELLED, 'gave up');
    const ended: StatusObject[] = [];
    call.start(new Metadata(), { onReceiveStatus: (s) => ended.push(s) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toEqual([expect.objectContaining({ code: status.CANCELLED, details: 'gave up' })]);
    expect(calls.map((c) => [c.started, c.cancelled])).toEqual([[false, [status.CANCELLED, 'gave up']]]);
    expect(throttle.counters().calls).toBe(0);
  });

  it('keeps a state per key and forgets it after the window', () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, windowMs: 10_000, key: (m) => m });
    const { next, calls } = fakeNext();
    for (let i = 0; i < 4; i++) throttle(options, next).start(new Metadata(), listener);
    for (const c of calls) c.answer(status.RESOURCE_EXHAUSTED);
    const other = { method_definition: { path: '/pkg.Greeter/Other' } } as unknown as InterceptorOptions;
    throttle(other, next).start(new Metadata(), listener);
    calls.at(-1)!.answer(status.OK);
    expect(throttle.state()).toEqual({
      '/pkg.Greeter/SayHello': { requests: 4, accepts: 0, probability: 4 / 12 },
      '/pkg.Greeter/Other': { requests: 1, accepts: 1, probability: 0 },
    });
    clock.t = 10_000;
    expect(throttle.state()['/pkg.Greeter/SayHello']?.probability).toBe(0);
  });

  it('ends a rejected call once, with the status it is cancelled with if that comes first', async () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0 });
    const { next, calls } = fakeNext();
    throttle(options, next).start(new Metadata(), listener);
    calls[0]!.answer(status.UNAVAILABLE);
    const statuses: StatusObject[] = [];
    const rejected = throttle(options, next);
    rejected.start(new Metadata(), { onReceiveStatus: (s: StatusObject) => statuses.push(s) });
    rejected.cancelWithStatus(status.CANCELLED, 'cancelled by the app');
    rejected.cancelWithStatus(status.CANCELLED, 'twice');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(statuses.map((s) => [s.code, s.details])).toEqual([[status.CANCELLED, 'cancelled by the app']]);
    // The rejected call's next call was cancelled, never started.
    expect(calls.map((c) => [c.started, c.cancelled?.[0]])).toEqual([
      [true, undefined],
      [false, status.CANCELLED],
    ]);
  });
});

describe('createAdaptiveThrottleInterceptor: keys it forgets', () => {
  const at = (path: string) => ({ method_definition: { path } }) as unknown as InterceptorOptions;

  function answered(
    throttle: ReturnType<typeof createAdaptiveThrottleInterceptor>,
    next: () => InterceptingCallInterface,
    path: string,
  ) {
    const call = throttle(at(path), next);
    call.start(new Metadata(), listener);
    return call;
  }

  it('past 1,024 keys, forgets those idle for a window (as good as new), and keeps those still counting', () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0.999, key: (m) => m });
    const { next, calls } = fakeNext();
    for (let i = 0; i < 1_023; i++) {
      answered(throttle, next, `/pkg.S/M${i}`);
      calls[i]?.answer(status.UNAVAILABLE);
    }
    clock.t = throttle.rule.windowMs + 1; // every key so far is idle
    answered(throttle, next, '/pkg.S/Busy');
    calls[1_023]?.answer(status.UNAVAILABLE);
    expect(Object.keys(throttle.state())).toHaveLength(1_024);
    answered(throttle, next, '/pkg.S/New');
    expect(Object.keys(throttle.state()).sort()).toEqual(['/pkg.S/Busy', '/pkg.S/New']);
    expect(throttle.state()['/pkg.S/Busy']).toMatchObject({ requests: 1, accepts: 0 });
  });

  it('a call out while its key is forgotten counts on the key when it answers', () => {
    const clock = { t: 0, now: () => clock.t };
    const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0.999, key: (m) => m });
    const { next, calls } = fakeNext();
    answered(throttle, next, '/pkg.S/Long'); // out, not answered: its key counts no request yet
    for (let i = 0; i < 1_024; i++) {
      answered(throttle, next, `/pkg.S/M${i}`);
    }
    expect(throttle.state()['/pkg.S/Long']).toBeUndefined(); // forgotten with the other idle keys
    calls[0]?.answer(status.UNAVAILABLE);
    expect(throttle.state()['/pkg.S/Long']).toMatchObject({ requests: 1, accepts: 0 });
  });
});
