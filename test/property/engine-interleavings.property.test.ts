import { it } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { RetryEvent } from '../../src/retry/events.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import {
  depositsOnlyHedging,
  type EngineCall,
  engineCall,
  eventsOfType,
  hedgingPolicy,
  retryPolicy,
  Status,
  T0,
} from '../helpers/engine.js';
import { runScenario, type Scenario, scenarioArb, violations } from './engine-steps.js';
import { propertyParams, propertyTimeout } from './fuzz-params.js';

// Property 3: the engine under random interleavings of the application's writes, half-close, reads and cancel, the
// attempts' headers, messages and statuses (with pushback, valid or not), write completions, time passing, the
// deadline, re-entrant listeners and requests changed after their write callback (also from a listener, during a
// backoff or a hedge's wait); and, per run, a gate (A6's RetryThrottle, a RetryBudget, one that throws or answers
// a non-boolean), adaptive hedging (with or without its budget), RetryInfo hints, a per-call policy or retries off
// for the call, deadline-aware backoff, a jitter strategy, maxAttemptsLimit, and a channel that refuses an
// attempt. Whatever the order, the call
// keeps the rules docs/configuration.md and docs/observability.md promise (see `violations` in ./engine-steps.ts).

async function holds(scenario: Scenario): Promise<void> {
  const r = await runScenario(scenario);
  const broken = violations(r);
  expect(broken, broken.join('\n')).toEqual([]);
}

describe('property 3: the engine keeps its invariants under random interleavings', () => {
  const name = 'engine interleavings';
  it.prop([scenarioArb], propertyParams<[Scenario]>(name, 3000))(name, holds, propertyTimeout(60_000));
});

describe('counterexamples the property found', () => {
  // Found by the property: RetryingCall.commitMostAdvanced committed to an attempt that did not exist while the
  // call was in flight with none live (inside the failed attempt's `attempt-end` listener, before the decision),
  // and the call never ended.
  it('a write that overflows the buffer from the failed attempt`s attempt-end listener: the call ends with that failure', async () => {
    let h: EngineCall | undefined;
    const thrown: unknown[] = [];
    let callbacks = 0;
    const onEvent = (e: RetryEvent): void => {
      if (e.type === 'attempt-end' && h) {
        try {
          h.call.sendMessageWithContext({ callback: () => (callbacks += 1) }, Buffer.alloc(12, 1));
        } catch (error) {
          thrown.push(error);
        }
      }
    };
    h = engineCall(retryPolicy({ maxAttempts: 2 }), {
      type: 'client-stream',
      start: false,
      interceptor: { perRpcBufferBytes: 60, cancelRateLimit: false, onEvent },
    });
    h.start();
    h.attempt(0).fail(Status.INTERNAL);
    await h.settle();
    expect(thrown).toEqual([]);
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status.code).toBe(Status.INTERNAL);
    expect(callbacks).toBe(1);
  });
  it('a write that overflows the buffer from a retry-scheduled listener: no retry, the call ends with the failure', async () => {
    let h: EngineCall | undefined;
    let callbacks = 0;
    const onEvent = (e: RetryEvent): void => {
      if (e.type === 'retry-scheduled' && h) {
        h.call.sendMessageWithContext({ callback: () => (callbacks += 1) }, Buffer.alloc(12, 1));
      }
    };
    h = engineCall(retryPolicy({ maxAttempts: 3 }), {
      type: 'client-stream',
      start: false,
      interceptor: { perRpcBufferBytes: 60, cancelRateLimit: false, onEvent },
    });
    h.start();
    h.attempt(0).fail(Status.UNAVAILABLE);
    while (h.clock.runNext()) {}
    await h.settle();
    expect(h.received.statuses).toHaveLength(1);
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(h.attempts).toHaveLength(1);
    expect(eventsOfType(h.events, 'call-end')).toEqual([
      expect.objectContaining({ attempts: 1, reason: 'replay-buffer' }),
    ]);
    expect(callbacks).toBe(1);
  });

  // Found by the property: with a hedgingDelay of "0s" and no delay learned yet, a hedge the budget refused was
  // asked for again after 0 ms, and again, at one instant for as long as the call lasted.
  it('adaptive hedging, hedgingDelay 0s, a refusing hedge budget: asking it again does not spin at one instant', async () => {
    const clock = new FakeClock(T0);
    const h = engineCall(hedgingPolicy({ maxAttempts: 2, hedgingDelay: '0s' }), {
      clock,
      interceptor: { adaptiveHedging: depositsOnlyHedging(clock), cancelRateLimit: false },
    });
    // Every timer set from now on counts its firings, and stops the spin at the 100th.
    let fired = 0;
    const setTimer = clock.setTimer.bind(clock);
    clock.setTimer = (callback, delayMs) =>
      setTimer(() => {
        fired += 1;
        if (fired < 100) callback();
      }, delayMs);
    clock.advance(0);
    expect(eventsOfType(h.events, 'throttled')).toHaveLength(1);
    expect(fired).toBeLessThan(100);
  });
  // Found by the property: the scheduler set its ask-again timer after a `throttled` listener had ended the call.
  it('a `throttled` listener that cancels when the hedge budget refuses: no timer is left after the call', async () => {
    const clock = new FakeClock(T0);
    let h: EngineCall | undefined;
    h = engineCall(hedgingPolicy({ maxAttempts: 2, hedgingDelay: '0.05s' }), {
      clock,
      start: false,
      interceptor: {
        adaptiveHedging: depositsOnlyHedging(clock),
        cancelRateLimit: false,
        onEvent: (e) => {
          if (e.type === 'throttled') h?.call.cancelWithStatus(Status.CANCELLED, 'no');
        },
      },
    });
    h.start();
    clock.advance(50);
    await h.settle();
    expect(h.status.code).toBe(Status.CANCELLED);
    expect(clock.pendingTimers).toBe(0);
  });
});
