/**
 * The application's own gate and random source never throw into grpc-js: a gate that throws refuses the attempt, a
 * random source that throws or leaves [0, 1) gives way to Math.random, each reported once as a warning. Before, the
 * exception escaped from a grpc-js callback or timer, the call never ended and the process exited.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { guardedGate, guardedRandom } from '../../src/retry/guarded-hooks.js';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { engineCall, eventsOfType, retryPolicy, Status } from '../helpers/engine.js';

function warnings(spy: { mock: { calls: readonly (readonly unknown[])[] } }): string[] {
  return spy.mock.calls
    .filter((call) => (call[1] as { code?: string } | undefined)?.code === 'GRPC_RETRY_HEDGING_HOOK_ERROR')
    .map((call) => String(call[0]));
}

function throwingGate(): RetryGate {
  return {
    allowAttempt: () => {
      throw new Error('gate store offline');
    },
    recordFailure: () => {
      throw new Error('cannot record');
    },
    recordSuccess: () => {},
  };
}

describe('the application’s gate and random source, guarded', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a gate whose allowAttempt throws refuses the retry: the call ends with its failure, warned once', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const gate = throwingGate();
    for (let call = 0; call < 2; call++) {
      const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
        interceptor: { gate },
      });
      h.attempt(0).status(Status.UNAVAILABLE, 'backend down');
      expect(h.attempts).toHaveLength(1);
      expect(h.status.code).toBe(Status.UNAVAILABLE);
      expect(h.status.details).toBe('backend down');
      expect(eventsOfType(h.events, 'call-end')[0]?.reason).toBe('throttled');
    }
    // One warning per hook of this gate (one interceptor per engineCall here: the first reports each).
    expect(
      warnings(warn).some((w) => w.includes('options.gate.allowAttempt threw (gate store offline)')),
    ).toBe(true);
    expect(warnings(warn).some((w) => w.includes('options.gate.recordFailure threw (cannot record)'))).toBe(
      true,
    );
  });

  it('a random source that throws or leaves [0, 1): the backoff is drawn from Math.random, warned once', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    for (const random of [
      () => Number.NaN,
      () => 2,
      () => -0.5,
      () => {
        throw new Error('no entropy');
      },
    ]) {
      const h = engineCall(retryPolicy({ initialBackoff: '1s', maxBackoff: '1s' }), {
        interceptor: { random },
      });
      h.attempt(0).status(Status.UNAVAILABLE);
      const scheduled = eventsOfType(h.events, 'retry-scheduled')[0];
      expect(scheduled?.delayMs).toBeGreaterThanOrEqual(800);
      expect(scheduled?.delayMs).toBeLessThanOrEqual(1200);
      h.clock.runNext();
      expect(h.attempts).toHaveLength(2);
    }
    expect(warnings(warn)).toHaveLength(4);
    expect(warnings(warn)[0]).toContain('options.random must return a number in [0, 1), got NaN');
    expect(warnings(warn)[3]).toContain('options.random threw (no entropy)');
  });

  it('a thrown value that cannot be turned into text does not escape either', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const unprintable = Object.create(null) as object;
    const gate = guardedGate({
      allowAttempt: () => {
        throw unprintable;
      },
      recordFailure() {},
      recordSuccess() {},
    });
    expect(gate.allowAttempt('retry')).toBe(false);
    const random = guardedRandom(() => {
      throw {
        toString() {
          throw new Error('boom');
        },
      };
    });
    expect(random()).toBeLessThan(1);
    expect(warnings(warn).map((w) => w.includes('a value that cannot be shown'))).toEqual([true, true]);
  });

  it('guardedRandom passes a good draw through and warns once for many bad ones', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    expect(guardedRandom(() => 0.25)()).toBe(0.25);
    expect(guardedRandom(() => 0)()).toBe(0);
    const bad = guardedRandom(() => 1);
    for (let i = 0; i < 5; i++) {
      const value = bad();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
    expect(warnings(warn)).toHaveLength(1);
  });

  it('guardedGate passes verdicts and reads through, and refuses a verdict that is not a boolean', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const calls: string[] = [];
    const gate = guardedGate({
      allowAttempt: (kind) => kind === 'retry',
      recordFailure: () => calls.push('failure'),
      recordSuccess: () => calls.push('success'),
      recordCall: () => calls.push('call'),
      name: 'mine',
      tokens: 3,
    });
    expect(gate.allowAttempt('retry')).toBe(true);
    expect(gate.allowAttempt('hedge')).toBe(false);
    gate.recordFailure();
    gate.recordSuccess();
    gate.recordCall?.();
    expect(calls).toEqual(['failure', 'success', 'call']);
    expect([gate.name, gate.tokens]).toEqual(['mine', 3]);
    expect(guardedGate({ allowAttempt: () => true, recordFailure() {}, recordSuccess() {} }).recordCall).toBe(
      undefined,
    );
    const sloppy = guardedGate({
      allowAttempt: () => 1 as unknown as boolean,
      recordFailure() {},
      recordSuccess() {},
    });
    expect(sloppy.allowAttempt('retry')).toBe(false);
    expect(warnings(warn)[0]).toContain('options.gate.allowAttempt must return true or false, got 1');
  });

  it.each<[string, unknown, unknown]>([
    ['text', '3', 7],
    ['NaN', Number.NaN, null],
    ['Infinity', Number.POSITIVE_INFINITY, {}],
    ['an object', { left: 3 }, ['g']],
  ])(
    'a gate whose tokens read %s (and whose name is no string) leaves them out of the throttled event, warned once',
    (_what, tokens, name) => {
      // The value went into the event as it was: "3" in a field typed as a number, a name of 7.
      const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
      const gate: RetryGate = {
        allowAttempt: () => false,
        recordFailure() {},
        recordSuccess() {},
        get tokens() {
          return tokens as number;
        },
        get name() {
          return name as string;
        },
      };
      const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
        interceptor: { gate },
      });
      h.attempt(0).status(Status.UNAVAILABLE, 'backend down');
      h.attempt(0).status(Status.UNAVAILABLE, 'backend down');
      const [throttled] = eventsOfType(h.events, 'throttled');
      expect(throttled?.tokens).toBeNaN();
      expect(throttled?.gate).toBe('gate');
      expect(h.status.code).toBe(Status.UNAVAILABLE);
      const told = warnings(warn);
      expect(told.filter((w) => w.includes('options.gate.tokens must be a finite number'))).toEqual([
        expect.stringContaining('the event leaves it out'),
      ]);
      expect(told.filter((w) => w.includes('options.gate.name must be a string'))).toEqual([
        expect.stringContaining('the event leaves it out'),
      ]);
    },
  );

  it('a gate with no name or tokens (both optional) is not warned about, and the throttled event says gate and NaN', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const gate: RetryGate = { allowAttempt: () => false, recordFailure() {}, recordSuccess() {} };
    const h = engineCall(retryPolicy({ initialBackoff: '0.01s', maxBackoff: '0.01s' }), {
      interceptor: { gate },
    });
    h.attempt(0).status(Status.UNAVAILABLE, 'backend down');
    const [throttled] = eventsOfType(h.events, 'throttled');
    expect(throttled?.gate).toBe('gate');
    expect(throttled?.tokens).toBeNaN();
    expect(h.status.code).toBe(Status.UNAVAILABLE);
    expect(warnings(warn)).toEqual([]);
  });
});
