import { describe, expect, it } from 'vitest';
import { AdaptiveHedging } from '../../src/hedging/adaptive-hedging-delay.js';
import { withRetryOptions } from '../../src/retry/call-options.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  depositsOnlyHedging,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  METHOD,
  Status,
  T0,
} from '../helpers/engine.js';

/** Teaches `adaptive` a 20 ms delay for METHOD: one call answered in 20 ms, one whose hedge won. */
function teach20ms(clock: FakeClock, adaptive: AdaptiveHedging, config: object): void {
  const first = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
  clock.advance(20);
  first.attempt(0).succeed();
  const second = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
  clock.advance(501);
  second.attempt(1).succeed();
  expect(adaptive.delayOf(METHOD)).toBe(20);
}

/** A call of `config` given a hedging policy of its own (`withRetryOptions`), whose hedgingDelay is 100 ms. */
function callWith100msPolicy(clock: FakeClock, adaptive: AdaptiveHedging, config: object) {
  const perCall = withRetryOptions({ policy: { hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.1s' } } });
  return engineCall(config, {
    clock,
    interceptor: { adaptiveHedging: adaptive },
    callOptions: perCall as Record<string, unknown>,
  });
}

describe('engine: a hedging policy given with the call, under adaptive hedging', () => {
  it('keeps its own hedgingDelay rather than the learned one, and is not learned from', () => {
    const clock = new FakeClock(T0);
    const adaptive = new AdaptiveHedging({ clock, budget: false, maxExtraLoad: 0.5 });
    const config = hedgingPolicy({ hedgingDelay: '0.5s', maxAttempts: 2 });
    teach20ms(clock, adaptive, config);
    const learned = adaptive.latencies(METHOD)?.count;
    const h = callWith100msPolicy(clock, adaptive, config);
    expect(eventsOfType(h.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 100,
      reason: 'hedging-delay',
    });
    clock.advance(99);
    expect(h.attempts).toHaveLength(1);
    clock.advance(1);
    expect(h.attempts).toHaveLength(2);
    // The hedge wins at 300 ms: learned from, this outcome would say the first attempt outlived a 100 ms delay.
    clock.advance(200);
    h.attempt(1).succeed();
    expect(h.status.code).toBe(Status.OK);
    expect(adaptive.latencies(METHOD)?.count).toBe(learned);
    expect(adaptive.delayOf(METHOD)).toBe(20);
    // The config's calls go on with the learned delay.
    const next = engineCall(config, { clock, interceptor: { adaptiveHedging: adaptive } });
    expect(eventsOfType(next.events, 'hedge-scheduled')[0]).toMatchObject({
      delayMs: 20,
      reason: 'adaptive-delay',
    });
  });

  it('is still held to the hedge budget', () => {
    const clock = new FakeClock(T0);
    const adaptive = depositsOnlyHedging(clock); // one call's half a hedge: the budget cannot pay for one
    const config = hedgingPolicy({ hedgingDelay: '0.5s', maxAttempts: 2 });
    const h = callWith100msPolicy(clock, adaptive, config);
    clock.advance(100);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'throttled')).toEqual([
      expect.objectContaining({ kind: 'hedge', gate: 'hedge-budget', attempt: 2 }),
    ]);
    h.attempt(0).succeed();
    expect(h.status.code).toBe(Status.OK);
  });
});
