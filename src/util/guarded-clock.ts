/**
 * An application's clock as the retry engine calls it: from inside grpc-js callbacks and timers, where an exception
 * would escape as an uncaught one and take the process down (or, caught by grpc-js, leave the call without a
 * status). Like the random source (src/util/guarded-random.ts), a clock that throws or reads no time is reported once
 * per method as a process warning (`GRPC_RETRY_HEDGING_HOOK_ERROR`), and the call goes on with the safe reading:
 * `now()` keeps its last good reading (time stands still rather than jumping to another scale), and a timer the
 * clock cannot set is set on Node's timers, so every call still ends.
 * @internal
 */

import { type Clock, systemClock, type TimerHandle } from '../shared/clock.js';
import { hookReporter, thrownMessage } from './guarded-random.js';
import { checkClock, checkNowSource, describeValue, readClockNow } from './option-checks.js';

/** A timer set on Node's timers because the application's clock could not set it. */
class FallbackTimer {
  constructor(readonly handle: TimerHandle) {}
}

/**
 * Kept on `globalThis` under a registered symbol, so that the ESM and CJS copies of the package (both may be loaded)
 * give one clock one guard.
 */
const SHARED_GUARDS = Symbol.for('grpc-retry-hedging.clock-guards');
const processWide = globalThis as {
  [SHARED_GUARDS]?: { readonly guarded: WeakMap<Clock, Clock>; readonly guards: WeakSet<object> };
};
processWide[SHARED_GUARDS] ??= { guarded: new WeakMap(), guards: new WeakSet() };

/**
 * The guarded form of each clock, so that interceptors given one clock get one guarded clock: what is shared per
 * clock (the cancel limiters of the connections, src/hedging/connection-cancel-limiters.ts) stays shared.
 */
const guarded = processWide[SHARED_GUARDS].guarded;

/** Every guard made here: a guard handed in again (a class passing its clock to another) is not wrapped twice. */
const guards = processWide[SHARED_GUARDS].guards;

/**
 * The clock option `name` of `path`, checked (its shape and one reading, src/util/option-checks.ts) and guarded, or
 * undefined when left out. For the options of everything whose clock grpc-js callbacks and timers reach.
 */
export function guardedClockOption(path: string, name: string, value: unknown): Clock | undefined {
  const clock = checkClock(path, name, value);
  return clock === undefined ? undefined : guardedClock(clock, readClockNow(path, name, clock), path);
}

/** As {@link guardedClockOption}, for a time source of which only `now()` is used. */
export function guardedNowSourceOption(
  path: string,
  name: string,
  value: unknown,
): Pick<Clock, 'now'> | undefined {
  const source = checkNowSource(path, name, value);
  return source === undefined ? undefined : guardedNowSource(source, readClockNow(path, name, source), path);
}

/**
 * `clock`, never throwing; the same object for the same clock, and a guard made here as it is. `firstReading` is a
 * good `now()` taken when the option was checked.
 * @param path The options it came from, for the warning.
 */
export function guardedClock(clock: Clock, firstReading: number, path: string): Clock {
  // The system clock needs no guard, and stays itself: what is shared per clock finds it (each build of the package,
  // ESM and CJS, has its own, which src/hedging/connection-cancel-limiters.ts takes for one).
  if (guards.has(clock) || clock === systemClock) {
    return clock;
  }
  let wrapped = guarded.get(clock);
  if (wrapped === undefined) {
    wrapped = guard(clock, firstReading, path);
    guarded.set(clock, wrapped);
    guards.add(wrapped);
  }
  return wrapped;
}

/**
 * A time source that has only `now()` (an adaptive throttle's), never throwing: a throw or a reading that is no
 * finite number gives the last good reading, reported once as a process warning. `firstReading` is a good `now()`
 * taken when the option was checked.
 * @param path The options it came from, for the warning.
 */
export function guardedNowSource(
  source: Pick<Clock, 'now'>,
  firstReading: number,
  path: string,
): Pick<Clock, 'now'> {
  if (guards.has(source)) {
    return source;
  }
  const wrapped = { now: nowGuard(source, firstReading, path, hookReporter()) };
  guards.add(wrapped);
  return wrapped;
}

function nowGuard(
  source: Pick<Clock, 'now'>,
  firstReading: number,
  path: string,
  report: (key: string, message: string) => void,
): () => number {
  let lastReading = firstReading;
  return () => {
    let value: unknown;
    try {
      value = source.now();
    } catch (error) {
      report('now', `${path}.clock.now threw (${thrownMessage(error)}); its last reading is used instead`);
      return lastReading;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      report(
        'now',
        `${path}.clock.now must return a finite number of ms, got ${describeValue(value)}; its last reading is used instead`,
      );
      return lastReading;
    }
    lastReading = value;
    return value;
  };
}

function guard(clock: Clock, firstReading: number, path: string): Clock {
  const report = hookReporter();
  const now = nowGuard(clock, firstReading, path, report);
  return {
    get resolutionMs() {
      return clock.resolutionMs;
    },
    now,
    setTimer(callback: () => void, delayMs: number): TimerHandle {
      try {
        return clock.setTimer(callback, delayMs);
      } catch (error) {
        report(
          'setTimer',
          `${path}.clock.setTimer threw (${thrownMessage(error)}); the timer is set on Node's timers instead`,
        );
        return new FallbackTimer(systemClock.setTimer(callback, delayMs));
      }
    },
    clearTimer(handle: TimerHandle): void {
      if (handle instanceof FallbackTimer) {
        systemClock.clearTimer(handle.handle);
        return;
      }
      try {
        clock.clearTimer(handle);
      } catch (error) {
        report(
          'clearTimer',
          `${path}.clock.clearTimer threw (${thrownMessage(error)}); the timer may still fire`,
        );
      }
    },
  };
}
