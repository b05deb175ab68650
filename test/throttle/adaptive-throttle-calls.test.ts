/**
 * The adaptive throttle interceptor without a network: what a locally rejected call looks like to the caller, the
 * events and counters, custom rejected codes, and a let-through call passing everything both ways.
 */
import { type InterceptorOptions, Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { InterceptingCallInterface } from '../../src/shared/grpc-types.js';
import { PUSHBACK_METADATA_KEY } from '../../src/shared/headers.js';
import {
  type AdaptiveThrottleOptions,
  createAdaptiveThrottleInterceptor,
  LOCAL_REJECTION_DETAILS_PREFIX,
} from '../../src/throttle/adaptive-throttle.js';
import { oneEntryConfig, RETRY_UNAVAILABLE_POLICY } from '../helpers/service-configs.js';
import { captureWarnings } from '../helpers/warnings.js';

const options = { method_definition: { path: '/pkg.Greeter/SayHello' } } as unknown as InterceptorOptions;

/** A next call that records what reached it and answers with `answer(code)`. */
function fakeNext() {
  const made: Array<{
    answer(code: number): void;
    listener: Partial<
      Record<'onReceiveMetadata' | 'onReceiveMessage' | 'onReceiveStatus', (x: never) => void>
    >;
    sent: unknown[];
    halfClosed: boolean;
    reads: number;
    cancels: number[];
  }> = [];
  const next = () => {
    const record = {
      listener: {} as (typeof made)[number]['listener'],
      sent: [] as unknown[],
      halfClosed: false,
      reads: 0,
      cancels: [] as number[],
      answer(code: number) {
        record.listener.onReceiveStatus?.({ code, details: '', metadata: new Metadata() } as never);
      },
    };
    made.push(record);
    const call: Partial<InterceptingCallInterface> = {
      start(_md, l) {
        record.listener = (l ?? {}) as typeof record.listener;
      },
      cancelWithStatus(code) {
        record.cancels.push(code);
        record.answer(code);
      },
      sendMessageWithContext(_ctx, m) {
        record.sent.push(m);
      },
      sendMessage(m) {
        record.sent.push(m);
      },
      halfClose() {
        record.halfClosed = true;
      },
      startRead() {
        record.reads += 1;
      },
      getPeer: () => 'peer-1',
    };
    return call as InterceptingCallInterface;
  };
  return { next, made };
}

/** A throttle whose state for pkg.Greeter holds one failed request, and random 0: its next call is rejected. */
function primed(extra: AdaptiveThrottleOptions = {}) {
  const clock = { t: 0, now: () => clock.t };
  const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0, ...extra });
  const { next, made } = fakeNext();
  throttle(options, next).start(new Metadata(), {});
  made[0]!.answer(status.UNAVAILABLE);
  return { throttle, next, made };
}

function statusOf(call: InterceptingCallInterface): Promise<StatusObject> {
  return new Promise((resolve) => call.start(new Metadata(), { onReceiveStatus: resolve }));
}

describe('a call the throttle rejects', () => {
  it('ends UNAVAILABLE without a network call, saying why, with a do-not-retry pushback', async () => {
    const { throttle, next, made } = primed();
    const call = throttle(options, next);
    const ended = await statusOf(call);
    // The next call made with it never went out: cancelled before any start, write or read.
    expect(made).toHaveLength(2);
    expect(made[1]).toMatchObject({
      listener: {},
      sent: [],
      halfClosed: false,
      reads: 0,
      cancels: [status.CANCELLED],
    });
    expect(ended.code).toBe(status.UNAVAILABLE);
    // The text docs/overload.md promises, spelt out: a change to the exported prefix is a change users see.
    expect(ended.details).toBe(
      'adaptive throttle: rejected locally (client-side adaptive throttling of pkg.Greeter: rejection probability ' +
        '0.111, 1 requests and 0 accepts in the last 1 s)',
    );
    expect(ended.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX)).toBe(true);
    expect(ended.metadata.get(PUSHBACK_METADATA_KEY)).toEqual(['-1']);
    expect(throttle.counters()).toMatchObject({ calls: 2, rejected: 1 });
  });

  it('carries no pushback with retryLocalRejections, so a retry policy may retry it', async () => {
    const { throttle, next } = primed({ retryLocalRejections: true, retries: 'same-probability' });
    const ended = await statusOf(throttle(options, next));
    expect(ended.code).toBe(status.UNAVAILABLE);
    expect(ended.metadata.get(PUSHBACK_METADATA_KEY)).toEqual([]);
  });

  it("refuses retryLocalRejections under 'reject-while-throttling', which would hold the throttle shut", () => {
    expect(() => createAdaptiveThrottleInterceptor({ retryLocalRejections: true })).toThrow(
      new TypeError(
        "createAdaptiveThrottleInterceptor: options.retryLocalRejections: true needs retries: 'same-probability'. Under retries: 'reject-while-throttling' (the default) every retry of a local rejection is rejected again and counted as a request, which holds the throttle shut after the backend recovers",
      ),
    );
    expect(() =>
      createAdaptiveThrottleInterceptor({ retryLocalRejections: true, retries: 'reject-while-throttling' }),
    ).toThrow(TypeError);
    expect(() =>
      createAdaptiveThrottleInterceptor({ retryLocalRejections: true, retries: 'same-probability' }),
    ).not.toThrow();
  });

  it('completes writes at once and has no peer', () => {
    const { throttle, next } = primed();
    const call = throttle(options, next);
    const written = vi.fn();
    call.sendMessageWithContext({ callback: written }, 'm');
    expect(written).toHaveBeenCalledOnce();
    call.start(new Metadata(), {});
    call.sendMessageWithContext({ callback: written }, 'm');
    expect(written).toHaveBeenCalledTimes(2);
    expect(call.getPeer()).toBe('');
  });

  it('is reported to onEvent with the numbers it was decided on', async () => {
    const events: unknown[] = [];
    const { throttle, next } = primed({ onEvent: (e) => events.push(e) });
    // The throttle decides when the call starts (it reads the attempt's grpc-previous-rpc-attempts then).
    await statusOf(throttle(options, next));
    expect(events).toEqual([
      {
        type: 'adaptive-throttle-rejected',
        method: '/pkg.Greeter/SayHello',
        key: 'pkg.Greeter',
        probability: 1 / 9,
        requests: 1,
        accepts: 0,
        retry: false,
      },
    ]);
  });

  it('still goes on when onEvent throws, and warns once', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const { throttle, next } = primed({
        onEvent: () => {
          throw new Error('listener bug');
        },
      });
      const first = await statusOf(throttle(options, next));
      const second = await statusOf(throttle(options, next));
      expect([first.code, second.code]).toEqual([status.UNAVAILABLE, status.UNAVAILABLE]);
      expect(warn).toHaveBeenCalledOnce();
      expect(String(warn.mock.calls[0]![0])).toMatch(/onEvent listener threw \(listener bug\)/);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('the peer of a call not yet started', () => {
  it("is the next call's (the channel's target, which a retry interceptor above keys its per-target state by), and that call goes on if let through", () => {
    const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.5 });
    const { next, made } = fakeNext();
    const call = throttle(options, next);
    expect(call.getPeer()).toBe('peer-1');
    const got: number[] = [];
    call.start(new Metadata(), { onReceiveStatus: (s) => got.push(s.code) });
    call.sendMessage('a');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ sent: ['a'], cancels: [] });
    made[0]!.answer(status.OK);
    expect(got).toEqual([status.OK]);
    expect(throttle.counters()).toMatchObject({ calls: 1, accepted: 1 });
  });

  it('the next call made with it is cancelled, not left unstarted, when the call is rejected', async () => {
    const { throttle, next, made } = primed();
    const call = throttle(options, next);
    expect(call.getPeer()).toBe('peer-1');
    const ended = await statusOf(call);
    expect(ended.details.startsWith(LOCAL_REJECTION_DETAILS_PREFIX)).toBe(true);
    expect(made).toHaveLength(2);
    expect(made[1]!.cancels).toEqual([status.CANCELLED]);
  });

  it('the next call made with it is cancelled when the call is cancelled before its start', async () => {
    const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.5 });
    const { next, made } = fakeNext();
    const call = throttle(options, next);
    call.getPeer();
    call.cancelWithStatus(status.CANCELLED, 'by the application');
    const ended = await statusOf(call);
    expect(ended).toMatchObject({ code: status.CANCELLED, details: 'by the application' });
    expect(made).toHaveLength(1);
    expect(made[0]!.cancels).toEqual([status.CANCELLED]);
  });
});

describe('a call the throttle lets through', () => {
  it('passes writes, reads, the half-close, headers, messages and the status both ways', () => {
    const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.5 });
    const { next, made } = fakeNext();
    const call = throttle(options, next);
    const got: unknown[] = [];
    call.start(new Metadata(), {
      onReceiveMetadata: (m) => got.push(m),
      onReceiveMessage: (m) => got.push(m),
      onReceiveStatus: (s) => got.push(s.code),
    });
    call.sendMessageWithContext({}, 'a');
    call.sendMessage('b');
    call.startRead();
    call.halfClose();
    const md = new Metadata();
    made[0]!.listener.onReceiveMetadata?.(md as never);
    made[0]!.listener.onReceiveMessage?.('reply' as never);
    made[0]!.answer(status.OK);
    expect(made[0]).toMatchObject({ sent: ['a', 'b'], halfClosed: true, reads: 1 });
    expect(got).toEqual([md, 'reply', status.OK]);
    expect(call.getPeer()).toBe('peer-1');
    expect(throttle.counters()).toMatchObject({ calls: 1, accepted: 1, notAccepted: 0 });
  });

  it('counts the codes of rejectedStatusCodes as not accepted, and the others as accepted', () => {
    const throttle = createAdaptiveThrottleInterceptor({
      clock: { now: () => 0 },
      random: () => 0.99,
      rejectedStatusCodes: ['INTERNAL'],
    });
    const { next, made } = fakeNext();
    for (const code of [status.INTERNAL, status.UNAVAILABLE]) {
      throttle(options, next).start(new Metadata(), {});
      made.at(-1)!.answer(code);
    }
    expect(throttle.counters()).toMatchObject({ accepted: 1, notAccepted: 1 });
  });

  it('rejects a rejectedStatusCodes that is not a list of codes, naming the entry', () => {
    expect(() => createAdaptiveThrottleInterceptor({ rejectedStatusCodes: 'UNAVAILABLE' as never })).toThrow(
      new TypeError(
        'createAdaptiveThrottleInterceptor: options.rejectedStatusCodes must be an array of status codes, got "UNAVAILABLE"',
      ),
    );
    expect(() =>
      createAdaptiveThrottleInterceptor({ rejectedStatusCodes: ['UNAVAILABLE', 'NOPE'] as never }),
    ).toThrow(/createAdaptiveThrottleInterceptor: .*rejectedStatusCodes\[1\]/);
  });
});

describe('the order of the throttle and the retry interceptor, without a network', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const retryConfig = oneEntryConfig('pkg.Greeter', RETRY_UNAVAILABLE_POLICY);

  it('throttle first: the retry interceptor it hands the call to says so, once', () => {
    const warnings = captureWarnings();
    const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.99 });
    const retry = createRetryInterceptor(retryConfig);
    const { next, made } = fakeNext();
    const seen: InterceptorOptions[] = [];
    for (let i = 0; i < 2; i++) {
      throttle(options, (o) => {
        seen.push(o);
        return retry(o, next);
      }).start(new Metadata(), {});
    }
    expect(made).toHaveLength(2);
    expect(warnings.map((w) => w.code)).toEqual(['GRPC_RETRY_HEDGING_THROTTLE_ORDER']);
    // What the throttle hands on is a copy of the application's options, with the mark.
    expect(seen[0]).not.toBe(options);
    expect(seen[0]).toMatchObject(options);
  });

  it('retry interceptor first: nothing is said', () => {
    const warnings = captureWarnings();
    const throttle = createAdaptiveThrottleInterceptor({ clock: { now: () => 0 }, random: () => 0.99 });
    const retry = createRetryInterceptor(retryConfig);
    const { next, made } = fakeNext();
    retry(options, (o) => throttle(o, next)).start(new Metadata(), {});
    expect(made).toHaveLength(1);
    expect(warnings).toEqual([]);
  });
});

describe('createAdaptiveThrottleInterceptor, made and misused', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('put in the interceptors itself, says so, with the call to make instead', () => {
    expect(() => createAdaptiveThrottleInterceptor(options as never)).toThrow(
      new TypeError(
        "createAdaptiveThrottleInterceptor was put in a client's interceptors itself, so grpc-js called it for the call /pkg.Greeter/SayHello: it makes the interceptor. Call it once, and put what it returns there: interceptors: [createAdaptiveThrottleInterceptor()]",
      ),
    );
  });

  it('names onEvent when it is not a function', () => {
    expect(() => createAdaptiveThrottleInterceptor({ onEvent: 'log' as never })).toThrow(
      /^createAdaptiveThrottleInterceptor: options\.onEvent must be a function/,
    );
  });

  it.each<[unknown, string]>([
    [undefined, 'got nothing'],
    [3, 'got 3'],
    [null, 'got null'],
  ])('refuses a key that returns %o, where the call is made, naming the method', (returned, got) => {
    const throttle = createAdaptiveThrottleInterceptor({ key: (() => returned) as never });
    const { next, made } = fakeNext();
    expect(() => throttle(options, next)).toThrow(
      new TypeError(
        `createAdaptiveThrottleInterceptor: options.key must return a string, ${got} for "/pkg.Greeter/SayHello"`,
      ),
    );
    expect(made).toHaveLength(0);
    expect(throttle.state()).toEqual({});
  });

  it('without onEvent, rejects calls without a warning', async () => {
    const warnings = captureWarnings();
    const { throttle, next } = primed();
    const ended = await statusOf(throttle(options, next));
    expect(ended.code).toBe(status.UNAVAILABLE);
    expect(warnings).toEqual([]);
  });

  it('counts by the system clock when given none', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const throttle = createAdaptiveThrottleInterceptor({ random: () => 0.99 });
    const { next, made } = fakeNext();
    throttle(options, next).start(new Metadata(), {});
    made[0]!.answer(status.UNAVAILABLE);
    expect(throttle.state()['pkg.Greeter']).toMatchObject({ requests: 1, accepts: 0 });
    vi.setSystemTime(1_000_000 + throttle.rule.windowMs);
    expect(throttle.state()['pkg.Greeter']).toMatchObject({ requests: 0, accepts: 0 });
  });
});

describe('the keys the throttle keeps', () => {
  it('forgets idle keys when there are 1,024, then when there are twice as many as it kept', () => {
    const throttle = createAdaptiveThrottleInterceptor({
      clock: { now: () => 0 },
      random: () => 0.99,
      key: (method) => method,
    });
    const { next, made } = fakeNext();
    const on = (path: string) => ({ method_definition: { path } }) as unknown as InterceptorOptions;
    const keys = () => Object.keys(throttle.state()).length;
    // 600 keys that count a request (answered, in the window), 424 that count nothing (never started).
    for (let i = 0; i < 600; i++) {
      throttle(on(`/busy/${i}`), next).start(new Metadata(), {});
      made.at(-1)!.answer(status.OK);
    }
    let idle = 0;
    const addIdle = (n: number) => {
      for (let i = 0; i < n; i++) throttle(on(`/idle/${idle++}`), next);
    };
    addIdle(424);
    expect(keys()).toBe(1024);
    addIdle(1); // the 1,025th: the 424 idle ones go, the 600 busy ones stay
    expect(keys()).toBe(601);
    addIdle(1200 - 601); // up to twice the 600 kept
    expect(keys()).toBe(1200);
    addIdle(1); // the 1,201st: the idle ones go again
    expect(keys()).toBe(601);
  });
});

describe("the throttle's clock and random source, called from grpc-js callbacks", () => {
  it('a random source that throws or reads outside [0, 1) is drawn from Math.random instead, warned once', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const throwing = primed({
        random: () => {
          throw new Error('random bug');
        },
      });
      // Nothing escapes the call's start, and the call is decided by a draw of Math.random.
      for (let i = 0; i < 3; i++) {
        expect(() => throwing.throttle(options, throwing.next).start(new Metadata(), {})).not.toThrow();
      }
      expect(warn).toHaveBeenCalledOnce();
      expect(String(warn.mock.calls[0]![0])).toMatch(
        /createAdaptiveThrottleInterceptor: options\.random threw \(random bug\); Math\.random is drawn instead/,
      );
      expect(warn.mock.calls[0]![1]).toMatchObject({ code: 'GRPC_RETRY_HEDGING_HOOK_ERROR' });

      // A draw of 1 would let every call through, however high P: Math.random's draws reject about P of them.
      const clock = { now: () => 0 };
      const ones = createAdaptiveThrottleInterceptor({ clock, random: () => 1 });
      const { next, made } = fakeNext();
      for (let i = 0; i < 40; i++) {
        ones(options, next).start(new Metadata(), {});
        made.at(-1)?.answer(status.UNAVAILABLE);
      }
      const before = ones.counters().rejected;
      for (let i = 0; i < 200; i++) {
        ones(options, next).start(new Metadata(), {});
      }
      expect(ones.counters().rejected - before).toBeGreaterThan(100); // P is near 0.8: about 160 expected
    } finally {
      warn.mockRestore();
    }
  });

  it('a clock that throws later is read at its last good reading, warned once; one that cannot read at first is refused', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      let broken = false;
      const clock = {
        now: () => {
          if (broken) throw new Error('clock bug');
          return 5_000;
        },
      };
      const throttle = createAdaptiveThrottleInterceptor({ clock, random: () => 0.99 });
      const { next, made } = fakeNext();
      throttle(options, next).start(new Metadata(), {});
      broken = true;
      // The status is counted at the last good reading (5 s), from inside grpc-js's status callback.
      expect(() => made[0]!.answer(status.UNAVAILABLE)).not.toThrow();
      expect(() => throttle(options, next).start(new Metadata(), {})).not.toThrow();
      expect(() => made[1]!.answer(status.UNAVAILABLE)).not.toThrow();
      broken = false;
      expect(throttle.state()['pkg.Greeter']).toMatchObject({ requests: 2, accepts: 0 });
      expect(warn).toHaveBeenCalledOnce();
      expect(String(warn.mock.calls[0]![0])).toMatch(
        /options\.clock\.now threw \(clock bug\); its last reading/,
      );

      expect(() => createAdaptiveThrottleInterceptor({ clock: { now: () => Number.NaN } })).toThrow(
        /^createAdaptiveThrottleInterceptor: options\.clock\.now\(\) must return a finite number of ms .*got NaN$/,
      );
      const throwsAtOnce = {
        now: (): number => {
          throw new Error('no time');
        },
      };
      expect(() => createAdaptiveThrottleInterceptor({ clock: throwsAtOnce })).toThrow(
        'createAdaptiveThrottleInterceptor: options.clock.now() threw when read: no time',
      );
    } finally {
      warn.mockRestore();
    }
  });
});
