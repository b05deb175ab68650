/**
 * createRetryInterceptor's options, where mutation testing found them unchecked (src/retry/interceptor-options.ts):
 * the text of each option's error, a `random` left out, and event listeners given as arrays, per interceptor and per
 * call, alone or together.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withRetryOptions } from '../../src/retry/call-options.js';
import type { RetryEvent } from '../../src/retry/events.js';
import { listenerOf, resolveInterceptorOptions } from '../../src/retry/interceptor-options.js';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { engineCall, eventsOfType, retryPolicy, T0 } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

const config = retryPolicy();
const create = (options: unknown) => () => createRetryInterceptor(config, options as never);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createRetryInterceptor: the error of each bad option names it and what it takes', () => {
  it.each([
    [{ random: 5 }, 'options.random must be a function returning a number in [0, 1), got 5'],
    [{ perRpcBufferBytes: -1 }, 'options.perRpcBufferBytes must be an integer >= 0 (bytes), got -1'],
    [{ totalBufferBytes: -1 }, 'options.totalBufferBytes must be an integer >= 0 (bytes), got -1'],
    [{ onEvent: 5 }, 'options.onEvent must be a function or an array of functions, got 5'],
    [{ deadlineAwareBackoff: 'yes' }, 'options.deadlineAwareBackoff must be true or false, got "yes"'],
    [
      { adaptiveHedging: 5 },
      'options.adaptiveHedging must be true, false, an options object or an AdaptiveHedging, got 5',
    ],
    [
      { adaptiveHedging: { maxExtraLoad: 5 } },
      'options.adaptiveHedging.maxExtraLoad must be a number in (0, 1), got 5',
    ],
  ])('%j', (options, message) => {
    expect(create(options)).toThrow(`createRetryInterceptor: ${message}`);
  });

  it('an array of listeners with one that is not a function is refused, whatever its place', () => {
    expect(create({ onEvent: [() => undefined, 'x'] })).toThrow(
      /^createRetryInterceptor: options\.onEvent must be a function or an array of functions, got \[/,
    );
    expect(create({ onEvent: [null] })).toThrow(TypeError);
  });
});

describe('the renamed throttle option', () => {
  it('says what the new option takes', () => {
    expect(create({ throttle: {} })).toThrow(
      new TypeError(
        'createRetryInterceptor: options.throttle was renamed to "gate" (it takes a RetryThrottle, a RetryBudget or any RetryGate)',
      ),
    );
  });
});

describe('random left out', () => {
  it('draws the jitter from Math.random, with no warning about a random source', () => {
    const warnings = captureWarnings();
    const h = engineCall(config, { interceptor: { random: undefined } });
    h.attempt(0).fail();
    const [scheduled] = eventsOfType(h.events, 'retry-scheduled');
    // initialBackoff 0.1 s, A6 jitter: 0.8 to 1.2 times it.
    expect(scheduled?.delayMs).toBeGreaterThanOrEqual(80);
    expect(scheduled?.delayMs).toBeLessThanOrEqual(120);
    expect(warnings).toEqual([]);
  });
});

describe('onEvent listeners', () => {
  const event = { type: 'call-end' } as unknown as RetryEvent;

  it('an array of the interceptor is called in order, each listener once', () => {
    const heard: string[] = [];
    const { onEvent } = resolveInterceptorOptions({
      onEvent: [() => heard.push('first'), () => heard.push('second'), () => heard.push('third')],
    });
    onEvent?.(event);
    expect(heard).toEqual(['first', 'second', 'third']);
  });

  it('an empty array is no listener at all (the engine then builds no events)', () => {
    expect(resolveInterceptorOptions({ onEvent: [] }).onEvent).toBeUndefined();
    expect(listenerOf([], 'options.onEvent')).toBeUndefined();
  });

  it("a call's array of listeners all hear the call's events, with no interceptor listener", () => {
    const first: string[] = [];
    const second: string[] = [];
    const callOptions = withRetryOptions({
      onEvent: [(e: RetryEvent) => first.push(e.type), (e: RetryEvent) => second.push(e.type)],
    });
    const h = engineCall(config, { unobserved: true, callOptions: callOptions as Record<string, unknown> });
    h.attempt(0).fail();
    h.clock.runNext();
    h.attempt(1).succeed();
    expect(first).toContain('retry-scheduled');
    expect(first).toContain('call-end');
    expect(second).toEqual(first);
  });

  it("the interceptor's listener hears each event before the call's own", () => {
    const heard: string[] = [];
    const callOptions = withRetryOptions({ onEvent: (e: RetryEvent) => heard.push(`call ${e.type}`) });
    const h = engineCall(config, {
      interceptor: { onEvent: (e) => heard.push(`interceptor ${e.type}`) },
      callOptions: callOptions as Record<string, unknown>,
    });
    h.attempt(0).succeed();
    expect(heard.length).toBeGreaterThan(0);
    expect(heard).toEqual(h.events.flatMap((e) => [`interceptor ${e.type}`, `call ${e.type}`]));
  });

  it('a listener that throws is named in the warning, and the call goes on', () => {
    const warnings = captureWarnings();
    const callOptions = withRetryOptions({
      onEvent: () => {
        throw new Error('listener broke');
      },
    });
    const h = engineCall(config, { unobserved: true, callOptions: callOptions as Record<string, unknown> });
    h.attempt(0).succeed();
    expect(h.status.code).toBe(0);
    expect(warnings).toEqual([
      {
        message:
          'grpc-retry-hedging: the onEvent listener threw (listener broke); the call goes on, and further errors from this listener are not reported',
        code: 'GRPC_RETRY_HEDGING_LISTENER_ERROR',
      },
    ]);
  });
});

describe("a clock left undefined in adaptiveHedging or cancelRateLimit options is the interceptor's", () => {
  it("adaptive hedging's budget counts time on the interceptor's clock", () => {
    const clock = new FakeClock(T0);
    const { adaptiveHedging } = resolveInterceptorOptions({
      clock,
      adaptiveHedging: { clock: undefined, maxExtraLoad: 0.5, budget: { minPerSecond: 0, chanceSd: 0 } },
    });
    const budget = adaptiveHedging.perTarget?.for('dns:a:1').budget;
    budget?.recordCall();
    budget?.recordCall();
    expect(budget?.tokens).toBe(1);
    // The deposits expire after the budget's ttl (10 s) on the interceptor's clock, as with the key left out.
    clock.advance(11_000);
    expect(budget?.tokens).toBe(0);
  });

  it("the cancel-rate limit refills on the interceptor's clock", () => {
    const clock = new FakeClock(T0);
    const { cancelLimits } = resolveInterceptorOptions({
      clock,
      cancelRateLimit: { clock: undefined, burst: 1, ratePerSecond: 1 },
    });
    const limiter = cancelLimits?.forTarget('dns:a:1');
    expect(limiter?.tryCancel()).toBe(true);
    expect(limiter?.tryCancel()).toBe(false);
    clock.advance(1_000);
    expect(limiter?.tryCancel()).toBe(true);
  });
});
