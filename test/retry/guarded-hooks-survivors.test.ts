/**
 * Behaviour of the guarded gate and random source that mutation testing (stryker, src/retry/guarded-hooks.ts)
 * found no test pinned down: a throwing `name`/`tokens` read is warned about by name, each hook is warned about
 * once whichever way it fails, a record method the gate no longer has is skipped silently, and a random source
 * that returns something other than a number gives way to Math.random.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { guardedGate, guardedRandom } from '../../src/retry/guarded-hooks.js';
import type { RetryGate } from '../../src/shared/retry-gate.js';
import { type CapturedWarning, captureWarnings } from '../helpers/warnings.js';

const CODE = 'GRPC_RETRY_HEDGING_HOOK_ERROR';

function hookWarnings(warnings: readonly CapturedWarning[]): string[] {
  return warnings.filter((w) => w.code === CODE).map((w) => w.message);
}

describe('guardedGate', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a name or tokens read that throws is left out, warned once each, naming the property', () => {
    const warnings = captureWarnings();
    const gate = guardedGate({
      allowAttempt: () => true,
      recordFailure() {},
      recordSuccess() {},
      get name(): string {
        throw new Error('no name today');
      },
      get tokens(): number {
        throw new Error('bucket gone');
      },
    });
    expect(gate.name).toBeUndefined();
    expect(gate.tokens).toBeUndefined();
    expect(gate.name).toBeUndefined();
    expect(gate.tokens).toBeUndefined();
    expect(hookWarnings(warnings)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.gate.name threw (no name today); the event leaves it out; further errors of it are not reported',
      'grpc-retry-hedging: createRetryInterceptor: options.gate.tokens threw (bucket gone); the event leaves it out; further errors of it are not reported',
    ]);
  });

  it('allowAttempt is one hook: a throw and then a non-boolean verdict are warned about once', () => {
    const warnings = captureWarnings();
    let calls = 0;
    const gate = guardedGate({
      allowAttempt: () => {
        calls++;
        if (calls === 1) {
          throw new Error('store offline');
        }
        return 'yes' as unknown as boolean;
      },
      recordFailure() {},
      recordSuccess() {},
    });
    expect(gate.allowAttempt('retry')).toBe(false);
    expect(gate.allowAttempt('retry')).toBe(false);
    expect(hookWarnings(warnings)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.gate.allowAttempt threw (store offline); the attempt is refused; further errors of it are not reported',
    ]);
  });

  it('allowAttempt is one hook the other way round too: a non-boolean verdict and then a throw', () => {
    const warnings = captureWarnings();
    let calls = 0;
    const gate = guardedGate({
      allowAttempt: () => {
        calls++;
        if (calls === 1) {
          return undefined as unknown as boolean;
        }
        throw new Error('store offline');
      },
      recordFailure() {},
      recordSuccess() {},
    });
    expect(gate.allowAttempt('hedge')).toBe(false);
    expect(gate.allowAttempt('hedge')).toBe(false);
    expect(hookWarnings(warnings)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.gate.allowAttempt must return true or false, got nothing; the attempt is refused; further errors of it are not reported',
    ]);
  });

  it('a record method the gate no longer has is skipped, without a warning', () => {
    const warnings = captureWarnings();
    const calls: string[] = [];
    const mine: Partial<RetryGate> & { allowAttempt: RetryGate['allowAttempt'] } = {
      allowAttempt: () => true,
      recordFailure: () => calls.push('failure'),
      recordSuccess: () => calls.push('success'),
      recordCall: () => calls.push('call'),
    };
    const gate = guardedGate(mine as RetryGate);
    gate.recordCall?.();
    delete mine.recordCall;
    delete mine.recordFailure;
    delete mine.recordSuccess;
    gate.recordCall?.();
    gate.recordFailure();
    gate.recordSuccess();
    expect(calls).toEqual(['call']);
    expect(hookWarnings(warnings)).toEqual([]);
  });
});

describe('guardedRandom', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a value that is not a number, even one that compares as in [0, 1), gives way to Math.random', () => {
    const warnings = captureWarnings();
    for (const bad of ['0.5', null, false, [0.5]]) {
      const random = guardedRandom(() => bad as unknown as number);
      const drawn = random();
      expect(typeof drawn).toBe('number');
      expect(drawn).toBeGreaterThanOrEqual(0);
      expect(drawn).toBeLessThan(1);
    }
    expect(hookWarnings(warnings)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.random must return a number in [0, 1), got "0.5"; Math.random is drawn instead; further errors of it are not reported',
      'grpc-retry-hedging: createRetryInterceptor: options.random must return a number in [0, 1), got null; Math.random is drawn instead; further errors of it are not reported',
      'grpc-retry-hedging: createRetryInterceptor: options.random must return a number in [0, 1), got false; Math.random is drawn instead; further errors of it are not reported',
      'grpc-retry-hedging: createRetryInterceptor: options.random must return a number in [0, 1), got [0.5]; Math.random is drawn instead; further errors of it are not reported',
    ]);
  });

  it('random is one hook: a throw and a bad value from the same source are warned about once', () => {
    const warnings = captureWarnings();
    let calls = 0;
    const throwsFirst = guardedRandom(() => {
      calls++;
      if (calls === 1) {
        throw new Error('no entropy');
      }
      return 2;
    });
    throwsFirst();
    throwsFirst();
    let otherCalls = 0;
    const badFirst = guardedRandom(() => {
      otherCalls++;
      if (otherCalls === 1) {
        return 2;
      }
      throw new Error('no entropy');
    });
    badFirst();
    badFirst();
    expect(hookWarnings(warnings)).toEqual([
      'grpc-retry-hedging: createRetryInterceptor: options.random threw (no entropy); Math.random is drawn instead; further errors of it are not reported',
      'grpc-retry-hedging: createRetryInterceptor: options.random must return a number in [0, 1), got 2; Math.random is drawn instead; further errors of it are not reported',
    ]);
  });
});
