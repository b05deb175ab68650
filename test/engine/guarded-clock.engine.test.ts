/**
 * An injected clock is called from grpc-js callbacks and timers: one that throws, or reads no time, must not take
 * the process down or leave a call without its status. It is reported once per method (GRPC_RETRY_HEDGING_HOOK_ERROR)
 * and the call goes on with the safe reading; a clock that reads no time at all is refused at construction.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import type { Clock } from '../../src/shared/clock.js';
import { FakeClock } from '../../src/testing/fake-clock.js';
import { guardedClock } from '../../src/util/guarded-clock.js';
import { engineCall, retryPolicy, Status, T0 } from '../helpers/engine.js';
import { captureWarnings } from '../helpers/warnings.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A FakeClock whose methods can be made to misbehave. */
function brokenClock(fake: FakeClock, broken: Partial<Clock>): Clock {
  return {
    now: () => fake.now(),
    setTimer: (callback, delayMs) => fake.setTimer(callback, delayMs),
    clearTimer: (handle) => fake.clearTimer(handle),
    ...broken,
  };
}

describe('an injected clock that throws', () => {
  it('setTimer: the backoff runs on Node timers, the retry goes, and the call ends with its status', async () => {
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    const clock = brokenClock(fake, {
      setTimer: () => {
        throw new Error('no timers here');
      },
    });
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      clock: fake,
      interceptor: { clock },
    });
    // Before the guard, this threw out of the attempt's status callback (grpc-js's onReceiveStatus).
    expect(() => h.attempt(0).fail()).not.toThrow();
    await vi.waitFor(() => expect(h.attempts).toHaveLength(2), { timeout: 2000, interval: 5 });
    h.attempt(1).succeed('done');
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(h.received.messages).toEqual(['done']);
    expect(warnings.map((w) => [w.code, w.message])).toEqual([
      [
        'GRPC_RETRY_HEDGING_HOOK_ERROR',
        "grpc-retry-hedging: createRetryInterceptor: options.clock.setTimer threw (no timers here); the timer is set on Node's timers instead; further errors of it are not reported",
      ],
    ]);
  });

  it('now: its last good reading stands, and the call still ends', async () => {
    const warnings = captureWarnings();
    const fake = new FakeClock(T0);
    let broken = false;
    const clock = brokenClock(fake, {
      now: () => {
        if (broken) throw new Error('clock gone');
        return fake.now();
      },
    });
    const h = engineCall(retryPolicy(), { clock: fake, interceptor: { clock } });
    broken = true;
    expect(() => h.attempt(0).fail()).not.toThrow();
    fake.advance(1000);
    expect(h.attempts).toHaveLength(2);
    h.attempt(1).succeed();
    await h.settle();
    expect(h.status.code).toBe(Status.OK);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('options.clock.now threw (clock gone); its last reading is used instead'),
    ]);
  });
});

describe('guardedClock', () => {
  it('keeps the last good reading for a throw or a value that is no time, and reports each method once', () => {
    const warnings = captureWarnings();
    const readings: unknown[] = [5, Number.NaN, '7', 9];
    const clock = guardedClock(
      brokenClock(new FakeClock(), { now: () => readings.shift() as number }),
      1,
      'here',
    );
    expect([clock.now(), clock.now(), clock.now(), clock.now()]).toEqual([5, 5, 5, 9]);
    expect(warnings.map((w) => w.message)).toEqual([
      'grpc-retry-hedging: here.clock.now must return a finite number of ms, got NaN; its last reading is used instead; further errors of it are not reported',
    ]);
  });

  it('clears a fallback timer on Node timers, and survives a clearTimer that throws', async () => {
    captureWarnings();
    const clock = guardedClock(
      brokenClock(new FakeClock(), {
        setTimer: () => {
          throw new Error('x');
        },
        clearTimer: () => {
          throw new Error('y');
        },
      }),
      0,
      'here',
    );
    const fired: string[] = [];
    const cleared = clock.setTimer(() => fired.push('cleared'), 5);
    clock.setTimer(() => fired.push('kept'), 5);
    clock.clearTimer(cleared);
    expect(() => clock.clearTimer({})).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(fired).toEqual(['kept']);
  });

  it('passes resolutionMs through', () => {
    expect(guardedClock(new FakeClock(0, 2), 0, 'here').resolutionMs).toBe(2);
  });
});

describe('a clock that reads no time', () => {
  it('is refused when the interceptor is created', () => {
    const config = retryPolicy();
    const fake = new FakeClock();
    for (const [now, got] of [
      [() => Number.NaN, 'got NaN'],
      [() => '1', 'got "1"'],
    ] as const) {
      expect(() =>
        createRetryInterceptor(config, { clock: brokenClock(fake, { now: now as () => number }) }),
      ).toThrow(
        `createRetryInterceptor: options.clock.now() must return a finite number of ms (since the epoch, as Date.now() does; a FakeClock's own time under test), ${got}`,
      );
    }
    expect(() =>
      createRetryInterceptor(config, {
        clock: brokenClock(fake, {
          now: () => {
            throw new Error('no time');
          },
        }),
      }),
    ).toThrow('createRetryInterceptor: options.clock.now() threw when read: no time');
  });

  it('gives no reading that is not a number as the last good one, from its first reading on', () => {
    // Its first reading is good, every later one NaN: each reading the guard takes when the interceptor is made is
    // checked, so the call never starts from a NaN "last good reading".
    let reads = 0;
    const fake = new FakeClock(1000);
    const clock = brokenClock(fake, { now: () => (++reads === 1 ? fake.now() : Number.NaN) });
    expect(() => createRetryInterceptor(retryPolicy(), { clock })).toThrow(
      /^createRetryInterceptor: options\.clock\.now\(\) must return a finite number of ms .*got NaN$/,
    );
  });
});
