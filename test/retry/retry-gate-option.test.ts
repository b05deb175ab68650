import { describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { RETRY_UNAVAILABLE_CONFIG } from '../helpers/service-configs.js';

const config = RETRY_UNAVAILABLE_CONFIG;
const withGate = (throttle: unknown) => () => createRetryInterceptor(config, { gate: throttle as never });
const NOT_A_GATE =
  /options\.gate must be a retry gate \(an object with allowAttempt, recordFailure and recordSuccess/;
const fn = () => true;

describe('the gate option takes any object shaped as a retry gate', () => {
  it('accepts the package gates and a plain object, with or without recordCall', () => {
    expect(withGate(new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 }))).not.toThrow();
    expect(withGate(new RetryBudget())).not.toThrow();
    expect(withGate({ allowAttempt: fn, recordFailure: fn, recordSuccess: fn })).not.toThrow();
    expect(
      withGate({ allowAttempt: fn, recordFailure: fn, recordSuccess: fn, recordCall: fn }),
    ).not.toThrow();
  });

  it.each([
    ['null', null],
    ['a string', 'retry-throttle'],
    ['an object without allowAttempt', { recordFailure: fn, recordSuccess: fn }],
    ['an object without recordFailure', { allowAttempt: fn, recordSuccess: fn }],
    ['an object without recordSuccess', { allowAttempt: fn, recordFailure: fn }],
    ['an allowAttempt that is not a function', { allowAttempt: true, recordFailure: fn, recordSuccess: fn }],
    [
      'a recordCall that is not a function',
      { allowAttempt: fn, recordFailure: fn, recordSuccess: fn, recordCall: 1 },
    ],
  ])('rejects %s, saying what a gate is', (_name, throttle) => {
    expect(withGate(throttle)).toThrow(NOT_A_GATE);
  });
});
