import { describe, expect, it } from 'vitest';
import { createRetryInterceptor } from '../../src/retry/retry-interceptor.js';
import { RetryThrottle } from '../../src/retry/retry-throttle.js';
import { RetryBudget } from '../../src/throttle/retry-budget.js';
import { RETRY_UNAVAILABLE_CONFIG } from '../helpers/service-configs.js';

const config = RETRY_UNAVAILABLE_CONFIG;
const withThrottle = (throttle: unknown) => () =>
  createRetryInterceptor(config, { throttle: throttle as never });
const NOT_A_GATE =
  /options\.throttle must be a retry gate \(an object with allowAttempt, recordFailure and recordSuccess/;
const fn = () => true;

describe('the throttle option takes any object shaped as a retry gate', () => {
  it('accepts the package gates and a plain object, with or without recordCall', () => {
    expect(withThrottle(new RetryThrottle({ maxTokens: 10, tokenRatio: 0.1 }))).not.toThrow();
    expect(withThrottle(new RetryBudget())).not.toThrow();
    expect(withThrottle({ allowAttempt: fn, recordFailure: fn, recordSuccess: fn })).not.toThrow();
    expect(
      withThrottle({ allowAttempt: fn, recordFailure: fn, recordSuccess: fn, recordCall: fn }),
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
    expect(withThrottle(throttle)).toThrow(NOT_A_GATE);
  });
});
