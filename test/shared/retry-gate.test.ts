/**
 * What the interceptor's `gate` option takes: any object with the retry gate's methods, whichever build (ESM or
 * CJS) or library made it. The option's own error messages are tested with the other option checks.
 */
import { describe, expect, it } from 'vitest';
import { isRetryGate } from '../../src/shared/retry-gate.js';

const allowAttempt = () => true;
const recordFailure = () => undefined;
const recordSuccess = () => undefined;

describe('isRetryGate', () => {
  it('takes an object with allowAttempt, recordFailure and recordSuccess, and recordCall if it has one', () => {
    expect(isRetryGate({ allowAttempt, recordFailure, recordSuccess })).toBe(true);
    expect(isRetryGate({ allowAttempt, recordFailure, recordSuccess, recordCall: () => undefined })).toBe(
      true,
    );
    expect(isRetryGate({ allowAttempt, recordFailure, recordSuccess, recordCall: undefined })).toBe(true);
    class Breaker {
      allowAttempt() {
        return false;
      }
      recordFailure() {}
      recordSuccess() {}
    }
    expect(isRetryGate(new Breaker())).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a function', Object.assign(() => true, { allowAttempt, recordFailure, recordSuccess })],
    ['a string', 'retry-throttle'],
    ['no allowAttempt', { recordFailure, recordSuccess }],
    ['no recordFailure', { allowAttempt, recordSuccess }],
    ['no recordSuccess', { allowAttempt, recordFailure }],
    ['allowAttempt a boolean', { allowAttempt: true, recordFailure, recordSuccess }],
    ['recordCall not a function', { allowAttempt, recordFailure, recordSuccess, recordCall: 1 }],
  ])('refuses %s', (_name, value) => {
    expect(isRetryGate(value)).toBe(false);
  });
});
